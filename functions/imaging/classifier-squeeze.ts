/**
 * The classifier's input, made from decoded pixels by one JavaScript source that runs in the classifier's worker
 * (`nsfw-classifier.ts`) and, for tests and measurements, here.
 */

/**
 * How the classifier's input is made from decoded pixels: squeezed to `CLASSIFIER_SIDE` a side whatever their aspect
 * (as nsfwjs does), each output pixel the mean of the area it covers (rows, then columns), transparent pixels seen
 * on white and grey as three equal channels. JavaScript source, because it runs in the worker (whose code is given as
 * text: the bundle has no file of its own for it); `squeezeForClassifier` is the same code on the calling thread.
 */
export const SQUEEZE_SOURCE = `
function squeeze(data, width, height, channels, premultiplied, side) {
  const taps = (from, to) => {
    const scale = from / to;
    const starts = new Int32Array(to + 1);
    const index = [];
    const weight = [];
    for (let out = 0; out < to; out += 1) {
      const low = out * scale;
      const high = (out + 1) * scale;
      starts[out] = index.length;
      for (let at = Math.floor(low); at < Math.min(from, Math.ceil(high)); at += 1) {
        const covered = Math.min(high, at + 1) - Math.max(low, at);
        if (covered > 0) {
          index.push(at);
          weight.push(covered / scale);
        }
      }
    }
    starts[to] = index.length;
    return { starts, index: Int32Array.from(index), weight: Float64Array.from(weight) };
  };
  // grey is read as three equal channels, and transparency onto white, as each sample is taken
  const alpha = channels === 2 || channels === 4;
  const green = channels >= 3 ? 1 : 0;
  const blue = channels >= 3 ? 2 : 0;
  const { starts, index, weight } = taps(width, side);
  const line = side * 3;
  const rows = new Float32Array(height * line);
  for (let y = 0; y < height; y += 1) {
    const row = y * width * channels;
    for (let x = 0; x < side; x += 1) {
      let r = 0, g = 0, b = 0;
      const end = starts[x + 1];
      for (let tap = starts[x]; tap < end; tap += 1) {
        const from = row + index[tap] * channels;
        const w = weight[tap];
        if (alpha) {
          const opacity = data[from + channels - 1] / 255;
          const white = 255 * (1 - opacity);
          const kept = premultiplied ? 1 : opacity;
          r += (data[from] * kept + white) * w;
          g += (data[from + green] * kept + white) * w;
          b += (data[from + blue] * kept + white) * w;
        } else {
          r += data[from] * w;
          g += data[from + green] * w;
          b += data[from + blue] * w;
        }
      }
      const to = y * line + x * 3;
      rows[to] = r;
      rows[to + 1] = g;
      rows[to + 2] = b;
    }
  }
  const down = taps(height, side);
  const sum = new Float64Array(line);
  const out = new Uint8Array(side * line);
  for (let y = 0; y < side; y += 1) {
    sum.fill(0);
    for (let tap = down.starts[y]; tap < down.starts[y + 1]; tap += 1) {
      const from = down.index[tap] * line;
      const w = down.weight[tap];
      for (let x = 0; x < line; x += 1) sum[x] += rows[from + x] * w;
    }
    // rounded half up, as Math.round does for sums that are never negative, without its branch on each sample's
    // fraction, which a photo's noise makes unpredictable (Math.round's took as long as the rest of this pass)
    const at = y * line;
    for (let x = 0; x < line; x += 1) out[at + x] = Math.min(255, (sum[x] + 0.5) | 0);
  }
  return out;
}
`;

/**
 * The classifier's input of decoded pixels, made here as its worker makes it (for tests and measurements): the same
 * source text, not a copy of it.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- our own constant source
export const squeezeForClassifier = new Function(`${SQUEEZE_SOURCE}\nreturn squeeze;`)() as (
  data: Uint8Array,
  width: number,
  height: number,
  channels: number,
  premultiplied: boolean,
  side: number,
) => Uint8Array;
