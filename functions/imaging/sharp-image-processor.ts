import sharp, { type Sharp } from 'sharp';
import { ServiceError } from '../core/errors';
import type { EncodedImage, ImageProcessor, ImagingRun, ProcessedImage, ProcessOptions } from '../core/ports';
import { awaitedLater, settled } from '../core/settle';
import { Budget } from './budget';
import { completeBmpHeader } from './decode-foreign';
import { encode } from './encode';
import { DecodeTimeout, foreignDecoder } from './foreign-decoder';
import { fitGifScreen } from './gif-screen';
import { imagingRun, type Milestones } from './imaging-run';
import type { PictureClassifier } from './nsfw-classifier';
import { framesPerceptual, fromPixels, fromRaw, toRaw, workingPerceptual, type RawImage } from './pixel-copies';
import {
  DECODE_OPTIONS,
  keepsOrientation,
  OUTPUTS,
  probeOf,
  storedExtensionOf,
  targetSizeOf,
  unsupported,
  type Probe,
  type ProbeLimits,
  type WebFormat,
} from './probe';
import { readExif } from './read-exif';
import { collectGarbageSoon } from './release-memory';
import { classify, classifyFrames } from './scoring';
import { stripMetadata } from './strip-metadata';

// Lambda runs one job at a time; libvips' operation cache would only hold memory between jobs.
sharp.cache(false);

export interface ImagingSettings extends ProbeLimits {
  /** Pixels of one frame, and of all frames together (a GIF's screen as browsers size it). */
  maxPixels: number;
  /** Pixels of a HEIC/HEIF image: its decoder (WebAssembly) needs about 40 MiB and 160 ms per megapixel. */
  maxHeicPixels: number;
  maxFrames: number;
  /** The whole imaging of one upload stops after this; the upload answers 413, code 615. */
  timeLimitSeconds: number;
  thumbSize: number;
  mediumWidth: number;
  /** Keep EXIF/XMP/IPTC in stored originals. */
  keepMetadata: boolean;
  /** Leave out the perceptual hashes (only `npm run bench` does, to weigh what they cost). */
  withoutPerceptual?: boolean;
}

/** A job whose decoded pixels came to more than this lets them go at once when it is done (`collectGarbageSoon`). */
const RELEASED_PIXEL_BYTES = 16 * 1024 * 1024;

/**
 * The only code that turns bytes into pixels. Checks limits from headers before decoding, keeps web-format originals
 * byte for byte (metadata removed), and makes the renditions from one decode at reduced size.
 */
export class SharpImageProcessor implements ImageProcessor {
  /** With a classifier, every upload gets an NSFW score (`docs/moderation.md`), from pixels already decoded. */
  constructor(
    private readonly settings: ImagingSettings,
    private readonly classifier?: PictureClassifier,
  ) {}

  storedExtension(input: Uint8Array): string {
    return storedExtensionOf(input);
  }

  start(input: Uint8Array, options: ProcessOptions): ImagingRun {
    return imagingRun((reached) => this.run(input, options, reached));
  }

  /** The whole imaging at once (tests and tools): `start(...).processed`. */
  process(input: Uint8Array, options: ProcessOptions): Promise<ProcessedImage> {
    return this.start(input, options).processed;
  }

  private async run(input: Uint8Array, options: ProcessOptions, reached: Milestones): Promise<ProcessedImage> {
    const budget = new Budget(this.settings.timeLimitSeconds);
    try {
      const probe = await probeOf(input, this.settings);
      const size = targetSizeOf(probe, options.targetWidth);
      let processed: ProcessedImage;
      if (probe.frames > 1) processed = await this.processAnimated(input, probe, size, budget, reached);
      else if (probe.format === probe.output && keepsOrientation(probe) && size.width === probe.width)
        processed = await this.processKept(input, probe, budget, reached);
      else processed = await this.processConverted(input, probe, size, budget, reached);
      budget.check();
      if (budget.decodedBytes > RELEASED_PIXEL_BYTES)
        void settled(processed.nsfwScoring ?? Promise.resolve()).then(collectGarbageSoon);
      return processed;
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      // libvips' timeout ("timeout: 6% complete"); or, once the time is spent, whatever a stopped pipeline said instead
      // ("Unknown error", "wbuffer_write: write failed"): libvips keeps one buffer of errors for every pipeline, and
      // of several stopped at once (this job's renditions, or another upload's) one may read the others' message
      if (budget.leftMs() === 0 || (error instanceof Error && /^timeout\b/m.test(error.message))) throw budget.exceeded();
      throw unsupported(error);
    }
  }

  /**
   * The stored original is the upload with its metadata removed. Its pixels are decoded once, at the size the
   * renditions need (JPEG and WebP shrink on load), while the md5s are computed on this thread.
   */
  private async processKept(input: Uint8Array, probe: Probe, budget: Budget, reached: Milestones): Promise<ProcessedImage> {
    const stored = this.storedBytes(input, probe);
    const workingWidth = this.workingWidth(probe.width, probe.height);
    // never enlarged: a GIF whose frames decode smaller than its header said (its screen) is not blown up to it
    const shrunk = sharp(stored, DECODE_OPTIONS).autoOrient().resize({ width: workingWidth, withoutEnlargement: true });
    const decoding = toRaw(shrunk, probe, 'uchar', budget);
    reached.decoding();
    const original: EncodedImage = {
      bytes: stored,
      width: probe.width,
      height: probe.height,
      ...OUTPUTS[probe.output],
      bits: probe.sixteenBit ? 16 : 8,
      channels: probe.channels,
    };
    // every step that changes the bytes (metadata removal, a GIF's screen) works on a copy: the same object means the same bytes
    reached.original({ image: original, asSent: stored === input });
    const working = await decoding;
    const { thumb, medium, perceptual, nsfwScoring } = await this.fromWorking(working, original, probe, budget);
    return { original, thumb, medium, exif: readExif(probe.exif), animated: false, perceptual, nsfwScoring };
  }

  /**
   * The stored original of a kept upload: its metadata removed, and a GIF's logical screen set to the size decoded
   * (browsers size a GIF by its screen: one of 20000x20000 around a 1x1 frame would make them allocate 400 MP).
   */
  private storedBytes(input: Uint8Array, probe: Probe): Uint8Array {
    const stored = stripMetadata(probe.format as WebFormat, input, {
      keepMetadata: this.settings.keepMetadata,
      orientation: probe.orientation,
    });
    return probe.format === 'gif' ? fitGifScreen(stored, probe.width, probe.height) : stored;
  }

  /** Turned upright, downscaled or converted: decoded whole once, then every file is made from those pixels. */
  private async processConverted(
    input: Uint8Array,
    probe: Probe,
    size: { width: number; height: number },
    budget: Budget,
    reached: Milestones,
  ): Promise<ProcessedImage> {
    const decodingWhole = this.decodeWhole(input, probe, size, budget);
    reached.decoding();
    const whole = await decodingWhole;
    budget.check();
    const encodingOriginal = encode(fromRaw(whole), probe, 'original', budget, this.settings.keepMetadata);
    const workingWidth = this.workingWidth(whole.info.width, whole.info.height);
    const working =
      whole.depth === 'uchar' && workingWidth === whole.info.width
        ? whole
        : await toRaw(fromRaw(whole).resize({ width: workingWidth }), probe, 'uchar', budget);
    const original = await encodingOriginal;
    reached.original({ image: original, asSent: false });
    const { thumb, medium, perceptual, nsfwScoring } = await this.fromWorking(working, original, probe, budget);
    return { original, thumb, medium, exif: readExif(probe.exif), animated: false, perceptual, nsfwScoring };
  }

  /**
   * What is made from the working pixels: the renditions, on libvips' threads, and the classifier's score, on its
   * worker's, while this thread computes the perceptual hashes. The pixels are handed to the classifier before the
   * hashes start, so that the model runs beside them rather than after them (`docs/moderation.md`, "Cost"). The score
   * is not waited for: the upload puts the renditions while the model runs.
   */
  private async fromWorking(
    working: RawImage,
    original: EncodedImage,
    probe: Probe,
    budget: Budget,
  ): Promise<Pick<ProcessedImage, 'thumb' | 'medium' | 'perceptual' | 'nsfwScoring'>> {
    const nsfwScoring = classify(this.classifier, working, budget);
    // waited for after the hashes, which take turns of the event loop: a failure meanwhile is not an unhandled one
    const rendering = awaitedLater(this.renditions(working, original, probe, budget));
    const perceptual = this.settings.withoutPerceptual ? undefined : await workingPerceptual(working, budget);
    const { thumb, medium } = await rendering;
    return { thumb, medium, perceptual, nsfwScoring };
  }

  /** Upright pixels at the stored size; 16 bits kept for a 16-bit original. */
  private async decodeWhole(input: Uint8Array, probe: Probe, size: { width: number }, budget: Budget): Promise<RawImage> {
    let image: Sharp;
    if (probe.format === 'bmp' || probe.format === 'heic') {
      const picture =
        probe.format === 'bmp'
          ? { format: probe.format, bytes: input, header: completeBmpHeader(input) }
          : { format: probe.format, bytes: input, maxPixels: this.settings.maxHeicPixels };
      const pixels = await foreignDecoder
        .decode(picture, () => budget.leftMs())
        .catch((error: unknown) => {
          throw error instanceof DecodeTimeout ? budget.exceeded() : error;
        });
      if (pixels.width * pixels.height > this.settings.maxPixels) throw unsupported();
      image = fromPixels(pixels);
      if (probe.format === 'heic') image = image.flatten({ background: '#ffffff' });
    } else image = sharp(input, DECODE_OPTIONS).autoOrient();
    if (size.width !== probe.width) image = image.resize({ width: size.width });
    return toRaw(image, probe, probe.sixteenBit && probe.output === 'png' ? 'ushort' : 'uchar', budget);
  }

  /**
   * The width at which one decode serves both renditions: the medium's, or wider when the medium would be shorter
   * than the thumb (a panorama, or 16:9 at 500 px), never wider than the image.
   */
  private workingWidth(width: number, height: number): number {
    const { mediumWidth, thumbSize } = this.settings;
    return Math.min(width, Math.max(mediumWidth, Math.ceil((thumbSize * width) / height)));
  }

  /** Thumb and medium from decoded pixels; a medium of the original's own size is the original itself. */
  private async renditions(
    working: RawImage,
    original: EncodedImage,
    probe: Probe,
    budget: Budget,
  ): Promise<{ thumb: EncodedImage; medium: EncodedImage }> {
    const side = this.settings.thumbSize;
    const mediumWidth = Math.min(this.settings.mediumWidth, original.width);
    const [thumb, medium] = await Promise.all([
      encode(
        fromRaw(working).resize(side, side, { fit: 'cover', position: 'centre' }),
        probe,
        'rendition',
        budget,
        this.settings.keepMetadata,
      ),
      mediumWidth === original.width
        ? original
        : encode(
            working.info.width === mediumWidth ? fromRaw(working) : fromRaw(working).resize({ width: mediumWidth }),
            probe,
            'rendition',
            budget,
            this.settings.keepMetadata,
          ),
    ]);
    return { thumb, medium };
  }

  /** GIF and WebP animations: two animated pipelines from the stored original, which keeps the palette. */
  private async processAnimated(
    input: Uint8Array,
    probe: Probe,
    size: { width: number; height: number },
    budget: Budget,
    reached: Milestones,
  ): Promise<ProcessedImage> {
    let stored = this.storedBytes(input, probe);
    const animated = (): Sharp => sharp(stored, { ...DECODE_OPTIONS, animated: true });
    // several pipelines, each of every frame: the caller's work goes alongside them all
    reached.decoding();
    let original: EncodedImage;
    if (size.width !== probe.width) {
      original = await encode(animated().resize({ width: size.width }), probe, 'original', budget, this.settings.keepMetadata);
      stored = original.bytes;
    } else {
      original = {
        bytes: stored,
        width: probe.width,
        height: probe.height,
        ...OUTPUTS[probe.output],
        bits: 8,
        channels: probe.channels,
      };
    }
    reached.original({ image: original, asSent: stored === input });
    const side = this.settings.thumbSize;
    const mediumWidth = Math.min(this.settings.mediumWidth, size.width);
    const nsfwScoring = classifyFrames(this.classifier, stored, probe, budget);
    const [thumb, medium, perceptual] = await Promise.all([
      encode(
        animated().resize(side, side, { fit: 'cover', position: 'centre' }),
        probe,
        'rendition',
        budget,
        this.settings.keepMetadata,
      ),
      mediumWidth === original.width
        ? original
        : encode(animated().resize({ width: mediumWidth }), probe, 'rendition', budget, this.settings.keepMetadata),
      this.settings.withoutPerceptual ? undefined : framesPerceptual(stored, probe, budget),
    ]);
    return { original, thumb, medium, exif: readExif(probe.exif), animated: true, nsfwScoring, perceptual };
  }
}
