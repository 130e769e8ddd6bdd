import type { Sharp } from 'sharp';
import { ServiceError } from '../core/errors';

/** The time left of one upload's imaging: every libvips pipeline is stopped once it is spent. */
export class Budget {
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

  exceeded(): ServiceError {
    return new ServiceError('ImageTooLarge', `Image too complex - not processed within ${this.seconds} s`);
  }
}
