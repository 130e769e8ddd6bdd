import type { PdqArea } from '../core/moderation/pdq';

/** What a crop cuts off: shares of the width (left, right) and of the height (top, bottom). */
export interface Margins {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

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
