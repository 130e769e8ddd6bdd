import sharp, { type Sharp, type SharpOptions } from 'sharp';
import type { EncodedImage, StoredOriginal } from '../core/ports';
import type { Budget } from './budget';
import { completeBmpHeader } from './decode-foreign';
import { encode } from './encode';
import { DecodeTimeout, foreignDecoder } from './foreign-decoder';
import { fitGifScreen } from './gif-screen';
import type { Milestones } from './imaging-run';
import { fromPixels, fromRaw, toRaw, type RawImage } from './pixels';
import { DECODE_OPTIONS, keepsOrientation, OUTPUTS, unsupported, type Probe, type WebFormat } from './probe';
import { stripMetadata } from './strip-metadata';

/**
 * The imaging's first stages after the probe: the original as stored, and the pixels everything else is made from.
 * A still picture is decoded once, at the working size (the renditions' and the copies'); an animation is not decoded
 * here: its renditions are animated pipelines of the stored original, which keeps its palette.
 */

export type Decoded =
  | { kind: 'still'; original: StoredOriginal; working: RawImage }
  | { kind: 'animation'; original: StoredOriginal; stored: Uint8Array };

/** What the decode needs to know of the settings (`ImagingSettings`). */
export interface DecodeSettings {
  maxPixels: number;
  maxHeicPixels: number;
  thumbSize: number;
  mediumWidth: number;
  keepMetadata: boolean;
}

/** The original as stored, and the working pixels (or the animation's stored bytes). */
export async function decode(
  input: Uint8Array,
  probe: Probe,
  size: { width: number; height: number },
  settings: DecodeSettings,
  budget: Budget,
  reached: Milestones,
): Promise<Decoded> {
  if (probe.frames > 1) return decodeAnimation(input, probe, size, settings, budget, reached);
  return probe.format === probe.output && keepsOrientation(probe) && size.width === probe.width
    ? decodeKept(input, probe, settings, budget, reached)
    : decodeConverted(input, probe, size, settings, budget, reached);
}

/**
 * A web-format original kept as sent, its metadata removed: its pixels decoded once, at the size the renditions need
 * (JPEG and WebP shrink on load), while the caller hashes its bytes.
 */
async function decodeKept(
  input: Uint8Array,
  probe: Probe,
  settings: DecodeSettings,
  budget: Budget,
  reached: Milestones,
): Promise<Decoded> {
  const stored = storedBytes(input, probe, settings);
  const width = workingWidth(probe.width, probe.height, settings);
  // never enlarged: a GIF whose frames decode smaller than its header said (its screen) is not blown up to it
  const decoding = decodedWhole(
    (options) => sharp(stored, options).autoOrient().resize({ width, withoutEnlargement: true }),
    probe,
    'uchar',
    budget,
  );
  reached.decoding();
  // every step that changes the bytes (metadata removal, a GIF's screen) works on a copy: the same object means the same bytes
  const original = { image: keptImage(stored, probe), asSent: stored === input };
  reached.original(original);
  return { kind: 'still', original, working: await decoding };
}

/** Turned upright, downscaled or converted: decoded whole once, the original encoded from it, the working copy too. */
async function decodeConverted(
  input: Uint8Array,
  probe: Probe,
  size: { width: number },
  settings: DecodeSettings,
  budget: Budget,
  reached: Milestones,
): Promise<Decoded> {
  const decodingWhole = decodeWhole(input, probe, size, settings, budget);
  reached.decoding();
  const whole = await decodingWhole;
  budget.check();
  const encodingOriginal = encode(fromRaw(whole), probe, 'original', budget, settings.keepMetadata);
  const width = workingWidth(whole.info.width, whole.info.height, settings);
  const working =
    whole.depth === 'uchar' && width === whole.info.width
      ? whole
      : await toRaw(fromRaw(whole).resize({ width }), probe, 'uchar', budget);
  const original = { image: await encodingOriginal, asSent: false };
  reached.original(original);
  return { kind: 'still', original, working };
}

/** An animation: its stored original (downscaled by an animated pipeline when a width was asked for). */
async function decodeAnimation(
  input: Uint8Array,
  probe: Probe,
  size: { width: number },
  settings: DecodeSettings,
  budget: Budget,
  reached: Milestones,
): Promise<Decoded> {
  const stored = storedBytes(input, probe, settings);
  // several pipelines, each of every frame: the caller's work goes alongside them all
  reached.decoding();
  const image =
    size.width === probe.width
      ? keptImage(stored, probe)
      : await encode(animated(stored).resize({ width: size.width }), probe, 'original', budget, settings.keepMetadata);
  const original = { image, asSent: image.bytes === input };
  reached.original(original);
  return { kind: 'animation', original, stored: image.bytes };
}

/** A pipeline of every frame of an animation. */
export function animated(stored: Uint8Array): Sharp {
  return sharp(stored, { ...DECODE_OPTIONS, animated: true });
}

/** The stored original of a kept upload, as the record and the answer describe it. */
function keptImage(stored: Uint8Array, probe: Probe): EncodedImage {
  return {
    bytes: stored,
    width: probe.width,
    height: probe.height,
    ...OUTPUTS[probe.output],
    bits: probe.sixteenBit && probe.frames === 1 ? 16 : 8,
    channels: probe.channels,
  };
}

/**
 * The stored original of a kept upload: its metadata removed, and a GIF's logical screen set to the size decoded
 * (browsers size a GIF by its screen: one of 20000x20000 around a 1x1 frame would make them allocate 400 MP).
 */
function storedBytes(input: Uint8Array, probe: Probe, settings: DecodeSettings): Uint8Array {
  const stored = stripMetadata(probe.format as WebFormat, input, {
    keepMetadata: settings.keepMetadata,
    orientation: probe.orientation,
  });
  return probe.format === 'gif' ? fitGifScreen(stored, probe.width, probe.height) : stored;
}

/** Upright pixels at the stored size; 16 bits kept for a 16-bit original. */
async function decodeWhole(
  input: Uint8Array,
  probe: Probe,
  size: { width: number },
  settings: DecodeSettings,
  budget: Budget,
): Promise<RawImage> {
  let image: Sharp;
  if (probe.format === 'bmp' || probe.format === 'heic') {
    const picture =
      probe.format === 'bmp'
        ? { format: probe.format, bytes: input, header: completeBmpHeader(input) }
        : { format: probe.format, bytes: input, maxPixels: settings.maxHeicPixels };
    const pixels = await foreignDecoder
      .decode(picture, () => budget.leftMs(), budget.signal)
      .catch((error: unknown) => {
        throw error instanceof DecodeTimeout ? budget.exceeded() : error;
      });
    if (pixels.width * pixels.height > settings.maxPixels) throw unsupported();
    image = fromPixels(pixels);
    if (probe.format === 'heic') image = image.flatten({ background: '#ffffff' });
  } else {
    const depth = probe.sixteenBit && probe.output === 'png' ? 'ushort' : 'uchar';
    const resized = (image: Sharp): Sharp => (size.width === probe.width ? image : image.resize({ width: size.width }));
    return decodedWhole((options) => resized(sharp(input, options).autoOrient()), probe, depth, budget);
  }
  if (size.width !== probe.width) image = image.resize({ width: size.width });
  return toRaw(image, probe, 'uchar', budget);
}

/** libjpeg's words for scan data that ends before the picture does (a JPEG cut short, its end marker put back). */
const CUT_SHORT = /premature end of (data segment|JPEG file)/i;

/**
 * The raw pixels of a pipeline over the upload's bytes, which must decode whole. A JPEG is decoded failing on libjpeg's
 * warnings: one whose scan ends early is refused (415), where its missing rows would be stored grey; on any other
 * warning (camera files: extraneous bytes before a marker) it is decoded again, failing on errors only.
 */
async function decodedWhole(
  pipeline: (options: SharpOptions) => Sharp,
  probe: Probe,
  depth: 'uchar' | 'ushort',
  budget: Budget,
): Promise<RawImage> {
  if (probe.format !== 'jpeg') return toRaw(pipeline(DECODE_OPTIONS), probe, depth, budget);
  try {
    return await toRaw(pipeline({ ...DECODE_OPTIONS, failOn: 'warning' }), probe, depth, budget);
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    if (CUT_SHORT.test(message)) throw unsupported(error);
    if (!message.startsWith('VipsJpeg:') || budget.leftMs() === 0) throw error;
    return toRaw(pipeline(DECODE_OPTIONS), probe, depth, budget);
  }
}

/**
 * The width at which one decode serves both renditions: the medium's, or wider when the medium would be shorter
 * than the thumb (a panorama, or 16:9 at 500 px), never wider than the image.
 */
function workingWidth(width: number, height: number, { mediumWidth, thumbSize }: DecodeSettings): number {
  return Math.min(width, Math.max(mediumWidth, Math.ceil((thumbSize * width) / height)));
}
