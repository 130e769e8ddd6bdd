import sharp from 'sharp';

/** Test images made from code: a gradient with a marker in the top-left corner, so orientation can be checked. */
function gradient(width: number, height: number, channels: 3 | 4 = 3): Buffer {
  const pixels = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const offset = (y * width + x) * channels;
      const marker = x < width / 4 && y < height / 4;
      pixels[offset] = marker ? 255 : Math.round((x / width) * 200);
      pixels[offset + 1] = marker ? 0 : Math.round((y / height) * 200);
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
export async function makeAnimated(format: 'gif' | 'webp', width: number, height: number, frames: number): Promise<Buffer> {
  const frameBytes = width * height * 4;
  const all = Buffer.alloc(frameBytes * frames);
  for (let frame = 0; frame < frames; frame += 1) {
    const pixels = gradient(width, height, 4);
    // a white bar that moves one step a frame, so no two frames are alike
    const barX = Math.floor((frame * width) / frames);
    for (let y = 0; y < height; y += 1) {
      for (let x = barX; x < Math.min(width, barX + Math.max(1, Math.floor(width / frames))); x += 1) {
        pixels.fill(255, (y * width + x) * 4, (y * width + x) * 4 + 4);
      }
    }
    pixels.copy(all, frame * frameBytes);
  }
  const image = sharp(all, { raw: { width, height: height * frames, channels: 4, pageHeight: height } });
  const delay = Array.from({ length: frames }, () => 80);
  return (format === 'gif' ? image.gif({ loop: 0, delay }) : image.webp({ loop: 0, delay, quality: 70 })).toBuffer();
}

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
