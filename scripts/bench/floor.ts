import sharp from 'sharp';

sharp.cache(false);

/**
 * The least work any implementation must do to make the same two renditions: decode once, at the smallest size that
 * serves both (shrink-on-load where the format has it), and encode them with the same encoder settings; for
 * animations, the two animated pipelines; turned upright by its EXIF orientation. No md5, no metadata, no checks, no
 * stored original, no EXIF.
 */
export async function floorJob(input: Buffer, thumbSize = 320, mediumWidth = 500): Promise<void> {
  const meta = await sharp(input).metadata();
  const format = meta.format === 'heif' ? 'avif' : meta.format;
  const encode = (image: sharp.Sharp): Promise<Buffer> => {
    if (format === 'jpeg') return image.jpeg({ quality: 82, mozjpeg: false }).toBuffer();
    if (format === 'png') return image.png().toBuffer();
    if (format === 'gif') return image.gif({ effort: 1 }).toBuffer();
    return image.webp({ quality: 80 }).toBuffer();
  };
  if ((meta.pages ?? 1) > 1) {
    await Promise.all([
      encode(sharp(input, { animated: true }).resize(thumbSize, thumbSize, { fit: 'cover' })),
      encode(sharp(input, { animated: true }).resize({ width: mediumWidth, withoutEnlargement: true })),
    ]);
    return;
  }
  // as displayed: a phone photo's EXIF orientation turns it
  const [width, height] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
  const working = Math.min(width, Math.max(mediumWidth, Math.ceil((thumbSize * width) / height)));
  const decoded = await sharp(input).autoOrient().resize({ width: working }).raw().toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: decoded.info.width, height: decoded.info.height, channels: decoded.info.channels } };
  await Promise.all([
    encode(
      working === mediumWidth
        ? sharp(decoded.data, raw)
        : sharp(decoded.data, raw).resize({ width: Math.min(mediumWidth, working) }),
    ),
    encode(sharp(decoded.data, raw).resize(thumbSize, thumbSize, { fit: 'cover' })),
  ]);
}
