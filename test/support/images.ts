import sharp from 'sharp';
import { crc32 as zlibCrc32 } from 'node:zlib';
import type { ImagingSettings } from '../../functions/imaging/sharp-image-processor';

// read once: in jest's vm context each read of a global is slow (`docs/decisions.md`, "Globals in jest's vm context")
const { PI, ceil, cos, floor, hypot, imul, log, max, min, round, sin, sqrt } = Math;

/** Test images made from code: a gradient with a marker in the top-left corner, so orientation can be checked. */
function gradient(width: number, height: number, channels: 3 | 4 = 3): Buffer {
  const pixels = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const offset = (y * width + x) * channels;
      const marker = x < width / 4 && y < height / 4;
      pixels[offset] = marker ? 255 : round((x / width) * 200);
      pixels[offset + 1] = marker ? 0 : round((y / height) * 200);
      pixels[offset + 2] = marker ? 0 : 128;
      if (channels === 4) pixels[offset + 3] = x < width / 2 ? 255 : 128;
    }
  }
  return pixels;
}

function raw(width: number, height: number, channels: 3 | 4 = 3): sharp.Sharp {
  return sharp(gradient(width, height, channels), { raw: { width, height, channels } });
}

export async function makeJpeg(
  width: number,
  height: number,
  options: { orientation?: number; exif?: sharp.Exif } = {},
): Promise<Buffer> {
  let image = raw(width, height).jpeg({ quality: 90 });
  if (options.exif) image = image.withExif(options.exif);
  if (options.orientation !== undefined) image = image.withMetadata({ orientation: options.orientation });
  return image.toBuffer();
}

export async function makePng(
  width: number,
  height: number,
  options: { alpha?: boolean; sixteenBit?: boolean } = {},
): Promise<Buffer> {
  let image = raw(width, height, options.alpha ? 4 : 3);
  if (options.sixteenBit) image = image.toColourspace('rgb16');
  return image.png().toBuffer();
}

export async function makeWebp(width: number, height: number): Promise<Buffer> {
  return raw(width, height).webp({ quality: 80 }).toBuffer();
}

export async function makeAvif(width: number, height: number): Promise<Buffer> {
  return raw(width, height).avif({ quality: 50, effort: 0 }).toBuffer();
}

export async function makeTiff(width: number, height: number): Promise<Buffer> {
  return raw(width, height).tiff().toBuffer();
}

/** An animation of `frames` frames, each a shifted gradient. */
export async function makeAnimated(
  format: 'gif' | 'webp',
  width: number,
  height: number,
  frames: number,
  options: { effort?: number } = {},
): Promise<Buffer> {
  const frameBytes = width * height * 4;
  const all = Buffer.alloc(frameBytes * frames);
  for (let frame = 0; frame < frames; frame += 1) {
    const pixels = gradient(width, height, 4);
    // a white bar that moves one step a frame, so no two frames are alike
    const barX = floor((frame * width) / frames);
    for (let y = 0; y < height; y += 1) {
      for (let x = barX; x < min(width, barX + max(1, floor(width / frames))); x += 1) {
        pixels.fill(255, (y * width + x) * 4, (y * width + x) * 4 + 4);
      }
    }
    pixels.copy(all, frame * frameBytes);
  }
  const image = sharp(all, { raw: { width, height: height * frames, channels: 4, pageHeight: height } });
  const delay = Array.from({ length: frames }, () => 80);
  const effort = options.effort === undefined ? {} : { effort: options.effort };
  return (
    format === 'gif' ? image.gif({ loop: 0, delay, ...effort }) : image.webp({ loop: 0, delay, quality: 70, ...effort })
  ).toBuffer();
}

/** Imaging settings with small renditions (a 32 px thumb, a 50 px medium), so that the tests' images make real ones. */
/** The service's default imaging limits and sizes: the working copy, which the hashes read, is 500 px wide. */
export const SERVICE_IMAGING: ImagingSettings = {
  maxPixels: 100_000_000,
  maxHeicPixels: 24_000_000,
  maxFrames: 300,
  timeLimitSeconds: 10,
  thumbSize: 320,
  mediumWidth: 500,
  keepMetadata: false,
};

export const SMALL_IMAGING: ImagingSettings = {
  maxPixels: 4_000_000,
  maxHeicPixels: 24_000_000,
  timeLimitSeconds: 10,
  maxFrames: 10,
  thumbSize: 32,
  mediumWidth: 50,
  keepMetadata: false,
};

export const NOT_IMAGES: Record<string, Buffer> = {
  svg: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'),
  html: Buffer.from('<!doctype html><html><body><img src=x onerror=alert(1)></body></html>'),
  text: Buffer.from('just some text that is long enough to be sniffed'),
  pdf: Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n'),
  ico: Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0, 0x68, 4, 0, 0, 22, 0, 0, 0]),
  mp4: Buffer.from([
    0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0, 0x69, 0x73, 0x6f, 0x6d, 0x6d, 0x70, 0x34, 0x31,
  ]),
};

const XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>Secret Person</dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>';
export const GPS_EXIF: sharp.Exif = {
  IFD0: { Make: 'TestCam', Model: 'T-1', Copyright: 'Secret Person' },
  IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '40/1 26/1 4614/100', GPSLongitudeRef: 'W', GPSLongitude: '79/1 58/1 5553/100' },
};
/** Bytes a polyglot would hide after the image's end: the start of a ZIP archive. */
export const TRAILING_JUNK = Buffer.from('PK\u0003\u0004 this is not part of the image <script>alert(1)</script>', 'latin1');

function jpegSegment(marker: number, payload: Buffer): Buffer {
  const header = Buffer.from([0xff, marker, 0, 0]);
  header.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([header, payload]);
}

/** A JPEG with EXIF (GPS), XMP, an ICC profile, IPTC, a comment, and junk after its end. */
export async function makeJpegWithMetadata(width = 64, height = 48): Promise<Buffer> {
  const jpeg = await raw(width, height).jpeg({ quality: 90 }).withExif(GPS_EXIF).withXmp(XMP).withIccProfile('p3').toBuffer();
  const iptc = jpegSegment(
    0xed,
    Buffer.concat([
      Buffer.from('Photoshop 3.0\x008BIM\x04\x04\x00\x00\x00\x00\x00\x0b', 'latin1'),
      Buffer.from([0x1c, 2, 80, 0, 6]),
      Buffer.from('Secret\x00', 'latin1'),
    ]),
  );
  const comment = jpegSegment(0xfe, Buffer.from('Secret comment'));
  return Buffer.concat([jpeg.subarray(0, 2), iptc, comment, jpeg.subarray(2), TRAILING_JUNK]);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlibCrc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG with this EXIF block (as `exif-blob.ts` makes it, "Exif\0\0" first) in an eXIf chunk after its header. */
export function withPngExif(png: Buffer, exif: Buffer): Buffer {
  const afterHeader = 8 + 25; // signature + IHDR
  return Buffer.concat([png.subarray(0, afterHeader), pngChunk('eXIf', exif.subarray(6)), png.subarray(afterHeader)]);
}

/** A PNG with EXIF, XMP, text and time chunks, an ICC profile, and junk after IEND. */
export async function makePngWithMetadata(width = 40, height = 30): Promise<Buffer> {
  const png = await raw(width, height, 4).png().withExif(GPS_EXIF).withXmp(XMP).withIccProfile('p3').toBuffer();
  const afterHeader = 8 + 25; // signature + IHDR
  const extra = Buffer.concat([
    pngChunk('tEXt', Buffer.from('Author\0Secret Person')),
    pngChunk('tIME', Buffer.from([7, 234, 1, 2, 3, 4, 5])),
  ]);
  return Buffer.concat([png.subarray(0, afterHeader), extra, png.subarray(afterHeader), TRAILING_JUNK]);
}

/** An animated GIF with a comment, an XMP application extension, and junk after the trailer. */
export async function makeGifWithMetadata(): Promise<Buffer> {
  const gif = await makeAnimated('gif', 24, 16, 3);
  const packed = gif[10] ?? 0;
  const afterHeader = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);
  const text = Buffer.from('Secret comment');
  const commentBlock = Buffer.concat([Buffer.from([0x21, 0xfe, text.length]), text, Buffer.from([0])]);
  const xmpData = Buffer.from(XMP);
  const xmpBlock = Buffer.concat([
    Buffer.from([0x21, 0xff, 11]),
    Buffer.from('XMP DataXMP'),
    Buffer.from([xmpData.length & 0xff]),
    xmpData.subarray(0, xmpData.length & 0xff),
    Buffer.from([0]),
  ]);
  return Buffer.concat([gif.subarray(0, afterHeader), commentBlock, xmpBlock, gif.subarray(afterHeader), TRAILING_JUNK]);
}

/** A WebP with EXIF, XMP and an ICC profile, and junk after the RIFF. */
export async function makeWebpWithMetadata(): Promise<Buffer> {
  const webp = await raw(40, 30).webp({ quality: 80 }).withExif(GPS_EXIF).withXmp(XMP).withIccProfile('p3').toBuffer();
  return Buffer.concat([webp, TRAILING_JUNK]);
}

/** An AVIF with EXIF and XMP items, and junk after its last box. */
export async function makeAvifWithMetadata(): Promise<Buffer> {
  const avif = await raw(40, 30).avif({ quality: 50, effort: 0 }).withExif(GPS_EXIF).withXmp(XMP).toBuffer();
  return Buffer.concat([avif, TRAILING_JUNK]);
}

/** A BMP written by hand: 24-bit, 8-bit paletted, or 32-bit with an alpha mask; bottom-up unless `topDown`. */
export function makeBmp(width: number, height: number, bits: 8 | 24 | 32, options: { topDown?: boolean } = {}): Buffer {
  const pixels = gradient(width, height, 4);
  const infoSize = bits === 32 ? 56 : 40;
  const paletteBytes = bits === 8 ? 256 * 4 : 0;
  const rowBytes = floor((bits * width + 31) / 32) * 4;
  const dataOffset = 14 + infoSize + paletteBytes;
  const file = Buffer.alloc(dataOffset + rowBytes * height);
  file.write('BM', 0, 'latin1');
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(dataOffset, 10);
  file.writeUInt32LE(infoSize, 14);
  file.writeInt32LE(width, 18);
  file.writeInt32LE(options.topDown ? -height : height, 22);
  file.writeUInt16LE(1, 26);
  file.writeUInt16LE(bits, 28);
  file.writeUInt32LE(bits === 32 ? 3 : 0, 30);
  if (bits === 32) {
    file.writeUInt32LE(0x00ff0000, 54);
    file.writeUInt32LE(0x0000ff00, 58);
    file.writeUInt32LE(0x000000ff, 62);
    file.writeUInt32LE(0xff000000, 66);
  }
  if (bits === 8) {
    for (let index = 0; index < 256; index += 1)
      file.writeUInt32LE(((index & 0xe0) << 16) | ((index & 0x1c) << 11) | ((index & 0x03) << 6), 54 + index * 4);
  }
  for (let y = 0; y < height; y += 1) {
    const row = dataOffset + (options.topDown ? y : height - 1 - y) * rowBytes;
    for (let x = 0; x < width; x += 1) {
      const at = (y * width + x) * 4;
      const [r, g, b, a] = [pixels[at] ?? 0, pixels[at + 1] ?? 0, pixels[at + 2] ?? 0, pixels[at + 3] ?? 0];
      if (bits === 8) file[row + x] = (r & 0xe0) | ((g & 0xe0) >> 3) | (b >> 6);
      else if (bits === 24) file.set([b, g, r], row + x * 3);
      else file.set([b, g, r, a], row + x * 4);
    }
  }
  return file;
}

/**
 * A 1-bit BMP of stripes: the most pixels a byte can carry (an upload of 10 MB holds 80 MP), each costing its
 * decoder (bmp-ts) a JavaScript step.
 */
export function makeMonochromeBmp(width: number, height: number): Buffer {
  const rowBytes = floor((width + 31) / 32) * 4;
  const dataOffset = 14 + 40 + 2 * 4;
  const file = Buffer.alloc(dataOffset + rowBytes * height, 0x0f);
  file.fill(0, 0, dataOffset);
  file.write('BM', 0, 'latin1');
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(dataOffset, 10);
  file.writeUInt32LE(40, 14);
  file.writeInt32LE(width, 18);
  file.writeInt32LE(height, 22);
  file.writeUInt16LE(1, 26);
  file.writeUInt16LE(1, 28);
  file.writeUInt32LE(2, 46);
  file.writeUInt32LE(0x00ffffff, 58);
  return file;
}

/** A CMYK JPEG, as print workflows make them. */
export async function makeCmykJpeg(width: number, height: number): Promise<Buffer> {
  return raw(width, height).toColourspace('cmyk').jpeg({ quality: 90 }).toBuffer();
}

export async function makeGreyPng(width: number, height: number): Promise<Buffer> {
  return raw(width, height).toColourspace('b-w').png().toBuffer();
}

/** A deterministic pseudo-random generator (mulberry32): the same seed, the same numbers. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A picture of its own for each seed, with the structure of a photograph (smooth shapes of several sizes, light and
 * shade): pictures of different seeds are as unlike as different photos, for the perceptual hash's sake.
 */
export async function makePhoto(seed: number, width = 800, height = 600): Promise<Buffer> {
  // drawn at a quarter of the size, then scaled up smoothly (as fast in a test as the picture needs)
  const w = ceil(width / 4);
  const h = ceil(height / 4);
  const random = seeded(seed);
  const waves = Array.from({ length: 6 }, () => ({
    fx: (random() * 6 + 0.5) / w,
    fy: (random() * 6 + 0.5) / h,
    phase: random() * PI * 2,
    weight: [random() * 90, random() * 90, random() * 90],
  }));
  const blobs = Array.from({ length: 8 }, () => ({
    x: random() * w,
    y: random() * h,
    r: (0.05 + random() * 0.2) * w,
    colour: [random() * 255, random() * 255, random() * 255],
  }));
  const pixels = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y += 1) {
    for (let x = 0; x < w; x += 1) {
      const colour = [128, 128, 128];
      for (const wave of waves) {
        const value = sin(2 * PI * (wave.fx * x + wave.fy * y) + wave.phase);
        for (let c = 0; c < 3; c += 1) colour[c] = (colour[c] ?? 0) + value * (wave.weight[c] ?? 0) * 0.4;
      }
      for (const blob of blobs) {
        const near = max(0, 1 - hypot(x - blob.x, y - blob.y) / blob.r);
        for (let c = 0; c < 3; c += 1) colour[c] = (colour[c] ?? 0) * (1 - near) + (blob.colour[c] ?? 0) * near;
      }
      for (let c = 0; c < 3; c += 1) pixels[(y * w + x) * 3 + c] = max(0, min(255, round(colour[c] ?? 0)));
    }
  }
  return sharp(pixels, { raw: { width: w, height: h, channels: 3 } })
    .resize(width, height, { kernel: 'cubic' })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/**
 * Noise, opaque (3 or 4 channels), as a PNG: what frames a photo in the moderation tests. Gaussian (mean 128,
 * sigma 60, as sharp's own noise) but seeded, so that a test sees the same noise at every run: sharp's differs each
 * time, and a detector's edge case met once in forty runs made a test fail by chance.
 */
export function makeNoise(width: number, height: number, channels: 3 | 4 = 3, seed = width * 7919 + height): Promise<Buffer> {
  const random = seeded(seed);
  const data = Buffer.alloc(width * height * channels, 255);
  for (let pixel = 0; pixel < width * height; pixel += 1) {
    // Box-Muller, a value for each colour channel
    for (let channel = 0; channel < 3; channel += 1) {
      const value = 128 + 60 * sqrt(-2 * log(1 - random())) * cos(2 * PI * random());
      data[pixel * channels + channel] = max(0, min(255, round(value)));
    }
  }
  return sharp(data, { raw: { width, height, channels } }).png().toBuffer();
}

/** Pictures laid on a page of `width` x `height` (a colour, or a picture of that size), to encode as the caller likes. */
export function laidOn(
  under: string | Buffer,
  width: number,
  height: number,
  over: Array<{ input: Buffer; left: number; top: number }>,
): sharp.Sharp {
  const page = typeof under === 'string' ? sharp({ create: { width, height, channels: 3, background: under } }) : sharp(under);
  return page.composite(over);
}

/**
 * A screenshot of a picture in a browser's dark image viewer (1040 x 810): a light toolbar with an address field across
 * the top, the picture 720 px wide at (160, 180) on the dark page below it.
 */
export async function inAViewer(picture: Buffer): Promise<sharp.Sharp> {
  const field = await sharp({ create: { width: 600, height: 30, channels: 3, background: '#ffffff' } })
    .png()
    .toBuffer();
  const toolbar = await sharp({ create: { width: 1040, height: 64, channels: 3, background: '#dee1e6' } })
    .composite([{ input: field, left: 100, top: 17 }])
    .png()
    .toBuffer();
  const shown = await sharp(picture).resize({ width: 720 }).toBuffer();
  return laidOn('#0e0e0e', 1040, 810, [
    { input: toolbar, left: 0, top: 0 },
    { input: shown, left: 160, top: 180 },
  ]);
}
