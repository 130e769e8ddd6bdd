import type { PdqPixels } from '../../functions/fingerprint/planes';

// read once: in jest's vm context each read of a global is slow (`docs/decisions.md`, "Globals in jest's vm context")
const { ceil, floor, max, min } = Math;

/**
 * PDQ's 64x64 samples made as the reference makes them: the whole luminance plane in 32-bit floats, blurred by two
 * passes of a box along every row and every column (each output the mean of its box cut at the edges), then read
 * at the cells' centres. The oracle for the service's faster `pdqCells`.
 */
export function pdqCellsOfPlanes({ data, width, height, channels }: PdqPixels): Float64Array {
  const luma = new Float32Array(width * height);
  const scratch = new Float32Array(width * height);
  for (let pixel = 0, at = 0; pixel < width * height; pixel += 1, at += channels) {
    luma[pixel] =
      channels < 3 ? (data[at] ?? 0) : 0.299 * (data[at] ?? 0) + 0.587 * (data[at + 1] ?? 0) + 0.114 * (data[at + 2] ?? 0);
  }
  const box = (input: Float32Array, output: Float32Array, start: number, stride: number, length: number, window: number) => {
    const half = floor((window + 2) / 2);
    for (let k = 0; k < length; k += 1) {
      let sum = 0;
      let count = 0;
      for (let x = max(0, k - (window - half)); x <= min(length - 1, k + half - 1); x += 1) {
        sum += input[start + x * stride] ?? 0;
        count += 1;
      }
      output[start + k * stride] = sum / count;
    }
  };
  for (let pass = 0; pass < 2; pass += 1) {
    for (let row = 0; row < height; row += 1) box(luma, scratch, row * width, 1, width, ceil(width / 128));
    for (let column = 0; column < width; column += 1) box(scratch, luma, column, width, height, ceil(height / 128));
  }
  const cells = new Float64Array(64 * 64);
  for (let i = 0; i < 64; i += 1) {
    const row = floor(((i + 0.5) * height) / 64);
    for (let j = 0; j < 64; j += 1) cells[i * 64 + j] = luma[row * width + floor(((j + 0.5) * width) / 64)] ?? 0;
  }
  return cells;
}
