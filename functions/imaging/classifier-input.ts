import sharp, { type Sharp } from 'sharp';
import { DependencyError, ServiceError } from '../core/errors';
import type { NsfwScore } from '../core/ports';
import { awaitedLater } from '../core/settle';
import { shownMs } from '../fingerprint/frames';
import type { Budget } from './budget';
import {
  CLASSIFIER_SIDE,
  ClassifierTimeout,
  fitsClassifier,
  type ClassifierPixels,
  type PictureClassifier,
} from './nsfw-classifier';
import { fromRaw, type RawImage } from './pixels';
import { DECODE_OPTIONS, type Probe } from './probe';

/**
 * The classifier's input and its score (`docs/moderation.md`, "The NSFW classifier"): working pixels handed over as
 * they are, at once (the classifier squeezes them to its input on its worker); an animation's frames, and working
 * pixels that do not fit the worker (`fitsClassifier`), squeezed by libvips first. Its failure is the service's, not
 * the image's: a dependency error (503, try again).
 */

/** How many frames of an animation the classifier scores at most (`scoredFrames`). */
export const SCORED_FRAMES = 6;

/** A picture squeezed to the classifier's input by libvips, as sRGB on white. */
async function squeezedByLibvips(image: Sharp, budget: Budget): Promise<ClassifierPixels> {
  const square = image.resize(CLASSIFIER_SIDE, CLASSIFIER_SIDE, { fit: 'fill' }).flatten({ background: '#ffffff' });
  const data = await budget.bound(square.toColourspace('srgb')).raw().toBuffer();
  return { data, width: CLASSIFIER_SIDE, height: CLASSIFIER_SIDE, channels: 3 };
}

/** The classifier's score of a picture (its working pixels, or a pipeline); none without a classifier. */
export function classify(
  classifier: PictureClassifier | undefined,
  picture: RawImage | Sharp,
  budget: Budget,
): Promise<NsfwScore> | undefined {
  if (!classifier) return undefined;
  const asIs = 'info' in picture && picture.depth === 'uchar' && fitsClassifier(picture.info.width, picture.info.height);
  const scoring = asIs
    ? classifier.score({ data: picture.data, ...picture.info }, budget.leftMs())
    : squeezedByLibvips('info' in picture ? fromRaw(picture) : picture, budget).then((pixels) =>
        classifier.score(pixels, budget.leftMs()),
      );
  return awaitedLater(
    scoring.catch((cause: unknown) => {
      if (cause instanceof ClassifierTimeout) throw budget.exceeded();
      throw cause instanceof ServiceError ? cause : new DependencyError('NSFW classifier', cause);
    }),
  );
}

/**
 * An animation's score: the highest of its frames' that a viewer sees most (`scoredFrames`), each decoded as a viewer
 * sees it at that point, so that a blank first frame shown for 10 ms cannot hide the rest.
 */
export function classifyFrames(
  classifier: PictureClassifier | undefined,
  stored: Uint8Array,
  probe: Probe,
  budget: Budget,
): Promise<NsfwScore> | undefined {
  if (!classifier) return undefined;
  const scores = scoredFrames(probe.delays, probe.frames).map((page) =>
    classify(classifier, sharp(stored, { ...DECODE_OPTIONS, page, pages: 1 }), budget),
  );
  const none: NsfwScore = { score: 0, runMs: 0 };
  return awaitedLater(
    Promise.all(scores.map((score) => score ?? Promise.resolve(none))).then((each) => ({
      score: Math.max(...each.map(({ score }) => score)),
      runMs: each.reduce((sum, { runMs }) => sum + runMs, 0),
    })),
  );
}

/**
 * The frames of an animation the classifier scores: those shown at 4 moments spread over its loop (a quarter of the
 * time apart, each in the middle of its quarter), and the 2 shown longest; at most `SCORED_FRAMES`. Times are as
 * browsers show them: a delay of 10 ms or less is shown as 100 ms. A frame shown less than a quarter of the loop may go
 * unscored only while 2 others are shown longer.
 */
export function scoredFrames(delays: readonly number[], frames: number): number[] {
  const shown = shownMs(delays, frames);
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
