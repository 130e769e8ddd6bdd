import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import sharp from 'sharp';
import { pdqDistance } from '../functions/core/moderation/pdq-hash';
import type { Perceptual } from '../functions/core/ports';
import { blockedPictureHashes } from '../functions/imaging/fingerprint-copies';
import { defaultProcessor } from './bench/processor';

/**
 * `npx tsx scripts/pdq-measure.ts FOLDER`: how far the PDQ hashes of edited copies of each photo in FOLDER are from
 * the photo's own, and how close different photos come, by the rule an upload is refused by (the least distance
 * between the blocked picture's hashes, its crops' among them, and the upload's, turned and mirrored, its crops'
 * among them). `docs/moderation.md` holds a run.
 */

/** The least width of a photo as first uploaded (`MIN_WIDTH=0` measures the photos at their own size). */
const MIN_WIDTH = Number(process.env['MIN_WIDTH'] ?? 1600);

/** Loaded once, on first use. */
const processor = defaultProcessor();

/** An APP1 segment right after the JPEG's start: an EXIF block of its own (an empty TIFF directory). */
function withOtherExif(jpeg: Buffer): Buffer {
  const tiff = Buffer.from([0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const body = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const header = Buffer.from([0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 0xff]);
  return Buffer.concat([jpeg.subarray(0, 2), header, body, jpeg.subarray(2)]);
}

/** The edits an abuser tries, each from the photo as first uploaded (a JPEG). */
export const EDITS: Record<string, (jpeg: Buffer, width: number, height: number) => Promise<Buffer>> = {
  'two bytes appended': (jpeg) => Promise.resolve(Buffer.concat([jpeg, Buffer.from([0, 0])])),
  'another EXIF block': (jpeg) => Promise.resolve(withOtherExif(jpeg)),
  'JPEG quality 55': (jpeg) => sharp(jpeg).jpeg({ quality: 55 }).toBuffer(),
  'half size': (jpeg, width) =>
    sharp(jpeg)
      .resize({ width: Math.round(width / 2) })
      .jpeg()
      .toBuffer(),
  WebP: (jpeg) => sharp(jpeg).webp().toBuffer(),
  PNG: (jpeg) => sharp(jpeg).png().toBuffer(),
  '10% brighter': (jpeg) => sharp(jpeg).modulate({ brightness: 1.1 }).jpeg().toBuffer(),
  grayscale: (jpeg) => sharp(jpeg).grayscale().jpeg().toBuffer(),
  'white border (10%)': (jpeg, width) => {
    const side = Math.round(width / 10);
    return sharp(jpeg).extend({ top: side, bottom: side, left: side, right: side, background: '#ffffff' }).jpeg().toBuffer();
  },
  mirrored: (jpeg) => sharp(jpeg).flop().jpeg().toBuffer(),
  'turned 90°': (jpeg) => sharp(jpeg).rotate(90).jpeg().toBuffer(),
  ...Object.fromEntries(
    [0.025, 0.05, 0.075, 0.1].flatMap((share) => [
      [`cropped ${share * 100}% a side`, (jpeg: Buffer, width: number, height: number) => cropped(jpeg, width, height, share)],
      [
        `in a ${share * 100}% frame of noise`,
        (jpeg: Buffer, width: number, height: number) => framed(jpeg, width, height, share),
      ],
    ]),
  ),
  'cropped 3%, in a 5% frame': async (jpeg, width, height) => {
    const cut = await cropped(jpeg, width, height, 0.03);
    const { width: w = 0, height: h = 0 } = await sharp(cut).metadata();
    return framed(cut, w, h, 0.05);
  },
  'in a 5% frame, mirrored': async (jpeg, width, height) =>
    sharp(await framed(jpeg, width, height, 0.05))
      .flop()
      .jpeg()
      .toBuffer(),
  'in a 5% frame, turned 90°': async (jpeg, width, height) =>
    sharp(await framed(jpeg, width, height, 0.05))
      .rotate(90)
      .jpeg()
      .toBuffer(),
  // a crop or a frame on one side only moves the picture off centre, where centred crops do not reach
  ...Object.fromEntries(
    [0.01, 0.02, 0.05, 0.1].map((share) => [
      `cropped ${share * 100}% on the left only`,
      (jpeg: Buffer, width: number, height: number) => cutSides(jpeg, width, height, { left: share }),
    ]),
  ),
  'cropped 5% at the bottom only': (jpeg, width, height) => cutSides(jpeg, width, height, { bottom: 0.05 }),
  'cropped 5% on the left and at the top': (jpeg, width, height) => cutSides(jpeg, width, height, { left: 0.05, top: 0.05 }),
  'cropped 5% on the left and right': (jpeg, width, height) => cutSides(jpeg, width, height, { left: 0.05, right: 0.05 }),
  'cropped 5% on the left only, then turned 90°': async (jpeg, width, height) =>
    sharp(await cutSides(jpeg, width, height, { left: 0.05 }))
      .rotate(90)
      .jpeg()
      .toBuffer(),
  'cropped 3% on the left and 8% at the top': (jpeg, width, height) => cutSides(jpeg, width, height, { left: 0.03, top: 0.08 }),
  'cropped 8% on the left and 3% on the right': (jpeg, width, height) =>
    cutSides(jpeg, width, height, { left: 0.08, right: 0.03 }),
  'cropped 2% at the top and 9% at the bottom': (jpeg, width, height) =>
    cutSides(jpeg, width, height, { top: 0.02, bottom: 0.09 }),
  'cropped 3% on the left, 8% at the top, 5% on the right': (jpeg, width, height) =>
    cutSides(jpeg, width, height, { left: 0.03, top: 0.08, right: 0.05 }),
  'in a 5% frame of noise on the left only': (jpeg, width, height) => onOneSide(jpeg, width, height, { left: 0.05 }),
  'in a 15% frame of noise on the right only': (jpeg, width, height) => onOneSide(jpeg, width, height, { right: 0.15 }),
  'in a 10% frame of noise at the bottom only, then turned 90°': async (jpeg, width, height) =>
    sharp(await onOneSide(jpeg, width, height, { bottom: 0.1 }))
      .rotate(90)
      .jpeg()
      .toBuffer(),
  'under a caption bar of 18% at the top': async (jpeg, width, height) => {
    const bar = Math.round(height * 0.18);
    const caption = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${bar}"><rect width="100%" height="100%" fill="#fff"/><text x="50%" y="65%" font-size="${Math.round(bar / 2.5)}" font-family="sans-serif" text-anchor="middle" fill="#000">WHEN THE BLOCK HOLDS</text></svg>`;
    return sharp({ create: { width, height: height + bar, channels: 3, background: '#ffffff' } })
      .composite([
        { input: Buffer.from(caption), left: 0, top: 0 },
        { input: jpeg, left: 0, top: bar },
      ])
      .jpeg()
      .toBuffer();
  },
  // a picture laid inside another, off centre or framed unevenly: found by its lines (`functions/fingerprint/inner-pictures.ts`)
  'in a 25% frame of noise': (jpeg, width, height) => framed(jpeg, width, height, 0.25),
  'in a frame of noise of 3% left, 12% right, 7% top, none at the bottom': async (jpeg, width, height) => {
    const [left, right, top] = [Math.round(width * 0.03), Math.round(width * 0.12), Math.round(height * 0.07)];
    return laidOn(await noisePng(width + left + right, height + top), jpeg, left, top);
  },
  'at 60% of its size on noise, off centre': async (jpeg, width, height) => {
    const small = await sharp(jpeg)
      .resize({ width: Math.round(width * 0.6) })
      .toBuffer();
    return laidOn(await noisePng(width, height), small, Math.round(width * 0.1), Math.round(height * 0.25));
  },
  'at 70% of its size on another photo': async (jpeg, width, height) => {
    // the other photo: this one upside down, in negative and blurred (as unlike it as another photo)
    const other = await sharp(jpeg).flip().negate().blur(3).resize(width, height).png().toBuffer();
    const small = await sharp(jpeg)
      .resize({ width: Math.round(width * 0.7) })
      .toBuffer();
    return laidOn(other, small, Math.round(width * 0.22), Math.round(height * 0.06));
  },
  'a screenshot of it in a browser': (jpeg, width, height) => inAViewer(jpeg, width, height),
  'turned 3°': (jpeg) => sharp(jpeg).rotate(3, { background: '#000000' }).jpeg().toBuffer(),
  'turned 5°': (jpeg) => sharp(jpeg).rotate(5, { background: '#000000' }).jpeg().toBuffer(),
  'a quarter of a 2x2 tile': async (jpeg, width, height) => {
    const half = await sharp(jpeg)
      .resize({ width: Math.round(width / 2) })
      .toBuffer();
    const other = await sharp(half).negate().toBuffer();
    const [w, h] = [Math.round(width / 2), Math.round(height / 2)];
    return sharp({ create: { width: 2 * w, height: 2 * h, channels: 3, background: '#000000' } })
      .composite([
        { input: half, left: 0, top: 0 },
        { input: other, left: w, top: 0 },
        { input: other, left: 0, top: h },
        { input: other, left: w, top: h },
      ])
      .jpeg()
      .toBuffer();
  },
};

/** The middle of a photo, `share` of each side cut off. */
function cropped(jpeg: Buffer, width: number, height: number, share: number): Promise<Buffer> {
  return cutSides(jpeg, width, height, { left: share, top: share, right: share, bottom: share });
}

/** A photo with these shares of its width (left, right) and height (top, bottom) cut off. */
function cutSides(
  jpeg: Buffer,
  width: number,
  height: number,
  { left = 0, top = 0, right = 0, bottom = 0 }: { left?: number; top?: number; right?: number; bottom?: number },
): Promise<Buffer> {
  const [dx, dy] = [Math.round(width * left), Math.round(height * top)];
  const [cutWidth, cutHeight] = [width - dx - Math.round(width * right), height - dy - Math.round(height * bottom)];
  return sharp(jpeg).extract({ left: dx, top: dy, width: cutWidth, height: cutHeight }).jpeg().toBuffer();
}

/** A photo with a frame of grey noise on one side, `share` of that side's length wide. */
async function onOneSide(
  jpeg: Buffer,
  width: number,
  height: number,
  side: { left: number } | { right: number } | { bottom: number },
): Promise<Buffer> {
  const [dx, dy] = [
    Math.round(width * ('left' in side ? side.left : 'right' in side ? side.right : 0)),
    Math.round(height * ('bottom' in side ? side.bottom : 0)),
  ];
  return laidOn(await noisePng(width + dx, height + dy), jpeg, 'left' in side ? dx : 0, 0);
}

/** A PNG of grey noise. */
function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#808080', noise: NOISE } })
    .png()
    .toBuffer();
}

/** A picture laid on another at (left, top), as a JPEG. */
function laidOn(under: Buffer, over: Buffer, left: number, top: number): Promise<Buffer> {
  return sharp(under)
    .composite([{ input: over, left, top }])
    .jpeg()
    .toBuffer();
}

/**
 * A screenshot of a photo shown at 90% in a browser's dark image viewer: the browser's light toolbar (an address
 * field with an address, a button) across the top, the photo in the middle of the dark page below it.
 */
async function inAViewer(jpeg: Buffer, width: number, height: number): Promise<Buffer> {
  const [pageWidth, pageHeight] = [Math.round(width * 1.3), Math.round(height * 1.35)];
  const bar = Math.round(pageHeight * 0.08);
  const page = `<svg xmlns="http://www.w3.org/2000/svg" width="${pageWidth}" height="${pageHeight}"><rect width="100%" height="100%" fill="#0e0e0e"/><rect width="100%" height="${bar}" fill="#dee1e6"/><rect x="${pageWidth * 0.1}" y="${bar * 0.25}" width="${pageWidth * 0.6}" height="${bar * 0.5}" rx="${bar * 0.25}" fill="#ffffff"/><text x="${pageWidth * 0.12}" y="${bar * 0.62}" font-size="${bar * 0.3}" font-family="sans-serif" fill="#333333">https://img.example/images/2026/11/29/photo.jpg</text><circle cx="${pageWidth * 0.03}" cy="${bar / 2}" r="${bar * 0.2}" fill="#888888"/></svg>`;
  const shown = await sharp(jpeg)
    .resize({ width: Math.round(width * 0.9) })
    .toBuffer();
  const { height: shownHeight = 0 } = await sharp(shown).metadata();
  const left = Math.round((pageWidth - width * 0.9) / 2);
  return laidOn(
    await sharp(Buffer.from(page)).png().toBuffer(),
    shown,
    left,
    bar + Math.round((pageHeight - bar - shownHeight) / 2),
  );
}

/** The grain of a frame of noise. */
const NOISE = { type: 'gaussian' as const, mean: 128, sigma: 60 };

/** A photo inside a frame of grey noise `share` of its sides wide. */
async function framed(jpeg: Buffer, width: number, height: number, share: number): Promise<Buffer> {
  const [dx, dy] = [Math.round(width * share), Math.round(height * share)];
  return laidOn(await noisePng(width + 2 * dx, height + 2 * dy), jpeg, dx, dy);
}

async function perceptualOf(bytes: Buffer): Promise<Perceptual> {
  const processed = await (await processor).process(bytes, { targetWidth: undefined });
  // none when the picture hashes poorly (a flat one): it is never refused by its picture, counted as 256 bits away
  return processed.perceptual ?? { hashes: [], queries: [], quality: 0 };
}

/** A photo as `takedown --block` blocks it: its own hashes and those of its crops (`blockedPictureHashes`). */
async function blockedOf(jpeg: Buffer): Promise<Perceptual> {
  const own = await perceptualOf(jpeg);
  return { ...own, hashes: [...own.hashes, ...(await blockedPictureHashes(jpeg)).crops] };
}

/** The rule an upload is refused by: the least distance from a blocked picture's hashes to the upload's. */
export function matchDistance(blocked: Perceptual, upload: Perceptual): number {
  const queries = upload.queries.flat();
  return Math.min(256, ...blocked.hashes.flatMap((hash) => queries.map((query) => pdqDistance(hash, query))));
}

async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder) throw new Error('usage: tsx scripts/pdq-measure.ts FOLDER');
  const files = readdirSync(folder).filter((name) => ['.jpg', '.jpeg', '.png', '.webp'].includes(extname(name).toLowerCase()));
  const photos: Array<{ name: string; blocked: Perceptual; edits: Record<string, Perceptual> }> = [];
  for (const name of files) {
    // photos as cameras make them: at least MIN_WIDTH wide (a smaller sample photo is scaled up)
    const source = sharp(readFileSync(join(folder, name)));
    const { width: sourceWidth = 0 } = await source.metadata();
    const jpeg = await source
      .resize({ width: Math.max(sourceWidth, MIN_WIDTH) })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 90 })
      .toBuffer();
    const { width = 0, height = 0 } = await sharp(jpeg).metadata();
    const edits: Record<string, Perceptual> = {};
    for (const [edit, make] of Object.entries(EDITS)) edits[edit] = await perceptualOf(await make(jpeg, width, height));
    photos.push({ name, blocked: await blockedOf(jpeg), edits });
  }
  process.stdout.write(`| edit | ${photos.map((photo) => photo.name).join(' | ')} | most | refused at 31 |\n`);
  process.stdout.write(`|---|${photos.map(() => '---|').join('')}---|---|\n`);
  for (const edit of Object.keys(EDITS)) {
    const distances = photos.map((photo) => matchDistance(photo.blocked, photo.edits[edit] as Perceptual));
    const refused = distances.filter((distance) => distance <= 31).length;
    process.stdout.write(
      `| ${edit} | ${distances.join(' | ')} | ${Math.max(...distances)} | ${refused} of ${distances.length} |\n`,
    );
  }
  const different: number[] = [];
  for (const photo of photos) {
    for (const other of photos) {
      if (other === photo) continue;
      for (const upload of [other.blocked, ...Object.values(other.edits)]) different.push(matchDistance(photo.blocked, upload));
    }
  }
  different.sort((a, b) => a - b);
  const quantile = (q: number) => different[Math.floor(q * (different.length - 1))];
  process.stdout.write(
    `\ndifferent photos: ${different.length} pairs; least ${different[0]}, 1st percentile ${quantile(0.01)}, median ${quantile(0.5)}\n`,
  );
  process.stdout.write(`qualities: ${photos.map((photo) => `${photo.name} ${photo.blocked.quality}`).join(', ')}\n`);
}

if (require.main === module) void main();
