/**
 * The upload page's script (`/upload`, `docs/pages.md`): bundled by `npm run build:browser` into
 * `functions/http/generated/browser-assets.ts`, which the page embeds under its CSP hash. Every text of an upload or of
 * an answer reaches the page as text (`textContent`, `value`), never as HTML.
 */
import { UPLOAD_PAGE } from '../core/image/links';
import {
  API_UPLOAD,
  expectImage,
  optionFields,
  Refused,
  request,
  sendInTwoSteps,
  type Options,
  type Source,
  type UploadedImage,
} from './api-client';
import { BatchSummary } from './batch-summary';
import { element, make } from './dom';
import { keyField as keyStore } from './key-field';
import { showResult } from './results';
import { newRow, removeRow, type Row } from './rows';
import { gatherSources } from './picture-sources';
import { takeShared } from './share-target';

const main = element<HTMLElement>('upload');
/** Files up to this go in one request; larger ones by the two-step upload (the gateway's limit, less the form's room). */
const directMaxBytes = Number(main.dataset['directMax']);
const form = element<HTMLFormElement>('upload-form');
const keyField = element<HTMLInputElement>('api-key');
const remember = element<HTMLInputElement>('remember');
const forget = element<HTMLButtonElement>('forget');
const filesField = element<HTMLInputElement>('files');
const urlField = element<HTMLInputElement>('source-url');
// several files at once where the script sends them one by one; without it the form posts one (the API takes one)
filesField.multiple = true;
const rows = element<HTMLOListElement>('rows');
const announcer = element<HTMLParagraphElement>('announce');
// the styled choose button stands for the file field, which stays there for the keyboard and screen readers
main.classList.add('scripted');
const all: Row[] = [];
const told = new BatchSummary(all, (text) => announce(text));
let active = 0;

/** Says something to screen readers (the live region) and to everyone (it is shown as the page's status line). */
function announce(text: string): void {
  announcer.textContent = text;
}

/** Uploads at once: a few, so that one large file does not hold the others back, and a phone's link is not swamped. */
const AT_ONCE = 3;

// ---- the rows: one per file or URL

function addSources(sources: Source[], shared = false): void {
  for (const source of sources) {
    const id = all.length + 1;
    const row = newRow(id, source, shared);
    rows.append(row.item);
    if (shared) row.item.append(confirmButton(row, row.name));
    row.retry.addEventListener('click', () => {
      if (!keyReady()) return;
      key.keep();
      queue([row]);
    });
    row.remove.addEventListener('click', () => {
      // the keyboard's place goes to the next row's Remove, or the previous one's, or the batch's line
      const listed = all.filter((other) => other === row || !other.remove.hidden);
      const at = listed.indexOf(row);
      const next = listed[at + 1] ?? listed[at - 1];
      removeRow(row);
      told.update();
      announce(`Removed. ${told.line()}`);
      if (next) next.remove.focus();
      else told.focus();
    });
    all.push(row);
  }
  const ready = all.filter((row) => row.state === 'ready').length;
  if (sources.length > 0 && !shared) announce(`${ready} ${ready === 1 ? 'picture' : 'pictures'} ready: press Upload.`);
  told.update();
}

/**
 * A shared row's own button, the one press that uploads it: Upload does not take it, and no focus lands on it, so
 * that the typing of someone on another site's page that posted to the share target cannot send it (`docs/pages.md`).
 */
function confirmButton(row: Row, name: string): HTMLButtonElement {
  const button = make(
    'button',
    { type: 'button', class: 'confirm', 'aria-label': `It is mine: upload it (${name})` },
    'It is mine: upload it',
  );
  button.addEventListener('click', () => {
    if (!keyReady()) return;
    key.keep();
    button.remove();
    row.options = currentOptions();
    queue([row]);
  });
  return button;
}

// the file field, the URL field, a paste, a drop: each adds its rows
const { takeUrlField } = gatherSources(
  { filesField, urlField, addUrl: element<HTMLButtonElement>('add-url') },
  addSources,
  announce,
);

// ---- uploading: a few at a time, each row on its own

function keyReady(): boolean {
  if (keyField.value !== '') return true;
  announce('Type the API key first.');
  keyField.focus();
  return false;
}

function currentOptions(): Options {
  const value = (id: string): string => element<HTMLInputElement>(id).value.trim();
  return {
    title: value('title'),
    description: value('description'),
    nsfw: element<HTMLInputElement>('nsfw').checked,
    expiration: value('expiration'),
  };
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (!takeUrlField() || !keyReady()) return;
  key.keep();
  const ready = all.filter((row) => row.state === 'ready');
  if (ready.length === 0) {
    const busy = all.some((row) => row.state === 'queued' || row.state === 'uploading');
    const held = all.some((row) => row.state === 'held');
    announce(
      busy
        ? 'Nothing new to upload: the pictures listed are on their way.'
        : held
          ? 'A shared picture goes only by its own button: press "It is mine: upload it" on each that is yours.'
          : 'Choose, drop or paste pictures first, or give a URL.',
    );
    return;
  }
  const options = currentOptions();
  for (const row of ready) row.options = options;
  queue(ready);
});

function queue(chosen: Row[]): void {
  for (const row of chosen) {
    row.state = 'queued';
    row.retry.hidden = true;
    row.status.classList.remove('failed');
    row.status.textContent = 'Waiting';
    row.progress.value = 0;
  }
  told.update();
  pump();
}

function pump(): void {
  while (active < AT_ONCE) {
    const next = all.find((row) => row.state === 'queued');
    if (!next) return;
    active += 1;
    void send(next).finally(() => {
      active -= 1;
      pump();
    });
  }
}

async function send(row: Row): Promise<void> {
  row.state = 'uploading';
  const headers = { 'X-API-Key': keyField.value };
  const options = row.options ?? currentOptions();
  // the upload's progress, as its request dispatches it
  const progress = new EventTarget();
  progress.addEventListener('progress', (event) => {
    const { loaded, total, lengthComputable } = event as ProgressEvent;
    if (!lengthComputable || total <= 0) return;
    const fraction = loaded / total;
    row.progress.value = fraction;
    row.status.textContent = fraction < 1 ? `Uploading: ${Math.round(fraction * 100)}%` : 'Sent: the service is storing it';
  });
  try {
    let image: UploadedImage;
    if (row.source.kind === 'url') {
      row.progress.removeAttribute('value');
      row.status.textContent = 'The service is fetching the URL';
      const body = new URLSearchParams([['source', row.source.url], ...optionFields(options)]);
      image = expectImage(await request('POST', API_UPLOAD, body, headers));
    } else if (row.source.file.size <= directMaxBytes) {
      const body = new FormData();
      body.append('source', row.source.file, row.source.file.name || 'pasted.png');
      for (const [name, value] of optionFields(options)) body.append(name, value);
      image = expectImage(await request('POST', API_UPLOAD, body, headers, progress));
    } else {
      image = await sendInTwoSteps(row.source.file, options, headers, progress);
    }
    row.progress.value = 1;
    row.state = 'done';
    row.image = image;
    row.status.textContent = 'Uploaded';
    showResult(row.item, row.id, image);
    batchEnded();
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    row.progress.value = 0;
    row.status.textContent = text;
    row.status.classList.add('failed');
    announce(`Not uploaded: ${text}`);
    if (error instanceof Refused && error.answer.status === 401) {
      holdForKey(row, text);
      told.update();
      return;
    }
    row.state = 'failed';
    row.retry.hidden = false;
    batchEnded(text);
  }
}

/** Why the batch's last failure failed, until the batch is told. */
let lastFailure: string | undefined;

/**
 * Once no picture is on its way, the batch is told in a line: how many were uploaded, how many failed, and why the
 * last that failed did (whichever row ended last).
 */
function batchEnded(failure?: string): void {
  lastFailure = failure ?? lastFailure;
  told.update();
  if (all.some((row) => row.state === 'queued' || row.state === 'uploading')) return;
  announce(`${told.line()}.${lastFailure === undefined ? '' : ` Not uploaded: ${lastFailure}`}`);
  lastFailure = undefined;
}

/**
 * The key was refused: this row and the ones waiting go back to ready, to go with the next press of Upload once the
 * key is corrected, rather than each meet the same refusal or need a retry of its own.
 */
function holdForKey(refused: Row, text: string): void {
  refused.state = 'ready';
  for (const row of all.filter((waiting) => waiting.state === 'queued')) {
    row.state = 'ready';
    row.status.textContent = text;
    row.status.classList.add('failed');
  }
  keyField.focus();
}

/** After a share: what it handed over, listed and marked, or what went wrong. */
async function listShared(batch: string): Promise<void> {
  history.replaceState(null, '', location.pathname);
  const shared = await takeShared(batch);
  if ('problem' in shared) {
    announce(shared.problem);
    return;
  }
  addSources(shared.sources, true);
  // no focus on anything that uploads: the page may have been opened by another site's form
  announce(
    `${shared.sources.length} shared from another app: check each, and upload the ones that are yours with their own button.`,
  );
}

const key = keyStore(keyField, remember, forget, announce);
if ('serviceWorker' in navigator)
  navigator.serviceWorker.register(UPLOAD_PAGE.worker, { scope: UPLOAD_PAGE.page }).catch(() => undefined);
const batch = new URLSearchParams(location.search).get('shared');
if (batch !== null && 'caches' in window)
  void listShared(batch).catch(() => announce('The shared pictures could not be read: share them again.'));
