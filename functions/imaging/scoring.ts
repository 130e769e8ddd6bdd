import sharp, { type Sharp } from 'sharp';
import { DependencyError, ServiceError } from '../core/errors';
import type { NsfwScore } from '../core/ports';
import { awaitedLater } from '../core/settle';
import type { Budget } from './budget';
import { ClassifierTimeout, fitsClassifier, type PictureClassifier } from './nsfw-classifier';
import { fromRaw, scoredFrames, squeezedByLibvips, type RawImage } from './pixel-copies';
import { DECODE_OPTIONS, type Probe } from './probe';

/**
 * The classifier's score of a picture; none without a classifier. Working pixels are handed over as they are, at
 * once (the classifier squeezes them to its input on its worker); an animation's frames, and working pixels that
 * do not fit the worker (`fitsClassifier`), are squeezed by libvips first. Its failure is the service's, not the image's: a
 * dependency error (503, try again).
 */
export function classify(
  classifier: PictureClassifier | undefined,
  picture: RawImage | Sharp,
  budget: Budget,
): Promise<NsfwScore> | undefined {
  if (!classifier) return undefined;
  let runMs = 0;
  const onRun = (ms: number): void => {
    runMs += ms;
  };
  const asIs = 'info' in picture && picture.depth === 'uchar' && fitsClassifier(picture.info.width, picture.info.height);
  const scoring = asIs
    ? classifier.score({ data: picture.data, ...picture.info }, onRun, budget.leftMs())
    : squeezedByLibvips('info' in picture ? fromRaw(picture) : picture, budget).then((pixels) =>
        classifier.score(pixels, onRun, budget.leftMs()),
      );
  return awaitedLater(
    scoring.then(
      (score) => ({ score, runMs }),
      (cause: unknown) => {
        if (cause instanceof ClassifierTimeout) throw budget.exceeded();
        throw cause instanceof ServiceError ? cause : new DependencyError('NSFW classifier', cause);
      },
    ),
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
