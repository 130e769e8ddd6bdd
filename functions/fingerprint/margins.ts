import type { PdqArea } from './planes';

/** What a crop cuts off: shares of the width (left, right) and of the height (top, bottom). */
export interface Margins {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export const NO_MARGINS: Margins = { left: 0, top: 0, right: 0, bottom: 0 };

/** A margin of `side` (a share of the width and of the height) on each side. */
export const centredMargins = (side: number): Margins => ({ left: side, top: side, right: side, bottom: side });

/** A share cut off each side in turn: 4 crops. */
export const eachSide = (share: number): Margins[] => [
  { ...NO_MARGINS, left: share },
  { ...NO_MARGINS, top: share },
  { ...NO_MARGINS, right: share },
  { ...NO_MARGINS, bottom: share },
];

/**
 * The rectangle inside these margins of a picture of `width` x `height` (shares that leave part of each side): at
 * least a pixel a side, and never past the picture's edge, however the shares round.
 */
export function cropArea(width: number, height: number, margins: Margins): PdqArea {
  if (margins.left + margins.right >= 1 || margins.top + margins.bottom >= 1) throw new RangeError('a crop leaves nothing');
  const left = Math.min(Math.round(width * margins.left), width - 1);
  const top = Math.min(Math.round(height * margins.top), height - 1);
  return {
    left,
    top,
    width: Math.max(1, width - left - Math.round(width * margins.right)),
    height: Math.max(1, height - top - Math.round(height * margins.bottom)),
  };
}

/** `cropArea` of an area of a picture, placed where that area is. */
export function cropWithin(area: PdqArea, margins: Margins): PdqArea {
  const crop = cropArea(area.width, area.height, margins);
  return { ...crop, left: area.left + crop.left, top: area.top + crop.top };
}
