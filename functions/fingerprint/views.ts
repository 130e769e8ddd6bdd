import { MOST_INNER_PICTURES } from './inner-pictures';
import { centredMargins, eachSide, NO_MARGINS, type Margins } from './margins';

export { MOST_INNER_PICTURES } from './inner-pictures';

/**
 * The views of a picture that get hashed, in one table: for each, whether its hash is kept in the image's record,
 * how it joins the block list when the image is blocked, how an upload's is compared, and how many hashes each side
 * makes at most. What depends on it (an upload's query budget, the turns of the block list's check, the docs'
 * figures) is computed from it. Why each view is there, and what it catches: `docs/moderation.md`.
 *
 * The block list holds hashes; an upload is compared by its hashes against them, within the match distance. A view
 * kept upright on one side and turned the eight ways on the other meets a copy turned or mirrored (a crop turned
 * on the blocked side is met by the upload's crop as it is: 8 queries fewer per crop, for 8 hashes more per blocked
 * picture, once).
 */

/** Upright (as it is: one hash), turned (its eight turned and mirrored forms), or not at all. */
export type Forms = 'upright' | 'turned' | 'none';

export interface View {
  /** Kept in the image's record (upright): what a takedown blocks, `--similar` compares, `info` shows. */
  kept: boolean;
  /**
   * When a picture is blocked (a takedown with `--block`): its hashes of this view added to the block list; `asked`:
   * only when the operator asks for it (`--inside`).
   */
  blocked: { forms: Forms; margins?: readonly Margins[]; most: number; asked?: true };
  /** When a picture is uploaded: its hashes of this view compared with the block list. */
  compared: { forms: Forms; margins?: readonly Margins[]; most: number };
}

/** A crop of a blocked picture every 1.5% a side up to 10.5%: PDQ meets a crop within about 1.5% a side. */
const BLOCKED_SHARES = [0.015, 0.03, 0.045, 0.06, 0.075, 0.09, 0.105] as const;

/** Crops of a blocked picture from two sides: both of one axis (a centred cut to another shape), or of a corner. */
const twoSides = (share: number): Margins[] => [
  { ...NO_MARGINS, left: share, right: share },
  { ...NO_MARGINS, top: share, bottom: share },
  { ...NO_MARGINS, left: share, top: share },
  { ...NO_MARGINS, top: share, right: share },
  { ...NO_MARGINS, right: share, bottom: share },
  { ...NO_MARGINS, bottom: share, left: share },
];

const listed = (margins: readonly Margins[]) => ({ margins, most: margins.length });

export const VIEWS = {
  /** The picture as it is. */
  whole: { kept: true, blocked: { forms: 'upright', most: 1 }, compared: { forms: 'turned', most: 1 } },
  /** Inside its plain border, when it has one: a border added to, or cut from, a blocked picture. */
  insideBorder: { kept: true, blocked: { forms: 'upright', most: 1 }, compared: { forms: 'turned', most: 1 } },
  /** On a white page and on a black one, when it has transparency: a picture hidden in the alpha of a black one. */
  onPages: { kept: true, blocked: { forms: 'upright', most: 2 }, compared: { forms: 'turned', most: 2 } },
  /** Its contrast stretched, in place of the whole when that says too little: a photo washed out on purpose. */
  washedOut: { kept: false, blocked: { forms: 'none', most: 0 }, compared: { forms: 'turned', most: 1 } },
  /**
   * Centred crops: a blocked picture's up to 10.5% a side, turned; an upload's of 3, 6 and 9% as they are, so a frame
   * of up to about 10% comes off with one of them within 3% of the picture's edge.
   */
  centredCrops: {
    kept: false,
    blocked: { forms: 'turned', ...listed(BLOCKED_SHARES.map(centredMargins)) },
    compared: { forms: 'upright', ...listed([0.03, 0.06, 0.09].map(centredMargins)) },
  },
  /**
   * Crops from one side: a blocked picture's up to 10.5%, turned; an upload's of 4.5, 9 and 19% as they are: a frame
   * or a bar on one side comes off (19%: a caption), and 4.5% more off its lesser side evens a cut of two shares.
   */
  sideCrops: {
    kept: false,
    blocked: { forms: 'turned', ...listed(BLOCKED_SHARES.flatMap(eachSide)) },
    compared: { forms: 'upright', ...listed([0.045, 0.09, 0.19].flatMap(eachSide)) },
  },
  /** A blocked picture's crops from both sides of an axis or of a corner, upright: a copy cut so, turned, meets them. */
  twoSideCrops: {
    kept: false,
    blocked: { forms: 'upright', ...listed(BLOCKED_SHARES.flatMap(twoSides)) },
    compared: { forms: 'none', most: 0 },
  },
  /**
   * The pictures laid inside it (a picture in a picture, a screenshot, a frame of any widths, a tile). A blocked
   * picture's only when the operator asks: a collage's harmless panel, or the plain shapes the lines of a sticker
   * make, would otherwise be blocked for everyone.
   */
  innerPictures: {
    kept: false,
    blocked: { forms: 'turned', most: MOST_INNER_PICTURES, asked: true },
    compared: { forms: 'upright', most: MOST_INNER_PICTURES },
  },
} as const satisfies Record<string, View>;

export type ViewName = keyof typeof VIEWS;

/** Hashes a view makes on one side: one a hash upright, eight turned. */
const FORMS_COUNT: Record<Forms, number> = { upright: 1, turned: 8, none: 0 };

/** The queries of the block list one view of an upload makes at most. */
export function queriesOf(name: ViewName): number {
  const { compared } = VIEWS[name];
  return compared.most * FORMS_COUNT[compared.forms];
}

/**
 * The most queries one picture (or one frame of an animation) makes: every view's, but the washed-out one's, which
 * takes the whole's place when the whole says too little.
 */
export const PICTURE_QUERIES = (Object.keys(VIEWS) as ViewName[])
  .filter((name) => name !== 'washedOut')
  .reduce((sum, name) => sum + queriesOf(name), 0);

/** The most hashes a blocked picture adds to the block list besides its record's own, with their forms, unasked. */
export const BLOCKED_HASHES = (Object.keys(VIEWS) as ViewName[])
  .filter((name) => !VIEWS[name].kept && !('asked' in VIEWS[name].blocked))
  .reduce((sum, name) => sum + VIEWS[name].blocked.most * FORMS_COUNT[VIEWS[name].blocked.forms], 0);

/** How many of an animation's distinct pictures are hashed at most, each as a still picture: those shown longest. */
export const HASHED_FRAMES = 6;

/** The most queries one upload makes: an animation's frames, each as a still picture. */
export const UPLOAD_QUERIES = HASHED_FRAMES * PICTURE_QUERIES;

/** The side of the copy of a picture (or of a frame) the fingerprint reads, at most (`docs/moderation.md`, "Cost"). */
export const FINGERPRINT_SIDE = 384;
