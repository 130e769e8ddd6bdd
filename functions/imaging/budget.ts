import type { Sharp } from 'sharp';
import { ServiceError } from '../core/errors';

/**
 * The time left of one upload's imaging: every libvips pipeline is stopped once it is spent. It is spent at once when
 * the upload is refused meanwhile (`stop`: its client over the flood limit), and a decode that can be ended is.
 */
export class Budget {
  private readonly deadlineMs: number;
  private readonly stopping = new AbortController();
  /** Bytes of the decoded pixels the job made (its working copies). */
  decodedBytes = 0;

  constructor(private readonly seconds: number) {
    this.deadlineMs = Date.now() + seconds * 1000;
  }

  /** The pipeline, which libvips stops (with a timeout error) once the budget is spent. */
  bound(image: Sharp): Sharp {
    return image.timeout({ seconds: Math.max(1, Math.ceil((this.deadlineMs - Date.now()) / 1000)) });
  }

  /** Aborted, with the refusal as its reason, when the upload is refused meanwhile. */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /** Spends the budget now: the upload was refused (`refusal` is what it answers), and nothing more is made for it. */
  stop(refusal: ServiceError): void {
    this.stopping.abort(refusal);
  }

  /** What is left of the budget, in ms (the classifier's worker is ended past it). */
  leftMs(): number {
    return this.signal.aborted ? 0 : Math.max(0, this.deadlineMs - Date.now());
  }

  /** Throws once the budget is spent: a step libvips could not stop in time is not followed by more work. */
  check(): void {
    if (this.signal.aborted || Date.now() > this.deadlineMs) throw this.exceeded();
  }

  /** The upload's refusal: the one it was stopped with, or the time limit's. */
  exceeded(): ServiceError {
    if (this.signal.aborted) return this.signal.reason as ServiceError;
    return new ServiceError('ImageTooLarge', `Image too complex - not processed within ${this.seconds} s`);
  }
}
