import sharp, { type Metadata, type Sharp, type SharpOptions } from 'sharp';
import { DependencyError, UploadError } from '../core/errors';
import { md5Hex } from '../core/hashes';
import { MIN_PDQ_QUALITY, pdqHash, type PdqPixels } from '../core/pdq';
import { awaitedLater, settled } from '../core/settle';
import type { EncodedImage, ImageProcessor, Perceptual, ProcessedImage, ProcessOptions } from '../core/ports';
import { CROPPED_SIDE, cropHashes, UPLOAD_CROPS } from './centred-crops';
import { completeBmpHeader, readBmpHeader, type RawPixels } from './decode-foreign';
import { sniffFormat, type SniffedFormat } from './detect-format';
import { readExif } from './read-exif';
import { fitGifScreen } from './gif-screen';
import { DecodeTimeout, foreignDecoder } from './foreign-decoder';
import {
  CLASSIFIER_SIDE,
  type ClassifierPixels,
  ClassifierTimeout,
  fitsClassifier,
  type PictureClassifier,
} from './nsfw-classifier';
import { insidePlainBorder } from './plain-border';
import { collectGarbageSoon } from './release-memory';
import { jpegScanCount } from './containers/jpeg';
import { stripMetadata } from './strip-metadata';
import { STORED_FORMATS, type StoredFormat } from '../core/stored-formats';

// Lambda runs one job at a time; libvips' operation cache would only hold memory between jobs.
sharp.cache(false);

export interface ImagingSettings {
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

type OutputFormat = StoredFormat;
type WebFormat = StoredFormat;

const OUTPUTS: Record<OutputFormat, { mime: string; extension: string }> = STORED_FORMATS;

/** What sharp's metadata says each web format is, and what browsers cannot show is stored as. */
const DECODER_OF: Record<WebFormat | 'tiff', string> = {
  jpeg: 'jpeg',
  png: 'png',
  gif: 'gif',
  webp: 'webp',
  avif: 'heif',
  tiff: 'tiff',
};
const CONVERTED_TO: Record<'bmp' | 'tiff' | 'heic', OutputFormat> = { bmp: 'png', tiff: 'png', heic: 'jpeg' };

/** Everything known about an upload before its pixels are decoded. */
interface Probe {
  format: SniffedFormat;
  output: OutputFormat;
  /** Size as displayed, after EXIF orientation. */
  width: number;
  height: number;
  frames: number;
  /** How long each frame of an animation is shown, in ms, as its header says (empty for a still image). */
  delays: number[];
  orientation: number;
  sixteenBit: boolean;
  channels: number;
  chromaSubsampling: string | undefined;
  exif: Buffer | undefined;
}

const DECODE_OPTIONS: SharpOptions = { limitInputPixels: false, failOn: 'error' };
/** How far from the corner pixel's colour a plain border's samples may stray (as sharp's trim by default). */
const BORDER_TOLERANCE = 10;

/**
 * Scans a JPEG may have. Encoders write 1 (baseline) to about 10 (progressive: libjpeg and mozjpeg 10 for colour, 6 for
 * grey; Photoshop 3 to 5); each scan costs a pass over every block, and libjpeg reads all of a progressive JPEG's
 * scans before it gives libvips a line, so no time limit can stop it: 883 scans of a 64 MP image took 10 s. 100 scans
 * keep a 100 MP JPEG under 2 s.
 */
export const MAX_JPEG_SCANS = 100;

/**
 * How much longer one side may be than the other. A thinner picture has no rendition worth showing (the thumb would
 * be a sliver of it, the medium a line), and its working copy cannot shrink along its long side: 1 x 1,000,000 pixels
 * is a megapixel that no step may read whole. Long screenshots (1:20 to 1:50) and panoramas (up to about 10:1) pass.
 */
export const MAX_SIDE_RATIO = 100;

/**
 * The longest side of the copy the perceptual hashes read: a working copy longer than this (a tall or wide picture) is
 * squeezed by libvips first, so that the hashes' work on this thread stays a few ms whatever the picture's shape.
 * Working copies of photos (500 by at most 1,000) are hashed as they are.
 */
export const MAX_HASHED_SIDE = 1024;

/** How many frames of an animation the classifier scores at most (`scoredFrames`). */
export const SCORED_FRAMES = 6;

/** A job whose decoded pixels came to more than this lets them go at once when it is done (`collectGarbageSoon`). */
const RELEASED_PIXEL_BYTES = 16 * 1024 * 1024;

/** The time left of one upload's imaging: every libvips pipeline is stopped once it is spent. */
class Budget {
  private readonly deadlineMs: number;
  /** Bytes of the decoded pixels the job made (its working copies). */
  decodedBytes = 0;

  constructor(private readonly seconds: number) {
    this.deadlineMs = Date.now() + seconds * 1000;
  }

  /** The pipeline, which libvips stops (with a timeout error) once the budget is spent. */
  bound(image: Sharp): Sharp {
    return image.timeout({ seconds: Math.max(1, Math.ceil((this.deadlineMs - Date.now()) / 1000)) });
  }

  /** What is left of the budget, in ms (the classifier's worker is ended past it). */
  leftMs(): number {
    return Math.max(0, this.deadlineMs - Date.now());
  }

  /** Throws once the budget is spent: a step libvips could not stop in time is not followed by more work. */
  check(): void {
    if (Date.now() > this.deadlineMs) throw this.exceeded();
  }

  exceeded(): UploadError {
    return new UploadError('ImageTooLarge', `Image too complex - not processed within ${this.seconds} s`);
  }
}

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
    const format = sniffFormat(input);
    if (format === undefined) throw unsupported();
    return OUTPUTS[format === 'bmp' || format === 'tiff' || format === 'heic' ? CONVERTED_TO[format] : format].extension;
  }

  async process(input: Uint8Array, options: ProcessOptions): Promise<ProcessedImage> {
    const budget = new Budget(this.settings.timeLimitSeconds);
    try {
      const probe = await this.probe(input);
      const size = this.targetSize(probe, options.targetWidth);
      let processed: ProcessedImage;
      if (probe.frames > 1) processed = await this.processAnimated(input, probe, size, budget, options);
      else if (probe.format === probe.output && keepsOrientation(probe) && size.width === probe.width)
        processed = await this.processKept(input, probe, budget, options);
      else processed = await this.processConverted(input, probe, size, budget, options);
      budget.check();
      if (budget.decodedBytes > RELEASED_PIXEL_BYTES)
        void settled(processed.nsfwScoring ?? Promise.resolve()).then(collectGarbageSoon);
      return processed;
    } catch (error) {
      if (error instanceof UploadError) throw error;
      // libvips' timeout ("timeout: 6% complete")
      if (error instanceof Error && /^timeout\b/.test(error.message)) throw budget.exceeded();
      throw unsupported(error);
    }
  }

  private async probe(input: Uint8Array): Promise<Probe> {
    const format = sniffFormat(input);
    if (format === undefined) throw unsupported();
    if (format === 'bmp') {
      const header = readBmpHeader(input);
      return this.checked({
        format,
        output: CONVERTED_TO.bmp,
        width: header.width,
        height: header.height,
        frames: 1,
        delays: [],
        orientation: 1,
        sixteenBit: false,
        channels: header.hasAlpha ? 4 : 3,
        chromaSubsampling: undefined,
        exif: undefined,
      });
    }
    if (format === 'jpeg' && jpegScanCount(input) > MAX_JPEG_SCANS) {
      throw new UploadError('ImageTooLarge', `Image too complex - max ${MAX_JPEG_SCANS} JPEG scans`);
    }
    const meta: Metadata = await sharp(input, { limitInputPixels: false }).metadata();
    if (format === 'heic') {
      if (meta.format !== 'heif' || meta.compression !== 'hevc') throw unsupported();
    } else if (meta.format !== DECODER_OF[format] || (format === 'avif' && meta.compression !== 'av1')) {
      throw unsupported();
    }
    if (!(meta.width > 0 && meta.height > 0)) throw unsupported();
    const animatable = format === 'gif' || format === 'webp';
    // HEIF applies its own rotation (irot/imir) when decoding; its EXIF orientation is informative only.
    const orientation = format === 'heic' || format === 'avif' ? 1 : (meta.orientation ?? 1);
    return this.checked({
      format,
      output: format === 'tiff' || format === 'heic' ? CONVERTED_TO[format] : format,
      width: orientation >= 5 ? meta.height : meta.width,
      height: orientation >= 5 ? meta.width : meta.height,
      frames: animatable ? Math.max(1, meta.pages ?? 1) : 1,
      delays: animatable ? (meta.delay ?? []) : [],
      orientation,
      sixteenBit: meta.depth === 'ushort',
      channels: meta.channels,
      chromaSubsampling: meta.chromaSubsampling,
      exif: meta.exif,
    });
  }

  /** Refuses a decompression bomb from its header alone. */
  private checked(probe: Probe): Probe {
    const { maxPixels, maxFrames, maxHeicPixels } = this.settings;
    const framePixels = probe.width * probe.height;
    // an animation's thumb is made of every frame, each scaled to cover it: frames narrower than the thumb are enlarged
    // first (99 frames of 100x10000 came to a gigapixel, 21 s past a 10 s limit that libvips did not hold)
    const enlarged = Math.max(1, this.settings.thumbSize / Math.min(probe.width, probe.height)) ** 2;
    if (framePixels > maxPixels || framePixels * probe.frames * (probe.frames > 1 ? enlarged : 1) > maxPixels) {
      throw new UploadError('ImageTooLarge', `Image too large - max ${megapixels(maxPixels)} megapixels`);
    }
    if (probe.format === 'heic' && framePixels > maxHeicPixels) {
      throw new UploadError('ImageTooLarge', `HEIC image too large - max ${megapixels(maxHeicPixels)} megapixels`);
    }
    if (probe.frames > maxFrames) throw new UploadError('ImageTooLarge', `Image too large - max ${maxFrames} frames`);
    checkSides(probe.width, probe.height);
    return probe;
  }

  private targetSize(probe: Probe, targetWidth: number | undefined): { width: number; height: number } {
    if (targetWidth === undefined) return { width: probe.width, height: probe.height };
    if (targetWidth > probe.width)
      throw new UploadError('WidthTooLarge', 'Target width is greater than the original image width');
    const size = { width: targetWidth, height: Math.max(1, Math.round((probe.height * targetWidth) / probe.width)) };
    checkSides(size.width, size.height);
    return size;
  }

  /**
   * The stored original is the upload with its metadata removed. Its pixels are decoded once, at the size the
   * renditions need (JPEG and WebP shrink on load), while the md5s are computed on this thread.
   */
  private async processKept(input: Uint8Array, probe: Probe, budget: Budget, options: ProcessOptions): Promise<ProcessedImage> {
    const stored = this.storedBytes(input, probe);
    const workingWidth = this.workingWidth(probe.width, probe.height);
    // never enlarged: a GIF whose frames decode smaller than its header said (its screen) is not blown up to it
    const shrunk = sharp(stored, DECODE_OPTIONS).autoOrient().resize({ width: workingWidth, withoutEnlargement: true });
    const decoding = toRaw(shrunk, probe, 'uchar', budget);
    options.onDecoding?.();
    const original: EncodedImage = {
      bytes: stored,
      width: probe.width,
      height: probe.height,
      ...OUTPUTS[probe.output],
      bits: probe.sixteenBit ? 16 : 8,
      channels: probe.channels,
    };
    const originalMd5 = storedMd5(stored, input, options);
    options.onOriginal?.(original, originalMd5);
    const working = await decoding;
    const { thumb, medium, perceptual, nsfwScoring } = await this.fromWorking(working, original, probe, budget, options);
    return { original, originalMd5, thumb, medium, exif: readExif(probe.exif), animated: false, perceptual, nsfwScoring };
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
    options: ProcessOptions,
  ): Promise<ProcessedImage> {
    const decodingWhole = this.decodeWhole(input, probe, size, budget);
    options.onDecoding?.();
    const whole = await decodingWhole;
    budget.check();
    const encodingOriginal = this.encode(fromRaw(whole), probe, 'original', budget);
    const workingWidth = this.workingWidth(whole.info.width, whole.info.height);
    const working =
      whole.depth === 'uchar' && workingWidth === whole.info.width
        ? whole
        : await toRaw(fromRaw(whole).resize({ width: workingWidth }), probe, 'uchar', budget);
    const original = await encodingOriginal;
    const originalMd5 = md5Hex(original.bytes);
    options.onOriginal?.(original, originalMd5);
    const { thumb, medium, perceptual, nsfwScoring } = await this.fromWorking(working, original, probe, budget, options);
    return { original, originalMd5, thumb, medium, exif: readExif(probe.exif), animated: false, perceptual, nsfwScoring };
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
    options: ProcessOptions,
  ): Promise<Pick<ProcessedImage, 'thumb' | 'medium' | 'perceptual' | 'nsfwScoring'>> {
    const nsfwScoring = this.classify(working, budget, options.onClassified);
    const rendering = this.renditions(working, original, probe, budget);
    const perceptual = this.settings.withoutPerceptual ? undefined : await this.perceptual(working, budget);
    const { thumb, medium } = await rendering;
    return { thumb, medium, perceptual, nsfwScoring };
  }

  /**
   * The classifier's score of a picture; none without a classifier. Working pixels are handed over as they are, at
   * once (the classifier squeezes them to its input on its worker); an animation's frames, and working pixels that
   * do not fit the worker (`fitsClassifier`), are squeezed by libvips first. Its failure is the service's, not the image's: a
   * dependency error (503, try again).
   */
  private classify(
    picture: RawImage | Sharp,
    budget: Budget,
    onRun: ProcessOptions['onClassified'],
  ): Promise<number> | undefined {
    const classifier = this.classifier;
    if (!classifier) return undefined;
    const asIs = 'info' in picture && picture.depth === 'uchar' && fitsClassifier(picture.info.width, picture.info.height);
    const scoring = asIs
      ? classifier.score({ data: picture.data, ...picture.info }, onRun, budget.leftMs())
      : squeezedByLibvips('info' in picture ? fromRaw(picture) : picture, budget).then((pixels) =>
          classifier.score(pixels, onRun, budget.leftMs()),
        );
    return awaitedLater(
      scoring.catch((cause: unknown) => {
        if (cause instanceof ClassifierTimeout) throw budget.exceeded();
        throw cause instanceof UploadError ? cause : new DependencyError('NSFW classifier', cause);
      }),
    );
  }

  /**
   * An animation's score: the highest of its frames' that a viewer sees most (`scoredFrames`), each decoded as a viewer
   * sees it at that point, so that a blank first frame shown for 10 ms cannot hide the rest.
   */
  private classifyFrames(
    stored: Uint8Array,
    probe: Probe,
    budget: Budget,
    onRun: ProcessOptions['onClassified'],
  ): Promise<number> | undefined {
    if (!this.classifier) return undefined;
    const scores = scoredFrames(probe.delays, probe.frames).map((page) =>
      this.classify(sharp(stored, { ...DECODE_OPTIONS, page, pages: 1 }), budget, onRun),
    );
    return awaitedLater(Promise.all(scores.map((score) => score ?? Promise.resolve(0))).then((each) => Math.max(...each)));
  }

  /** The picture's hashes, from a bounded copy of the working pixels, and as a viewer sees it when it has transparency. */
  private async perceptual(working: RawImage, budget: Budget): Promise<Perceptual | undefined> {
    const pixels = await hashedCopy(working, budget);
    const [seen, small] = await Promise.all([seenOnPages(pixels, budget), croppedCopy(pixels, budget)]);
    return perceptualOf(pixels, seen, small);
  }

  /**
   * An animation's hashes: those of the frames a viewer sees most (`scoredFrames`), each decoded alone as a viewer sees
   * it at that point, at most `MAX_HASHED_SIDE` a side; each hash once. A blocked picture sent as an animation of it
   * is found by its frames.
   */
  private async framesPerceptual(stored: Uint8Array, probe: Probe, budget: Budget): Promise<Perceptual | undefined> {
    const frames = await Promise.all(
      scoredFrames(probe.delays, probe.frames).map(async (page) => {
        const frame = sharp(stored, { ...DECODE_OPTIONS, page, pages: 1 }).resize(MAX_HASHED_SIDE, MAX_HASHED_SIDE, {
          fit: 'inside',
          withoutEnlargement: true,
        });
        const { data, info } = await budget.bound(frame).raw().toBuffer({ resolveWithObject: true });
        const pixels = { data, width: info.width, height: info.height, channels: info.channels };
        return perceptualOf(pixels, await seenOnPages(pixels, budget));
      }),
    );
    const kept = frames.filter((one) => one !== undefined);
    const first = kept[0];
    if (!first) return undefined;
    const hashes = [...new Set(kept.flatMap((one) => one.hashes))];
    const turned = [...new Set(kept.flatMap((one) => one.turned))];
    return { hashes, turned, quality: first.quality };
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
      this.encode(fromRaw(working).resize(side, side, { fit: 'cover', position: 'centre' }), probe, 'rendition', budget),
      mediumWidth === original.width
        ? original
        : this.encode(
            working.info.width === mediumWidth ? fromRaw(working) : fromRaw(working).resize({ width: mediumWidth }),
            probe,
            'rendition',
            budget,
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
    options: ProcessOptions,
  ): Promise<ProcessedImage> {
    let stored = this.storedBytes(input, probe);
    const animated = (): Sharp => sharp(stored, { ...DECODE_OPTIONS, animated: true });
    // several pipelines, each of every frame: the caller's work goes alongside them all
    options.onDecoding?.();
    let original: EncodedImage;
    if (size.width !== probe.width) {
      original = await this.encode(animated().resize({ width: size.width }), probe, 'original', budget);
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
    const originalMd5 = storedMd5(stored, input, options);
    options.onOriginal?.(original, originalMd5);
    const side = this.settings.thumbSize;
    const mediumWidth = Math.min(this.settings.mediumWidth, size.width);
    const nsfwScoring = this.classifyFrames(stored, probe, budget, options.onClassified);
    const [thumb, medium, perceptual] = await Promise.all([
      this.encode(animated().resize(side, side, { fit: 'cover', position: 'centre' }), probe, 'rendition', budget),
      mediumWidth === original.width
        ? original
        : this.encode(animated().resize({ width: mediumWidth }), probe, 'rendition', budget),
      this.settings.withoutPerceptual ? undefined : this.framesPerceptual(stored, probe, budget),
    ]);
    return { original, originalMd5, thumb, medium, exif: readExif(probe.exif), animated: true, nsfwScoring, perceptual };
  }

  private async encode(image: Sharp, probe: Probe, role: 'original' | 'rendition', budget: Budget): Promise<EncodedImage> {
    const original = role === 'original';
    const sixteenBit = original && probe.sixteenBit && probe.output === 'png';
    // sharp writes sRGB unless told otherwise: greyscale stays greyscale, 16 bits stay 16 bits.
    if (probe.channels <= 2) image.toColourspace(sixteenBit ? 'grey16' : 'b-w');
    else if (sixteenBit) image.toColourspace('rgb16');
    switch (probe.output) {
      case 'jpeg':
        image.jpeg({
          quality: original ? 92 : 82,
          mozjpeg: false,
          chromaSubsampling: original && probe.chromaSubsampling === '4:4:4' ? '4:4:4' : '4:2:0',
        });
        break;
      case 'png':
        image.png();
        break;
      case 'gif':
        // libimagequant's effort dominates animated GIF time; 1 is twice as fast as the default at the same size.
        image.gif({ effort: original ? 4 : 1 });
        break;
      case 'webp':
        image.webp({ quality: original ? 90 : 80 });
        break;
      case 'avif':
        image.avif({ quality: original ? 70 : 55, effort: 2 });
        break;
    }
    if (original) image.keepIccProfile();
    if (original && this.settings.keepMetadata) image.keepMetadata();
    const { data, info } = await budget.bound(image).toBuffer({ resolveWithObject: true });
    return {
      bytes: data,
      width: info.width,
      height: info.pageHeight ?? info.height,
      ...OUTPUTS[probe.output],
      bits: sixteenBit ? 16 : 8,
      channels: info.channels,
    };
  }
}

interface RawImage {
  data: Buffer;
  info: sharp.OutputInfo;
  depth: 'uchar' | 'ushort';
}

/** Raw pixels; sharp's raw output is 8-bit sRGB unless asked for greyscale or 16 bits by colour space. */
function toRaw(image: Sharp, probe: Probe, depth: 'uchar' | 'ushort', budget: Budget): Promise<RawImage> {
  const grey = probe.channels <= 2;
  if (depth === 'ushort') image.toColourspace(grey ? 'grey16' : 'rgb16');
  else if (grey) image.toColourspace('b-w');
  return budget
    .bound(image)
    .raw({ depth })
    .toBuffer({ resolveWithObject: true })
    .then(({ data, info }) => {
      budget.decodedBytes += data.length;
      // the pixels as decoded, which a container may describe otherwise than its header did
      checkSides(info.width, info.height);
      return { data, info, depth };
    });
}

/** A pipeline over raw pixels; 16-bit samples must reach sharp as a Uint16Array to be read as such. */
function fromRaw({ data, info, depth }: RawImage): Sharp {
  const pixels = depth === 'ushort' ? new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2) : data;
  return sharp(pixels, {
    raw: {
      width: info.width,
      height: info.height,
      channels: info.channels,
      ...(info.premultiplied ? { premultiplied: true } : {}),
    },
  });
}

/** A picture squeezed to the classifier's input by libvips, as sRGB on white. */
async function squeezedByLibvips(image: Sharp, budget: Budget): Promise<ClassifierPixels> {
  const square = image.resize(CLASSIFIER_SIDE, CLASSIFIER_SIDE, { fit: 'fill' }).flatten({ background: '#ffffff' });
  const data = await budget.bound(square.toColourspace('srgb')).raw().toBuffer();
  return { data, width: CLASSIFIER_SIDE, height: CLASSIFIER_SIDE, channels: 3 };
}

function fromPixels(pixels: RawPixels): Sharp {
  return sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: pixels.channels } });
}

/** The working pixels the hashes read: as they are, or squeezed to at most `MAX_HASHED_SIDE` a side. */
async function hashedCopy(working: RawImage, budget: Budget): Promise<PdqPixels> {
  const { width, height, channels } = working.info;
  if (width <= MAX_HASHED_SIDE && height <= MAX_HASHED_SIDE) return { data: working.data, width, height, channels };
  const squeezed = fromRaw(working).resize(Math.min(width, MAX_HASHED_SIDE), Math.min(height, MAX_HASHED_SIDE), {
    fit: 'fill',
  });
  const { data, info } = await budget.bound(squeezed).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** The pixels the crops' hashes read: at most `CROPPED_SIDE` a side (`centred-crops.ts`). */
async function croppedCopy(pixels: PdqPixels, budget: Budget): Promise<PdqPixels> {
  const { data, width, height, channels } = pixels;
  if (width <= CROPPED_SIDE && height <= CROPPED_SIDE) return pixels;
  const raw = { width, height, channels: channels === 1 || channels === 2 || channels === 3 ? channels : 4 } as const;
  const small = sharp(data, { raw }).resize(CROPPED_SIDE, CROPPED_SIDE, { fit: 'inside' });
  const made = await budget.bound(small).raw().toBuffer({ resolveWithObject: true });
  return { data: made.data, width: made.info.width, height: made.info.height, channels: made.info.channels };
}

/**
 * A picture with transparency as a viewer sees it: laid on a white page and on a black one, by libvips. The hash reads
 * colour and not alpha, so a blocked photo hidden in the alpha channel of a black picture (it shows on a white page)
 * would otherwise pass. None for an opaque picture.
 */
async function seenOnPages(pixels: PdqPixels, budget: Budget): Promise<PdqPixels[]> {
  const { data, width, height, channels } = pixels;
  if (channels !== 2 && channels !== 4) return [];
  let opaque = true;
  for (let at = channels - 1; at < data.length && opaque; at += channels) opaque = data[at] === 255;
  if (opaque) return [];
  return Promise.all(
    ['#ffffff', '#000000'].map(async (background) => {
      const page = sharp(data, { raw: { width, height, channels } }).flatten({ background });
      const flat = await budget.bound(page).raw().toBuffer({ resolveWithObject: true });
      return { data: flat.data, width: flat.info.width, height: flat.info.height, channels: flat.info.channels };
    }),
  );
}

/**
 * The picture's PDQ hashes from the working pixels (no decode of its own), those of the picture inside its plain
 * border, when it has one (a border added to, or cut from, a blocked picture would otherwise hide it), and those of
 * the picture as a viewer sees it on a page (`seenOnPages`). Only hashes of `MIN_PDQ_QUALITY` or more are kept, each
 * once; none when no hash has it (a flat or empty picture). The hashes of the centred crops of `cropped` (a small copy
 * of a still picture: `centred-crops.ts`) are compared too, but not kept: a record keeps the picture's own.
 */
function perceptualOf(pixels: PdqPixels, seen: readonly PdqPixels[], cropped?: PdqPixels): Perceptual | undefined {
  const inside = insidePlainBorder(pixels, BORDER_TOLERANCE);
  const own = pdqHash(pixels);
  const hashes = [own, ...(inside ? [pdqHash(inside)] : []), ...seen.map((page) => pdqHash(page))].filter(
    (one) => one.quality >= MIN_PDQ_QUALITY,
  );
  const distinct = hashes.filter((one, index) => hashes.findIndex((other) => other.hash === one.hash) === index);
  if (distinct.length === 0) return undefined;
  const quality = distinct[0]?.quality ?? 0;
  // the crops as they are, not turned: three queries of the block list rather than 24 (a framed and turned copy is
  // the limit this leaves)
  const crops = cropped ? cropHashes(cropped, UPLOAD_CROPS).map((one) => one.hash) : [];
  const turned = [...new Set([...distinct.flatMap((one) => one.turned), ...crops])];
  return { hashes: distinct.map((one) => one.hash), turned, quality };
}

/**
 * Whether the stored original can be the upload's own pixels: upright already, or a JPEG, whose EXIF orientation is
 * kept for browsers to apply (`docs/imaging.md`); other formats are turned upright by a re-encode.
 */
function keepsOrientation(probe: Probe): boolean {
  return probe.orientation === 1 || probe.format === 'jpeg';
}

/**
 * The frames of an animation the classifier scores: those shown at 4 moments spread over its loop (a quarter of the
 * time apart, each in the middle of its quarter), and the 2 shown longest; at most `SCORED_FRAMES`. Times are as
 * browsers show them: a delay of 10 ms or less is shown as 100 ms. A frame shown less than a quarter of the loop may go
 * unscored only while 2 others are shown longer.
 */
export function scoredFrames(delays: readonly number[], frames: number): number[] {
  const shown = Array.from({ length: frames }, (_, page) => ((delays[page] ?? 0) <= 10 ? 100 : (delays[page] ?? 0)));
  const total = shown.reduce((sum, ms) => sum + ms, 0);
  const pages = new Set<number>();
  for (let quarter = 0; quarter < 4; quarter += 1) {
    let at = ((quarter + 0.5) / 4) * total;
    let page = 0;
    while (page < frames - 1 && at >= (shown[page] ?? 0)) at -= shown[page++] ?? 0;
    pages.add(page);
  }
  const longest = [...shown.keys()].sort((a, b) => (shown[b] ?? 0) - (shown[a] ?? 0) || a - b);
  for (const page of longest.slice(0, 2)) pages.add(page);
  return [...pages].sort((a, b) => a - b);
}

/** Refuses sides further apart than `MAX_SIDE_RATIO` (400, code 614). */
function checkSides(width: number, height: number): void {
  if (Math.max(width, height) > MAX_SIDE_RATIO * Math.min(width, height))
    throw new UploadError('ImageTooThin', `Image too thin - sides at most ${MAX_SIDE_RATIO}:1`);
}

/** Megapixels to three significant digits: 100, 24, 0.5. */
function megapixels(pixels: number): string {
  return String(Number((pixels / 1_000_000).toPrecision(3)));
}

function unsupported(cause?: unknown): UploadError {
  return new UploadError('UnsupportedFormat', 'Unavailable image format', { cause });
}

/**
 * The stored original's md5: the input's, shared with the caller, when the original is the input itself. The same
 * object means the same bytes: every step that changes them (metadata removal, a GIF's screen) works on a copy.
 */
function storedMd5(stored: Uint8Array, input: Uint8Array, options: ProcessOptions): string {
  return stored === input && options.inputMd5 ? options.inputMd5() : md5Hex(stored);
}
