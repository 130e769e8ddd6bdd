import sharp, { type Sharp } from 'sharp';
import { ServiceError } from '../core/errors';
import type { EncodedImage, ImageProcessor, ImagingRun, ProcessedImage, ProcessOptions } from '../core/ports';
import { awaitedLater, settled, valueNowOr } from '../core/settle';
import { fingerprintOf } from '../fingerprint/fingerprint';
import { Budget } from './budget';
import { classify, classifyFrames } from './classifier-input';
import { animated, decode, type Decoded } from './decode';
import { encode } from './encode';
import { frameCopies, stillCopy } from './fingerprint-copies';
import { imagingRun, type Milestones } from './imaging-run';
import type { PictureClassifier } from './nsfw-classifier';
import { fromRaw } from './pixels';
import { DECODE_OPTIONS, probeOf, storedExtensionOf, targetSizeOf, unsupported, type Probe, type ProbeLimits } from './probe';
import { readExif } from './read-exif';
import { collectGarbageSoon } from './release-memory';

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
  /** Leave out the fingerprint (only `npm run bench` does, to weigh what it costs). */
  withoutPerceptual?: boolean;
}

/** A job whose decoded pixels came to more than this lets them go at once when it is done (`collectGarbageSoon`). */
const RELEASED_PIXEL_BYTES = 16 * 1024 * 1024;

/**
 * The imaging of one upload, as a line of stages, each run once: the probe of its header (limits checked before any
 * decode), the decode at the working size with the original as stored (`decode.ts`), the renditions, the classifier's
 * input, the copies the fingerprint reads and the fingerprint. A still picture and an animation differ only in how
 * they are decoded and what the later stages read: the working pixels, or the stored animation's frames.
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

  /**
   * The stages in their order. The renditions run on libvips' threads and the classifier on its worker while this
   * thread makes the fingerprint: the classifier is handed its input before the fingerprint starts, so that the model
   * runs beside it rather than after it (`docs/moderation.md`, "Cost"), and its score is not waited for: the upload
   * puts the renditions while the model runs.
   */
  private async run(input: Uint8Array, options: ProcessOptions, reached: Milestones): Promise<ProcessedImage> {
    const budget = new Budget(this.settings.timeLimitSeconds);
    try {
      // a client over its flood limit gets nothing more made: a decode that can be ended is (`Budget.stop`)
      void options.cleared?.catch((refusal: unknown) => {
        if (refusal instanceof ServiceError) budget.stop(refusal);
      });
      // read at the fingerprint, if the imaging gets there; a failure to read the list only means comparing
      void options.compared?.catch(() => undefined);
      const probe = await probeOf(input, this.settings);
      // a still picture decodes while the client's flood slot is taken; an animation, every stage per frame, after
      if (probe.frames > 1) await options.cleared;
      const decoded = await decode(input, probe, targetSizeOf(probe, options.targetWidth), this.settings, budget, reached);
      await options.cleared;
      const rendering = awaitedLater(this.renditions(decoded, probe, budget));
      const nsfwScoring =
        decoded.kind === 'still'
          ? classify(this.classifier, decoded.working, budget)
          : classifyFrames(this.classifier, decoded.stored, probe, budget);
      const perceptual = this.settings.withoutPerceptual
        ? undefined
        : await fingerprintOf(
            decoded.kind === 'still'
              ? [await stillCopy(decoded.working, budget)]
              : await frameCopies(decoded.stored, probe, budget),
            budget,
            // the blocked pictures' list is not waited for: a read not done by now (a slow store) means comparing
            { compared: await valueNowOr(options.compared ?? Promise.resolve(true), true) },
          );
      const { thumb, medium } = await rendering;
      budget.check();
      if (budget.decodedBytes > RELEASED_PIXEL_BYTES) void settled(nsfwScoring ?? Promise.resolve()).then(collectGarbageSoon);
      const original = decoded.original.image;
      const exif = readExif(probe.exif);
      return { original, thumb, medium, exif, animated: decoded.kind === 'animation', perceptual, nsfwScoring };
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
   * Thumb and medium, from the working pixels or from the animation's frames (the same two pipelines either way); a
   * medium of the original's own size is the original itself. An animation's thumb, enlarged to fill its square as the
   * contract asks, holds no more frames than its pixels allow (`thumbFrames`).
   */
  private async renditions(
    decoded: Decoded,
    probe: Probe,
    budget: Budget,
  ): Promise<{ thumb: EncodedImage; medium: EncodedImage }> {
    const pipeline = (): Sharp => (decoded.kind === 'still' ? fromRaw(decoded.working) : animated(decoded.stored));
    const original = decoded.original.image;
    const side = this.settings.thumbSize;
    const mediumWidth = Math.min(this.settings.mediumWidth, original.width);
    const working = decoded.kind === 'still' ? decoded.working.info.width : original.width;
    const { keepMetadata } = this.settings;
    const frames = decoded.kind === 'still' ? 1 : thumbFrames(probe.frames, original.width * original.height, side);
    const thumbOf = (): Sharp =>
      decoded.kind === 'animation' && frames < probe.frames
        ? sharp(decoded.stored, { ...DECODE_OPTIONS, pages: frames })
        : pipeline();
    const [thumb, medium] = await Promise.all([
      encode(thumbOf().resize(side, side, { fit: 'cover', position: 'centre' }), probe, 'rendition', budget, keepMetadata),
      mediumWidth === original.width
        ? original
        : encode(
            working === mediumWidth ? pipeline() : pipeline().resize({ width: mediumWidth }),
            probe,
            'rendition',
            budget,
            keepMetadata,
          ),
    ]);
    return { thumb, medium };
  }
}

/**
 * Pixels an animation's thumb may hold beyond its own: its frames are quantised one by one, and 300 frames of 64x64
 * noise (1.2 MP, a 1.9 MB GIF) each enlarged to 320x320 came to 31 MP, minutes of work cut only by the time limit.
 */
const THUMB_ENLARGEMENT = 1.5;
/** Pixels any animation's thumb may hold, however small the animation: about ten frames of 320x320. */
const THUMB_FLOOR_PIXELS = 1_000_000;

/**
 * How many of an animation's first frames its thumb holds: all of them, unless enlarging them to the thumb's square
 * would make more than 1.5 times the animation's own pixels (or a megapixel, for a small one): then the first ones
 * that fit, at least one (`docs/imaging.md`).
 */
export function thumbFrames(frames: number, framePixels: number, side: number): number {
  const allowed = Math.max(frames * framePixels * THUMB_ENLARGEMENT, THUMB_FLOOR_PIXELS);
  return Math.min(frames, Math.max(1, Math.floor(allowed / (side * side))));
}
