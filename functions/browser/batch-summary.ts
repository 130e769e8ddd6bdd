import { embedCodes } from '../http/embed-codes';
import { element } from './dom';
import { embeddedOf } from './results';
import type { Row } from './rows';

/**
 * The batch as the upload page tells it: a line ("3 of 5 uploaded, 1 failed") over the list, each row's Remove where
 * a row may still go, and "Copy all", which copies every uploaded picture's link or code of the kind chosen.
 */
export class BatchSummary {
  private readonly summary = element<HTMLParagraphElement>('summary');
  private readonly bar = element<HTMLDivElement>('copy-all-bar');
  private readonly kind = element<HTMLSelectElement>('copy-all-kind');
  private readonly copyAll = element<HTMLButtonElement>('copy-all');

  constructor(
    private readonly rows: readonly Row[],
    private readonly announce: (text: string) => void,
  ) {
    this.copyAll.addEventListener('click', () => this.copy());
  }

  /** Puts the keyboard on the line (after the last row it could go to was removed). */
  focus(): void {
    this.summary.tabIndex = -1;
    this.summary.focus();
  }

  /** The line as it stands. */
  line(): string {
    return this.summary.textContent ?? '';
  }

  /** Counts the batch again, after any row changed. */
  update(): void {
    const listed = this.counted();
    const done = listed.filter((row) => row.state === 'done').length;
    const failed = listed.filter((row) => row.state === 'failed').length;
    this.summary.textContent =
      listed.length === 0 ? '' : `${done} of ${listed.length} uploaded${failed === 0 ? '' : `, ${failed} failed`}`;
    for (const row of this.rows) row.remove.hidden = !['ready', 'held', 'failed'].includes(row.state);
    this.bar.hidden = done === 0;
  }

  /** The rows counted: every picture listed but those shared and not confirmed. */
  private counted(): Row[] {
    return this.rows.filter((row) => row.state !== 'removed' && row.state !== 'held');
  }

  /** Every uploaded picture's link or code of the kind chosen, one a line, in the order of the list. */
  private copy(): void {
    const lines = this.counted().flatMap((row) => {
      if (row.image === undefined) return [];
      const code = embedCodes(embeddedOf(row.image))
        .flatMap((group) => group.codes)
        .find((candidate) => candidate.id === this.kind.value);
      return code === undefined ? [] : [code.code];
    });
    const copied = (): void => {
      this.copyAll.textContent = 'Copied';
      setTimeout(() => (this.copyAll.textContent = 'Copy all'), 1500);
    };
    const refused = (): void => this.announce('The clipboard was refused: copy the links from each picture below.');
    // no clipboard on a page that is not a secure context (plain http from another machine)
    if (navigator.clipboard === undefined) refused();
    else navigator.clipboard.writeText(lines.join('\n')).then(copied, refused);
  }
}
