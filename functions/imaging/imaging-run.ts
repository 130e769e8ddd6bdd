import type { ImagingRun, ProcessedImage, StoredOriginal } from '../core/ports';
import { awaitedLater, deferred } from '../core/settle';

/** The moments of a run its caller is told of (`ImagingRun`): the decode under way, the stored original final. */
export interface Milestones {
  decoding(): void;
  original(original: StoredOriginal): void;
}

/**
 * A run as the core sees it: a promise of each part, settled as `run` reaches it. A run that fails before the decode
 * or the original fails those too (each promise takes the first outcome it is given); every one is marked as handled.
 */
export function imagingRun(run: (reached: Milestones) => Promise<ProcessedImage>): ImagingRun {
  const decoding = deferred<void>();
  const original = deferred<StoredOriginal>();
  const processed = run({ decoding: () => decoding.resolve(), original: original.resolve });
  processed.then(
    () => decoding.resolve(),
    (error: unknown) => {
      decoding.reject(error);
      original.reject(error);
    },
  );
  return {
    decoding: awaitedLater(decoding.promise),
    original: awaitedLater(original.promise),
    processed: awaitedLater(processed),
  };
}
