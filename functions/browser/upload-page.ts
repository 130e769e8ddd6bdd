/**
 * The upload page's script (`/upload`, `docs/pages.md`): bundled by `npm run build:browser` into
 * `functions/http/generated/browser-assets.ts`, which the page embeds under its CSP hash. Every text of an upload or of
 * an answer reaches the page as text (`textContent`, `value`), never as HTML.
 */
import { embedCodes } from '../http/embed-codes';
import { UPLOAD_PAGE } from '../core/links';
import { SHARE_CACHE, sharedBatchOf } from './share-target';

/** The fields of the API's Image object the page shows. */
interface UploadedImage {
  title: string;
  url: string;
  url_viewer: string;
  delete_url: string;
  width: number;
  height: number;
  thumb: { url: string; width: number; height: number };
  medium: { url: string };
}

interface Envelope {
  error?: { message?: string };
  image?: UploadedImage;
  upload?: { url: string; method: string; headers: Record<string, string>; token: string };
}

interface Answer {
  status: number;
  body: Envelope | undefined;
  text: string;
  retryAfter: string | null;
}

type Source = { kind: 'file'; file: File } | { kind: 'url'; url: string };

/** What the page's batch options say when Upload is pressed: the same for every file of that press. */
interface Options {
  title: string;
  description: string;
  nsfw: boolean;
  expiration: string;
}

interface Row {
  id: number;
  source: Source;
  state: 'ready' | 'queued' | 'uploading' | 'done' | 'failed';
  options: Options | undefined;
  item: HTMLLIElement;
  progress: HTMLProgressElement;
  status: HTMLParagraphElement;
  retry: HTMLButtonElement;
}

/** Uploads at once: a few, so that one large file does not hold the others back, and a phone's link is not swamped. */
const AT_ONCE = 3;
const KEY_STORAGE = 'image-upload:api-key';

const element = <T extends HTMLElement>(id: string): T => {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
};

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
const uploadButton = element<HTMLButtonElement>('upload-button');
const all: Row[] = [];
let active = 0;

/** Says something to screen readers (the live region) and to everyone (it is shown as the page's status line). */
function announce(text: string): void {
  announcer.textContent = text;
}

function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function make<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  if (text !== undefined) made.textContent = text;
  return made;
}

// ---- the key: in the field, and in this browser's storage only when the operator asks

/** This browser's storage; none where it is refused (site data blocked): then nothing is remembered. */
function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

function restoreKey(): void {
  if (!storage()) {
    remember.closest('label')?.setAttribute('hidden', '');
    return;
  }
  const stored = storage()?.getItem(KEY_STORAGE) ?? null;
  if (stored === null) return;
  keyField.value = stored;
  remember.checked = true;
  forget.hidden = false;
}

function keepKey(): void {
  if (remember.checked && keyField.value !== '') {
    storage()?.setItem(KEY_STORAGE, keyField.value);
    forget.hidden = false;
  } else {
    storage()?.removeItem(KEY_STORAGE);
  }
}

forget.addEventListener('click', () => {
  storage()?.removeItem(KEY_STORAGE);
  keyField.value = '';
  remember.checked = false;
  forget.hidden = true;
  announce('The API key is forgotten on this device.');
  keyField.focus();
});
remember.addEventListener('change', () => {
  if (!remember.checked) {
    storage()?.removeItem(KEY_STORAGE);
    forget.hidden = true;
  }
});

// ---- the rows: one per file or URL

function addSources(sources: Source[], shared = false): void {
  for (const source of sources) {
    const id = all.length + 1;
    const name = source.kind === 'file' ? source.file.name || 'pasted picture' : source.url;
    const item = make('li', { class: 'row', id: `row-${id}` });
    const head = make('p', { class: 'row-name' }, name);
    if (source.kind === 'file') head.append(make('span', { class: 'muted' }, ` ${formatBytes(source.file.size)}`));
    const progress = make('progress', { max: '1', value: '0', 'aria-label': `Upload of ${name}` });
    const status = make('p', { class: 'row-status' }, 'Ready');
    const retry = make('button', { type: 'button', class: 'retry', 'aria-label': `Retry ${name}` }, 'Retry');
    retry.hidden = true;
    item.append(head);
    // anyone's page can post to the share target: what came that way says so, to be looked at before Upload
    if (shared) item.append(make('p', { class: 'row-shared' }, 'Shared from another app: check it is yours before you upload.'));
    item.append(progress, status, retry);
    rows.append(item);
    const row: Row = { id, source, state: 'ready', options: undefined, item, progress, status, retry };
    retry.addEventListener('click', () => {
      if (!keyReady()) return;
      keepKey();
      queue([row]);
    });
    all.push(row);
  }
  const ready = all.filter((row) => row.state === 'ready').length;
  if (sources.length > 0) announce(`${ready} ${ready === 1 ? 'picture' : 'pictures'} ready: press Upload.`);
}

function files(list: FileList | null | undefined): Source[] {
  return [...(list ?? [])].map((file) => ({ kind: 'file', file }));
}

function isWebAddress(text: string): boolean {
  return /^https?:\/\/\S+$/i.test(text);
}

function takeUrlField(): boolean {
  const url = urlField.value.trim();
  if (url === '') return true;
  if (!isWebAddress(url)) {
    announce('The URL must start with http:// or https://.');
    urlField.focus();
    return false;
  }
  addSources([{ kind: 'url', url }]);
  urlField.value = '';
  return true;
}

filesField.addEventListener('change', () => {
  addSources(files(filesField.files));
  filesField.value = '';
});
element<HTMLButtonElement>('add-url').addEventListener('click', () => void takeUrlField());
urlField.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter') return;
  event.preventDefault();
  takeUrlField();
});

// a screenshot pasted anywhere on the page; a web address pasted outside a field
document.addEventListener('paste', (event) => {
  const pasted = files(event.clipboardData?.files);
  if (pasted.length > 0) {
    event.preventDefault();
    addSources(pasted);
    return;
  }
  const target = event.target as HTMLElement | null;
  if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) return;
  const text = event.clipboardData?.getData('text/plain').trim() ?? '';
  if (isWebAddress(text)) addSources([{ kind: 'url', url: text }]);
});

// files dropped anywhere on the page
document.addEventListener('dragover', (event) => {
  const types = event.dataTransfer?.types ?? [];
  if (!types.includes('Files') && !types.includes('text/uri-list')) return;
  event.preventDefault();
  if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
  document.body.classList.add('dragging');
});
document.addEventListener('dragleave', (event) => {
  if (event.relatedTarget === null) document.body.classList.remove('dragging');
});
document.addEventListener('drop', (event) => {
  document.body.classList.remove('dragging');
  const dropped = files(event.dataTransfer?.files);
  const link = event.dataTransfer?.getData('text/uri-list').split('\n')[0]?.trim() ?? '';
  if (dropped.length === 0 && !isWebAddress(link)) return;
  event.preventDefault();
  addSources(dropped.length > 0 ? dropped : [{ kind: 'url', url: link }]);
});

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
  keepKey();
  const ready = all.filter((row) => row.state === 'ready');
  if (ready.length === 0) {
    const busy = all.some((row) => row.state === 'queued' || row.state === 'uploading');
    announce(
      busy
        ? 'Nothing new to upload: the pictures listed are on their way.'
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

/** One request, with its upload's progress; a network failure answers status 0. */
function request(
  method: string,
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  onProgress?: (fraction: number) => void,
): Promise<Answer> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onProgress)
      xhr.upload.addEventListener('progress', (event) => {
        if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
      });
    const answered = (): void => {
      let body: Envelope | undefined;
      try {
        body = JSON.parse(xhr.responseText) as Envelope;
      } catch {
        body = undefined;
      }
      // only a flood refusal says when to come back (and another origin's answer would not let it be read)
      const retryAfter = xhr.status === 429 ? xhr.getResponseHeader('Retry-After') : null;
      resolve({ status: xhr.status, body, text: xhr.responseText, retryAfter });
    };
    xhr.addEventListener('load', answered);
    xhr.addEventListener('error', () => resolve({ status: 0, body: undefined, text: '', retryAfter: null }));
    xhr.send(body);
  });
}

const API_UPLOAD = '/api/1/upload?format=json';

function optionFields(options: Options): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  if (options.title !== '') fields.push(['title', options.title]);
  if (options.description !== '') fields.push(['description', options.description]);
  if (options.nsfw) fields.push(['nsfw', '1']);
  if (options.expiration !== '') fields.push(['expiration', options.expiration]);
  return fields;
}

/** Why an answer is not an image, in plain words, with the service's own message. */
function reason(answer: Answer): string {
  if (answer.status === 0) return 'The connection failed before the service answered: check the network, then retry.';
  const message = answer.body?.error?.message ?? (answer.text.trim().slice(0, 200) || `status ${answer.status}`);
  if (answer.status === 401) return `The API key was refused ("${message}"): check the key, then retry.`;
  if (answer.status === 429) return `${message}. Try again ${waitOf(answer.retryAfter)}.`;
  if (answer.status === 413) return `Too large: ${message}.`;
  if (answer.status === 415) return `Not a picture this service takes: ${message}.`;
  if (answer.status >= 500) return `The service failed (${message}): retry in a moment.`;
  return `Refused: ${message}.`;
}

function waitOf(retryAfter: string | null): string {
  const seconds = Number(retryAfter);
  if (!Number.isFinite(seconds) || seconds <= 0) return 'later';
  if (seconds < 90) return `in ${Math.ceil(seconds)} seconds`;
  return `in ${Math.ceil(seconds / 60)} minutes`;
}

class Refused extends Error {
  constructor(readonly answer: Answer) {
    super(reason(answer));
  }
}

function expectImage(answer: Answer): UploadedImage {
  if (answer.status === 200 && answer.body?.image) return answer.body.image;
  throw new Refused(answer);
}

async function send(row: Row): Promise<void> {
  row.state = 'uploading';
  const key = { 'X-API-Key': keyField.value };
  const options = row.options ?? currentOptions();
  const showProgress = (fraction: number): void => {
    row.progress.value = fraction;
    row.status.textContent = fraction < 1 ? `Uploading: ${Math.round(fraction * 100)}%` : 'Sent: the service is storing it';
  };
  try {
    let image: UploadedImage;
    if (row.source.kind === 'url') {
      row.progress.removeAttribute('value');
      row.status.textContent = 'The service is fetching the URL';
      const body = new URLSearchParams([['source', row.source.url], ...optionFields(options)]);
      image = expectImage(await request('POST', API_UPLOAD, body, key));
    } else if (row.source.file.size <= directMaxBytes) {
      const body = new FormData();
      body.append('source', row.source.file, row.source.file.name || 'pasted.png');
      for (const [name, value] of optionFields(options)) body.append(name, value);
      image = expectImage(await request('POST', API_UPLOAD, body, key, showProgress));
    } else {
      image = await sendInTwoSteps(row.source.file, options, key, showProgress);
    }
    row.progress.value = 1;
    row.state = 'done';
    row.status.textContent = 'Uploaded';
    showResult(row, image);
    announce(`${image.title} is uploaded.`);
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    row.progress.value = 0;
    row.status.textContent = text;
    row.status.classList.add('failed');
    announce(`Not uploaded: ${text}`);
    if (error instanceof Refused && error.answer.status === 401) {
      holdForKey(row, text);
      return;
    }
    row.state = 'failed';
    row.retry.hidden = false;
  }
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

/** A file past the gateway's limit: an upload URL, the bytes PUT to it (with progress), then the upload of the token. */
async function sendInTwoSteps(
  file: File,
  options: Options,
  key: Record<string, string>,
  showProgress: (fraction: number) => void,
): Promise<UploadedImage> {
  const asked = new URLSearchParams([
    ['size', String(file.size)],
    ['filename', file.name || 'pasted.png'],
  ]);
  const step1 = await request('POST', '/api/1/upload-url', asked, key);
  const upload = step1.body?.upload;
  if (step1.status !== 200 || !upload) throw new Refused(step1);
  // the browser sets Content-Length itself, from the file: the one the URL was signed for
  const headers = Object.fromEntries(Object.entries(upload.headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
  const put = await request(upload.method, upload.url, file, headers, showProgress);
  if (put.status < 200 || put.status > 299)
    throw new Error(
      put.status === 0
        ? 'The file store could not be reached: check the network, then retry.'
        : `The file store refused the file (status ${put.status}): retry.`,
    );
  const step3 = new URLSearchParams([['upload_token', upload.token], ...optionFields(options)]);
  return expectImage(await request('POST', API_UPLOAD, step3, key));
}

// ---- results: the thumbnail, the links, and the embed codes, each with a copy button

function copyButton(field: HTMLInputElement, label: string): HTMLButtonElement {
  const button = make('button', { type: 'button', 'aria-label': `Copy ${label}` }, 'Copy');
  button.addEventListener('click', () => {
    const copied = (): void => {
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 1500);
    };
    const select = (): void => {
      field.focus();
      field.select();
    };
    // no clipboard on a page that is not a secure context (plain http from another machine): the text is selected
    if (navigator.clipboard === undefined) select();
    else navigator.clipboard.writeText(field.value).then(copied, select);
  });
  return button;
}

function codeLine(id: string, label: string, value: string, copyLabel = label): HTMLDivElement {
  const line = make('div', { class: 'code' });
  const field = make('input', { type: 'text', id, readonly: '' });
  field.value = value;
  line.append(make('label', { for: id }, label), field, copyButton(field, copyLabel));
  return line;
}

function showResult(row: Row, image: UploadedImage): void {
  const result = make('div', { class: 'result' });
  const picture = make('a', { href: image.url_viewer, class: 'thumb' });
  picture.append(
    make('img', { src: image.thumb.url, alt: image.title, width: String(image.thumb.width), height: String(image.thumb.height) }),
  );
  const prefix = `r${row.id}`;
  const links = make('div', { class: 'codes' });
  const of = ` of ${image.title}`;
  links.append(
    codeLine(`${prefix}-direct`, 'Direct link', image.url, `Direct link${of}`),
    codeLine(`${prefix}-viewer`, 'Viewer page', image.url_viewer, `Viewer page${of}`),
    codeLine(`${prefix}-delete`, 'Delete link', image.delete_url, `Delete link${of}`),
  );
  const more = make('details', { class: 'embed' });
  more.append(make('summary', {}, 'Embed codes'));
  const view = {
    title: image.title,
    viewerUrl: image.url_viewer,
    original: { url: image.url },
    medium: { url: image.medium.url },
    thumb: { url: image.thumb.url },
  };
  for (const group of embedCodes(view)) {
    if (group.title === 'Links') continue;
    const codes = make('div', { class: 'codes' });
    for (const code of group.codes)
      codes.append(codeLine(`${prefix}-${code.id}`, code.label, code.code, `${group.title}, ${code.label}${of}`));
    more.append(make('h3', {}, group.title), codes);
  }
  result.append(picture, links, more);
  row.item.append(result);
}

// ---- pictures shared from another app (the manifest's share target, received by the service worker)

async function takeShared(): Promise<void> {
  const batch = new URLSearchParams(location.search).get('shared');
  if (batch === null) return;
  history.replaceState(null, '', location.pathname);
  if (batch === 'missed') {
    announce('The shared pictures did not arrive: this browser had not opened this page before. Share them again.');
    return;
  }
  if (batch === 'failed') {
    announce("The shared pictures could not be kept (this browser's storage may be full): share them again.");
    return;
  }
  const cache = await caches.open(SHARE_CACHE);
  const sources: Source[] = [];
  for (const entry of await cache.keys()) {
    if (sharedBatchOf(new URL(entry.url).pathname) !== batch) continue;
    const response = await cache.match(entry);
    await cache.delete(entry);
    if (!response) continue;
    if (entry.url.endsWith('/links')) {
      for (const url of ((await response.json()) as string[]).filter(isWebAddress)) sources.push({ kind: 'url', url });
      continue;
    }
    const name = decodeURIComponent(response.headers.get('X-File-Name') ?? '');
    const blob = await response.blob();
    sources.push({ kind: 'file', file: new File([blob], name, { type: blob.type }) });
  }
  if (sources.length === 0) {
    announce('Nothing arrived from the share: share the pictures again.');
    return;
  }
  addSources(sources, true);
  announce(`${sources.length} shared: check them, then press Upload.`);
  uploadButton.focus();
}

restoreKey();
if ('serviceWorker' in navigator)
  navigator.serviceWorker.register(UPLOAD_PAGE.worker, { scope: UPLOAD_PAGE.page }).catch(() => undefined);
if ('caches' in window) void takeShared().catch(() => announce('The shared pictures could not be read: share them again.'));
