import sharp from 'sharp';
import { nextTurn } from '../core/turns';
import type { Budget } from './budget';
import {
  MIN_PDQ_QUALITY,
  pdqHash,
  pdqHashAsIs,
  pdqLuminance,
  type PdqHash,
  type PdqPicture,
  type PdqResult,
} from '../core/moderation/pdq';
import { innerPictures } from './inner-pictures';
import { cropArea, type Margins } from './margins';
import { BORDER_TOLERANCE, insidePlainBorder } from './plain-border';

/**
 * Hashes of a picture's crops, for the edits PDQ does not survive by itself: a crop of a few percent a side moves
 * about half its bits, a crop of 5% of one side alone as many, and so does a frame of any content around the picture
 * (`docs/moderation.md`, "Crops and frames"). PDQ still matches a crop within about 1.5% a side of the one it was made
 * from, so:
 *
 * - a blocked picture is also blocked by the hashes of its centred crops in steps of 1.5% a side, up to 10.5%, each
 *   turned and mirrored the eight ways: an upload cut from it by up to about 10% a side comes within reach of one,
 *   and so does a framed copy turned or mirrored (its crops are compared as they are);
 * - and by the hashes of its crops from one side (turned and mirrored), from the two sides of one axis, and from the
 *   two sides of a corner (upright), in the same steps: an upload cut so is compared by its own hash turned and
 *   mirrored the eight ways, so a cut copy turned meets them too;
 * - an upload is also checked by the hashes of its centred crops in steps of 3%, up to 9%: a frame of up to about 10%
 *   around a blocked picture comes off with one of them, within 3% of the picture's edge, where a crop of the blocked
 *   one meets it; and by its crops from each side (`UPLOAD_SIDE_CROPS`), for a frame on one side.
 */
export { cropArea, type Margins } from './margins';

export const BLOCKED_CROPS = [0.015, 0.03, 0.045, 0.06, 0.075, 0.09, 0.105] as const;
export const UPLOAD_CROPS = [0.03, 0.06, 0.09] as const;

const NO_MARGINS: Margins = { left: 0, top: 0, right: 0, bottom: 0 };

/** A share cut off each side in turn: 4 crops. */
const eachSide = (share: number): Margins[] => [
  { ...NO_MARGINS, left: share },
  { ...NO_MARGINS, top: share },
  { ...NO_MARGINS, right: share },
  { ...NO_MARGINS, bottom: share },
];

/** The crops of a blocked picture from one side, each of `BLOCKED_CROPS`' shares: 28, kept turned and mirrored. */
export const BLOCKED_ONE_SIDE_CROPS: readonly Margins[] = BLOCKED_CROPS.flatMap(eachSide);

/**
 * The crops of a blocked picture from two sides, each of `BLOCKED_CROPS`' shares: both sides of one axis (a centred cut
 * to another shape) and the two sides of a corner: 42, kept upright.
 */
export const BLOCKED_TWO_SIDE_CROPS: readonly Margins[] = BLOCKED_CROPS.flatMap((share) => [
  { ...NO_MARGINS, left: share, right: share },
  { ...NO_MARGINS, top: share, bottom: share },
  { ...NO_MARGINS, left: share, top: share },
  { ...NO_MARGINS, top: share, right: share },
  { ...NO_MARGINS, right: share, bottom: share },
  { ...NO_MARGINS, bottom: share, left: share },
]);

/**
 * An upload is also checked by its crops of 4.5%, 9% and 19% from each side, as they are: 12 queries. A frame or a bar
 * on one side of up to about 19% of the upload (a caption over a picture) comes off with one of the last two, leaving
 * the picture cut on that side by at most about 11%, where a blocked crop from one side (turned and mirrored: the
 * upload may have been turned after) meets it within about 0.75%. The first evens a crop of different shares on two
 * sides (3% on the left, 8% at the top): cut 4.5% more on its lesser side, the upload meets a blocked crop of two
 * sides in equal shares.
 */
export const UPLOAD_SIDE_CROPS: readonly Margins[] = [0.045, 0.09, 0.19].flatMap(eachSide);

/** A margin of `side` (a share of the width and of the height) on each side. */
export const centredMargins = (side: number): Margins => ({ left: side, top: side, right: side, bottom: side });

/** Every crop an upload is compared by, as it is: the centred ones, then those from each side (15 queries). */
export const UPLOAD_CROP_MARGINS: readonly Margins[] = [...UPLOAD_CROPS.map(centredMargins), ...UPLOAD_SIDE_CROPS];

/**
 * The crops are hashed from a copy of at most this many pixels a side, on both sides alike: they match as well as
 * from 1,024, in a seventh of the time; from 256 they lose a few (`docs/moderation.md`, "Crops and frames").
 */
export const CROPPED_SIDE = 384;

/** The hash of a picture's crop, when it says enough of it (`MIN_PDQ_QUALITY`). */
function cropHash(picture: PdqPicture, margins: Margins): PdqResult | undefined {
  const one = pdqHash(picture, cropArea(picture.width, picture.height, margins));
  return one.quality >= MIN_PDQ_QUALITY ? one : undefined;
}

/**
 * The hash of an upload's crop as it is, when it says enough of it (`MIN_PDQ_QUALITY`): it is compared as it is, the
 * blocked crops being kept turned (`blockedCropHashes`), so its turned forms are not made.
 */
export function uploadCropHash(picture: PdqPicture, margins: Margins): PdqHash | undefined {
  const one = pdqHashAsIs(picture, cropArea(picture.width, picture.height, margins));
  return one.quality >= MIN_PDQ_QUALITY ? one.hash : undefined;
}

/**
 * The hashes of an upload's crops as they are (`uploadCropHash`), each in its own turn of the event loop: from the
 * picture's luminance made once (`pdqLuminance`), each crop reading its area of it rather than its pixels being copied
 * out and converted again (`docs/moderation.md`, "Crops and frames").
 */
export async function uploadCropHashes(picture: PdqPicture, crops: readonly Margins[], budget: Budget): Promise<PdqHash[]> {
  const hashes: PdqHash[] = [];
  for (const margins of crops) {
    const one = uploadCropHash(picture, margins);
    if (one) hashes.push(one);
    await nextTurn();
    budget.check();
  }
  return hashes;
}

/** The hashes of a picture's centred crops that say enough of it (`MIN_PDQ_QUALITY`). */
export function cropHashes(picture: PdqPicture, sides: readonly number[]): PdqResult[] {
  return sides.flatMap((side) => cropHash(picture, centredMargins(side)) ?? []);
}

/**
 * The hashes that block a stored picture (its original's bytes): those of its centred crops (`BLOCKED_CROPS`) and of
 * its crops from one side (`BLOCKED_ONE_SIDE_CROPS`) in their eight turned and mirrored forms, and those of its crops
 * from two sides (`BLOCKED_TWO_SIDE_CROPS`) upright, from a copy of at most `CROPPED_SIDE` a side, upright and on
 * white as a viewer sees it, inside its plain border when it has one. The picture's own hashes are its record's.
 */
export async function blockedCropHashes(original: Uint8Array): Promise<string[]> {
  const { data, info } = await sharp(original)
    .rotate()
    .resize(CROPPED_SIDE, CROPPED_SIDE, { fit: 'inside', withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const page = { data, width: info.width, height: info.height, channels: info.channels };
  // inside its plain border, as an upload's crops are made (`pixel-copies.ts`)
  const pixels = pdqLuminance(insidePlainBorder(page, BORDER_TOLERANCE) ?? page);
  const hashed = (crops: readonly Margins[]): PdqResult[] => crops.flatMap((margins) => cropHash(pixels, margins) ?? []);
  const centred = cropHashes(pixels, BLOCKED_CROPS).flatMap((one) => one.turned);
  const oneSide = hashed(BLOCKED_ONE_SIDE_CROPS).flatMap((one) => one.turned);
  const twoSides = hashed(BLOCKED_TWO_SIDE_CROPS).map((one) => one.hash);
  // a blocked screenshot, or picture in a picture, blocks the picture inside it too, turned and mirrored: an upload's
  // pictures inside are compared as they are
  const inner = hashed(innerPictures(pixels)).flatMap((one) => one.turned);
  return [...new Set([...centred, ...oneSide, ...twoSides, ...inner])];
}
