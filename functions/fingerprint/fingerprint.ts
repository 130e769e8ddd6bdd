import { MIN_PDQ_QUALITY, turnedHashes, type PdqHash } from '../core/moderation/pdq-hash';
import { nextTurn } from '../core/turns';
import { innerPictures } from './inner-pictures';
import { cropWithin, type Margins } from './margins';
import { hashOf, pdqOf, wholeArea, type PdqArea, type PdqOutcome } from './pdq';
import {
  areaOf,
  insidePlainBorder,
  lumaPictureOf,
  onPage,
  stretched,
  type LumaPicture,
  type PdqPixels,
  type Plane,
} from './planes';
import { VIEWS, type Forms, type ViewName } from './views';

/**
 * A picture's fingerprint: the PDQ hashes of its views (`views.ts`), read from one luminance copy of it
 * (`planes.ts`), for an upload (what its record keeps, what it is compared by) and for a blocked picture (what the
 * block list adds). Pure arithmetic on pixels: the imaging makes the pixels (`FINGERPRINT_SIDE` a side at most).
 */

/** What stops the work once the upload's time is spent: `check` throws then. */
export interface Deadline {
  check(): void;
}

export interface Fingerprint {
  /** The hashes the record keeps (upright), of `MIN_PDQ_QUALITY` or more, each once; none when none says enough. */
  hashes: PdqHash[];
  /** The PDQ quality of the first of those (0 when none). */
  quality: number;
  /** What the upload is compared by: one batch a picture (a frame of an animation), each in a turn of its own. */
  queries: PdqHash[][];
}

/** Under this share of its picture's area, the picture inside a plain border is hashed without the whole one. */
const MOSTLY_BORDER = 0.5;

/** A view's hash, and whether it says enough of its picture. */
interface Hashed {
  view: ViewName;
  outcome: PdqOutcome;
}

const enough = (hashed: Hashed): boolean => hashed.outcome.quality >= MIN_PDQ_QUALITY;

/** The forms of a hash a side asks for: as it is, or turned and mirrored the eight ways. */
function formsOf(outcome: PdqOutcome, forms: Forms): PdqHash[] {
  if (forms === 'none') return [];
  return forms === 'turned' ? turnedHashes(outcome.coefficients) : [hashOf(outcome)];
}

/**
 * The fingerprint of an upload's pictures (one, or an animation's distinct frames), each hashed in turns of the event
 * loop of a few ms, the deadline checked between them; undefined when no view of any says enough. Without `compared`
 * (no picture is blocked, so nothing is compared) only the views the record keeps are made, and there are no queries.
 */
export async function fingerprintOf(
  pictures: readonly PdqPixels[],
  deadline: Deadline,
  { compared = true } = {},
): Promise<Fingerprint | undefined> {
  const hashes: PdqHash[] = [];
  const queries: PdqHash[][] = [];
  let quality = 0;
  for (const pixels of pictures) {
    const picture = await uploadViews(pixels, deadline, compared);
    if (!picture) continue;
    if (hashes.length === 0 && picture.kept.length > 0) quality = picture.kept[0]?.quality ?? 0;
    for (const { hash } of picture.kept) if (!hashes.includes(hash)) hashes.push(hash);
    if (compared) queries.push([...new Set(picture.queries)]);
  }
  const found = compared ? queries.length > 0 : hashes.length > 0;
  return found ? { hashes, quality, queries } : undefined;
}

/** Where a picture's crops and the pictures inside it are read: as a viewer sees it, inside its plain border. */
function viewedArea(planes: LumaPicture, pages: Plane[]): { plane: Plane; area: PdqArea } {
  const plane = pages[0] ?? planes.luma;
  return { plane, area: insidePlainBorder([plane]) ?? wholeArea(plane) };
}

/** The crops of the viewed area, and the pictures laid inside it, as areas of its plane. */
function cropAreas(viewed: { plane: Plane; area: PdqArea }, margins: readonly Margins[]): PdqArea[] {
  return margins.map((one) => cropWithin(viewed.area, one));
}

function innerAreas(viewed: { plane: Plane; area: PdqArea }): PdqArea[] {
  return innerPictures(areaOf(viewed.plane, viewed.area)).map((one) => cropWithin(viewed.area, one));
}

/**
 * One picture's views for an upload: the hashes its record keeps (with their qualities) and its queries. Its own
 * views first (the whole, inside its border, on pages); when none says enough, the washed-out copy alone; else its
 * crops and the pictures inside it too. Unless `compared`, its own views alone: the others are only compared.
 */
async function uploadViews(
  pixels: PdqPixels,
  deadline: Deadline,
  compared: boolean,
): Promise<{ kept: Array<{ hash: PdqHash; quality: number }>; queries: PdqHash[] } | undefined> {
  const planes = lumaPictureOf(pixels);
  const pages = planes.alpha ? [onPage(planes, 255), onPage(planes, 0)] : [];
  const border = insidePlainBorder(planes.alpha ? [planes.luma, planes.alpha] : [planes.luma]);
  // a picture in a small part of a plain page: the whole one's hash tells more of the page's layout than of it, and
  // came within reach of other pictures laid out alike (`docs/moderation.md`, "Pictures that hash poorly")
  const layout = border !== undefined && border.width * border.height < MOSTLY_BORDER * pixels.width * pixels.height;
  const [whole, inside] = pdqOf(planes.luma, [wholeArea(planes.luma), ...(border ? [border] : [])]);
  if (!whole) return undefined;
  const own: Hashed[] = [
    ...(layout ? [] : [{ view: 'whole' as const, outcome: whole }]),
    ...(inside ? [{ view: 'insideBorder' as const, outcome: inside }] : []),
    ...pages.flatMap((page) => pdqOf(page, [wholeArea(page)]).map((outcome) => ({ view: 'onPages' as const, outcome }))),
  ].filter(enough);
  await turn(deadline);
  const kept = own.map(({ outcome }) => ({ hash: hashOf(outcome), quality: outcome.quality }));
  if (!compared) return { kept, queries: [] };
  const queries = own.flatMap(({ view, outcome }) => formsOf(outcome, VIEWS[view].compared.forms));
  // a whole picture whose hash says too little of it (flat, or washed out on purpose): its stretched copy is compared
  const washed = whole.quality < MIN_PDQ_QUALITY ? stretched(planes.luma) : undefined;
  const washedOut = washed ? pdqOf(washed, [wholeArea(washed)]).filter((outcome) => outcome.quality >= MIN_PDQ_QUALITY) : [];
  queries.push(...comparedHashes(washedOut, 'washedOut'));
  if (own.length === 0) return washedOut.length > 0 ? { kept: [], queries } : undefined;
  const viewed = viewedArea(planes, pages);
  // the crops, then the lines of the pictures inside it, then those: each in a turn of its own
  const centred = cropAreas(viewed, VIEWS.centredCrops.compared.margins);
  const crops = pdqOf(viewed.plane, [...centred, ...cropAreas(viewed, VIEWS.sideCrops.compared.margins)]);
  queries.push(
    ...comparedHashes(crops.slice(0, centred.length), 'centredCrops'),
    ...comparedHashes(crops.slice(centred.length), 'sideCrops'),
  );
  await turn(deadline);
  const inner = innerAreas(viewed);
  await turn(deadline);
  queries.push(...comparedHashes(pdqOf(viewed.plane, inner), 'innerPictures'));
  await turn(deadline);
  return { kept, queries };
}

/** The hashes of a view's areas that say enough, as an upload's are compared. */
function comparedHashes(outcomes: readonly PdqOutcome[], view: ViewName): PdqHash[] {
  return outcomes
    .filter((outcome) => outcome.quality >= MIN_PDQ_QUALITY)
    .flatMap((one) => formsOf(one, VIEWS[view].compared.forms));
}

/**
 * The hashes a blocked picture adds to the block list besides its record's own (`VIEWS`' `blocked`), by view: its
 * crops, and with `inside` the pictures found inside it, read as a viewer sees it (on white, when it has
 * transparency), inside its plain border; each of `MIN_PDQ_QUALITY` or more, each once.
 */
export function blockedHashesOf(pixels: PdqPixels, { inside = false } = {}): Partial<Record<ViewName, PdqHash[]>> {
  const planes = lumaPictureOf(pixels);
  const viewed = viewedArea(planes, planes.alpha ? [onPage(planes, 255)] : []);
  const areas: Array<[ViewName, PdqArea[]]> = [
    ['centredCrops', cropAreas(viewed, VIEWS.centredCrops.blocked.margins)],
    ['sideCrops', cropAreas(viewed, VIEWS.sideCrops.blocked.margins)],
    ['twoSideCrops', cropAreas(viewed, VIEWS.twoSideCrops.blocked.margins)],
    ...(inside ? [['innerPictures', innerAreas(viewed)] as [ViewName, PdqArea[]]] : []),
  ];
  const seen = new Set<PdqHash>();
  const byView: Partial<Record<ViewName, PdqHash[]>> = {};
  for (const [view, list] of areas) {
    const outcomes = pdqOf(viewed.plane, list).filter((outcome) => outcome.quality >= MIN_PDQ_QUALITY);
    const fresh = outcomes.flatMap((outcome) => formsOf(outcome, VIEWS[view].blocked.forms)).filter((hash) => !seen.has(hash));
    for (const hash of fresh) seen.add(hash);
    byView[view] = [...new Set(fresh)];
  }
  return byView;
}

async function turn(deadline: Deadline): Promise<void> {
  await nextTurn();
  deadline.check();
}
