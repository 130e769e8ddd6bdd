import sharp from 'sharp';

/** Benchmark inputs, made from code: a camera-like 12 MP JPEG, a 1080p screenshot PNG, an animated GIF, a WebP photo. */
export interface BenchFixture {
  name: string;
  bytes: Buffer;
}

/** Smooth gradients with gaussian grain: compresses like a photograph, not like a flat test card. */
async function photo(width: number, height: number, grainStrength = 1): Promise<sharp.Sharp> {
  const base = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#000' } })
    .raw()
    .toBuffer();
  for (let i = 0; i < base.length; i += 3) {
    const pixel = i / 3;
    const x = pixel % 64;
    const y = Math.floor(pixel / 64);
    base[i] = 90 + Math.round(120 * Math.sin(x / 9) ** 2);
    base[i + 1] = 60 + Math.round(150 * (y / 48));
    base[i + 2] = 140 + Math.round(80 * Math.cos((x + y) / 13));
  }
  const smooth = await sharp(base, { raw: { width: 64, height: 48, channels: 3 } })
    .resize(width, height, { kernel: 'cubic' })
    .raw()
    .toBuffer();
  const grain = await sharp({
    create: { width, height, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } },
  })
    .raw()
    .toBuffer();
  for (let i = 0; i < smooth.length; i += 1)
    smooth[i] = Math.max(0, Math.min(255, (smooth[i] ?? 0) + (((grain[i] ?? 128) - 128) * grainStrength) / 2.2));
  return sharp(smooth, { raw: { width, height, channels: 3 } });
}

function screenshotSvg(width: number, height: number): string {
  const rows: string[] = [];
  for (let y = 120; y < height - 40; y += 28) {
    const words = 4 + ((y / 28) % 9);
    rows.push(
      `<text x="300" y="${y}" font-family="sans-serif" font-size="16" fill="#222">${'Lorem ipsum dolor sit amet '.repeat(words)}</text>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
  <rect width="100%" height="100%" fill="#f4f5f7"/>
  <rect width="100%" height="64" fill="#1f6feb"/>
  <rect x="0" y="64" width="260" height="${height - 64}" fill="#e1e4e8"/>
  <circle cx="40" cy="32" r="18" fill="#fff"/>
  ${rows.join('\n')}
</svg>`;
}

/** The camera-like 12 MP JPEG. */
async function cameraJpeg(): Promise<Buffer> {
  return (await photo(4000, 3000))
    .jpeg({ quality: 90 })
    .withExif({ IFD0: { Make: 'BenchCam', Model: 'B-12' } })
    .toBuffer();
}

/** A film clip: 24 frames of dithered video (a little grain, much less than a camera sensor's). */
async function filmGif(frames: number, frameWidth: number, frameHeight: number): Promise<Buffer> {
  const reel = await (await photo(frameWidth, frameHeight * frames, 0.25)).ensureAlpha().raw().toBuffer();
  return sharp(reel, { raw: { width: frameWidth, height: frameHeight * frames, channels: 4, pageHeight: frameHeight } })
    .gif({ loop: 0, delay: Array.from({ length: frames }, () => 60) })
    .toBuffer();
}

/** Each input by name, and how it is made (a few seconds for a 12 MP photo's grain). */
const FIXTURES: ReadonlyArray<{ name: string; make: () => Promise<Buffer> }> = [
  { name: 'JPEG 4000x3000 (12 MP)', make: cameraJpeg },
  {
    name: 'JPEG phone portrait (12 MP, orientation 6)',
    // a phone held upright: the sensor's landscape pixels, turned by EXIF orientation 6 (displayed 3000x4000)
    make: async () =>
      (await photo(4000, 3000))
        .jpeg({ quality: 90 })
        .withExif({ IFD0: { Make: 'BenchPhone', Model: 'P-12' } })
        .withMetadata({ orientation: 6 })
        .toBuffer(),
  },
  {
    name: 'PNG 1920x1080 screenshot',
    make: () =>
      sharp(Buffer.from(screenshotSvg(1920, 1080)))
        .png()
        .toBuffer(),
  },
  { name: 'GIF 480x270, 24 frames', make: () => filmGif(24, 480, 270) },
  { name: 'WebP 1920x1080', make: async () => (await photo(1920, 1080)).webp({ quality: 80 }).toBuffer() },
];

/** Each input made once a process, when first asked for. */
const made = new Map<string, Promise<Buffer>>();

async function fixture({ name, make }: (typeof FIXTURES)[number]): Promise<BenchFixture> {
  let bytes = made.get(name);
  if (!bytes) {
    bytes = make();
    made.set(name, bytes);
  }
  return { name, bytes: await bytes };
}

/** The 12 MP JPEG alone, for what measures one upload's kind. */
export async function benchJpeg(): Promise<Buffer> {
  return (await fixture(FIXTURES[0]!)).bytes;
}

/**
 * The inputs a run measures, each made once a process: those whose name starts with `BENCH_ONLY`, when it is set; all
 * of them otherwise.
 */
export async function benchFixtures(): Promise<BenchFixture[]> {
  const only = process.env['BENCH_ONLY'];
  return Promise.all(FIXTURES.filter((item) => !only || item.name.startsWith(only)).map(fixture));
}
