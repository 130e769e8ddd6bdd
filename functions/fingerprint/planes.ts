/**
 * A picture as the fingerprint reads it: its luminance as PDQ reads it, and its alpha when it has transparency, each
 * a plane of one value a pixel, made once from its pixels; every view of it is read from these (`views.ts`).
 */

/** Pixels as sharp hands them out raw: rows of `channels` 8-bit samples (grey, grey+alpha, RGB or RGBA). */
export interface PdqPixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/** A rectangle of a picture, in pixels: columns [left, left + width) and rows [top, top + height). */
export type PdqArea = Record<'left' | 'top' | 'width' | 'height', number>;

export function wholeArea({ width, height }: { width: number; height: number }): PdqArea {
  return { left: 0, top: 0, width, height };
}

/** One value a pixel, row after row (0 to 255). */
export interface Plane {
  values: Float32Array;
  width: number;
  height: number;
}

export interface LumaPicture {
  /** Y of YUV (0.299 R + 0.587 G + 0.114 B; a grey sample is its own): what PDQ reads; alpha is not looked at. */
  luma: Plane;
  /** Its opacity, when some pixel is not opaque. */
  alpha: Plane | undefined;
}

/** A picture's planes, in one pass over its pixels (a loop for each layout: the hot path of every upload). */
export function lumaPictureOf({ data, width, height, channels }: PdqPixels): LumaPicture {
  const bytes =
    data instanceof Uint8Array && data.constructor !== Uint8Array
      ? new Uint8Array(data.buffer, data.byteOffset, data.length)
      : data;
  const luma = new Float32Array(width * height);
  const withAlpha = channels === 2 || channels === 4;
  const alpha = withAlpha ? new Float32Array(width * height) : undefined;
  if (channels >= 3) colourLuma(bytes, channels, luma);
  else for (let pixel = 0, at = 0; pixel < luma.length; pixel += 1, at += channels) luma[pixel] = bytes[at]!;
  let opaque = true;
  if (alpha) {
    for (let pixel = 0, at = channels - 1; pixel < alpha.length; pixel += 1, at += channels) {
      const value = bytes[at]!;
      alpha[pixel] = value;
      opaque &&= value === 255;
    }
  }
  return {
    luma: { values: luma, width, height },
    alpha: alpha && !opaque ? { values: alpha, width, height } : undefined,
  };
}

function colourLuma(bytes: Uint8Array, channels: number, luma: Float32Array): void {
  for (let pixel = 0, at = 0; pixel < luma.length; pixel += 1, at += channels)
    luma[pixel] = 0.299 * bytes[at]! + 0.587 * bytes[at + 1]! + 0.114 * bytes[at + 2]!;
}

/**
 * A picture with transparency as a viewer sees it on a page of `background` (0: black, 255: white): the hash reads
 * colour and not alpha, so a picture hidden in the alpha channel of a black one (it shows on a white page) would
 * otherwise pass. Luminance is linear in the colours, so the picture laid on the page is its luminance laid on it.
 */
export function onPage({ luma, alpha }: LumaPicture, background: number): Plane {
  if (!alpha) return luma;
  const values = new Float32Array(luma.values.length);
  for (let at = 0; at < values.length; at += 1) {
    const opacity = alpha.values[at]! / 255;
    values[at] = luma.values[at]! * opacity + background * (1 - opacity);
  }
  return { values, width: luma.width, height: luma.height };
}

/** How far from the corner pixel's a plain border's values may stray (as sharp's trim by default). */
export const BORDER_TOLERANCE = 10;

/**
 * The area inside a plain border (rows and columns at its edges whose luminance, and opacity, stay within `tolerance`
 * of the top-left pixel's); undefined when there is no such border, or nothing but it. What sharp's `trim` finds, read
 * from the border alone: libvips' trim first blurs the whole picture, for a border most uploads do not have.
 */
export function insidePlainBorder(planes: readonly Plane[], tolerance = BORDER_TOLERANCE): PdqArea | undefined {
  const [first] = planes;
  if (!first) return undefined;
  const { width, height } = first;
  const plain = (x: number, y: number): boolean =>
    planes.every(({ values }) => Math.abs(values[y * width + x]! - values[0]!) <= tolerance);
  const plainRow = (y: number, left: number, right: number): boolean => {
    for (let x = left; x < right; x += 1) if (!plain(x, y)) return false;
    return true;
  };
  const plainColumn = (x: number, top: number, bottom: number): boolean => {
    for (let y = top; y < bottom; y += 1) if (!plain(x, y)) return false;
    return true;
  };
  let top = 0;
  while (top < height && plainRow(top, 0, width)) top += 1;
  if (top === height) return undefined;
  let bottom = height;
  while (plainRow(bottom - 1, 0, width)) bottom -= 1;
  let left = 0;
  while (plainColumn(left, top, bottom)) left += 1;
  let right = width;
  while (plainColumn(right - 1, top, bottom)) right -= 1;
  if (top === 0 && left === 0 && bottom === height && right === width) return undefined;
  return { left, top, width: right - left, height: bottom - top };
}

/** The values of an area of a plane, as a plane of its own. */
export function areaOf(plane: Plane, area: PdqArea): Plane {
  if (area.left === 0 && area.top === 0 && area.width === plane.width && area.height === plane.height) return plane;
  const values = new Float32Array(area.width * area.height);
  for (let y = 0; y < area.height; y += 1) {
    const from = (area.top + y) * plane.width + area.left;
    values.set(plane.values.subarray(from, from + area.width), y * area.width);
  }
  return { values, width: area.width, height: area.height };
}

/**
 * The least spread of a picture's luminance (its 1st to 99th percentile, of 255) that a stretched copy is made of: a
 * picture of fewer shades shows a viewer next to nothing.
 */
const LEAST_SPREAD = 6;

/**
 * The luminance with its contrast stretched to the whole range (its 1st and 99th percentiles to 0 and 255, clamped),
 * when it has some to stretch; none for a picture flat to begin with.
 */
export function stretched(plane: Plane): Plane | undefined {
  const { values, width, height } = plane;
  const counts = new Uint32Array(256);
  for (let at = 0; at < values.length; at += 1) counts[Math.round(values[at]!)]! += 1;
  const percentile = (share: number): number => {
    let seen = 0;
    for (let value = 0; value < 256; value += 1) if ((seen += counts[value]!) > share * values.length) return value;
    return 255;
  };
  const [low, high] = [percentile(0.01), percentile(0.99)];
  if (high - low < LEAST_SPREAD) return undefined;
  const out = new Float32Array(values.length);
  const scale = 255 / (high - low);
  for (let at = 0; at < values.length; at += 1) out[at] = Math.min(255, Math.max(0, (values[at]! - low) * scale));
  return { values: out, width, height };
}
