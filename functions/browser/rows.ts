import type { Options, Source, UploadedImage } from './api-client';
import { formatBytes, make } from './dom';

/** One picture of the upload page's list: a file or a URL, from the moment it is given to its links. */
export interface Row {
  id: number;
  source: Source;
  /** What the row is called: the file's name, or the URL. */
  name: string;
  /** `held`: shared from another app, waiting for the person to confirm it is theirs (its own button). */
  state: 'held' | 'ready' | 'queued' | 'uploading' | 'done' | 'failed' | 'removed';
  options: Options | undefined;
  item: HTMLLIElement;
  progress: HTMLProgressElement;
  status: HTMLParagraphElement;
  retry: HTMLButtonElement;
  remove: HTMLButtonElement;
  /** The picture's preview, from the file itself, while the row is listed. */
  preview: string | undefined;
  /** Once uploaded: its links, for "Copy all". */
  image?: UploadedImage;
}

/**
 * A row for a file or a URL: a preview drawn from the file itself before anything is sent, its name and size, Remove,
 * a progress bar, a status line and Retry (hidden until a failure). A shared one says where it came from.
 */
export function newRow(id: number, source: Source, shared: boolean): Row {
  const name = source.kind === 'file' ? source.file.name || 'pasted picture' : source.url;
  const item = make('li', { class: 'row', id: `row-${id}` });
  const head = make('div', { class: 'row-head' });
  const preview = source.kind === 'file' ? URL.createObjectURL(source.file) : undefined;
  if (preview !== undefined) {
    const picture = make('img', { class: 'preview', src: preview, alt: '' });
    // a format this browser cannot show (HEIC in most): no picture, the name says what it is
    picture.addEventListener('error', () => picture.remove());
    head.append(picture);
  }
  const title = make('p', { class: 'row-name' }, name);
  if (source.kind === 'file') title.append(make('span', { class: 'muted' }, ` ${formatBytes(source.file.size)}`));
  const remove = make('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${name}` }, 'Remove');
  head.append(title, remove);
  const progress = make('progress', { max: '1', value: '0', 'aria-label': `Upload of ${name}` });
  const status = make('p', { class: 'row-status' }, shared ? 'Not uploaded: shared from another app' : 'Ready');
  const retry = make('button', { type: 'button', class: 'retry', 'aria-label': `Retry ${name}` }, 'Retry');
  retry.hidden = true;
  item.append(head);
  // anyone's page can post to the share target: what came that way says so, and goes only by its own button
  if (shared) item.append(make('p', { class: 'row-shared' }, 'Shared from another app: check it is yours before you upload.'));
  item.append(progress, status, retry);
  const state = shared ? 'held' : 'ready';
  return { id, source, name, state, options: undefined, item, progress, status, retry, remove, preview };
}

/** Takes a row off the list before it is sent (or after it failed): it goes with no batch, its preview let go. */
export function removeRow(row: Row): void {
  row.state = 'removed';
  row.item.remove();
  if (row.preview !== undefined) URL.revokeObjectURL(row.preview);
}
