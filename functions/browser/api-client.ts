/**
 * The page's requests to the API (same-origin, the key in `X-API-Key`) and to the store of two-step uploads, each with
 * its upload's progress; and why an answer is no image, in plain words with the service's own message.
 */

/** The fields of the API's Image object the page shows. */
export interface UploadedImage {
  title: string;
  url: string;
  url_viewer: string;
  delete_url: string;
  width: number;
  height: number;
  thumb: { url: string; width: number; height: number };
  medium: { url: string };
}

export interface Envelope {
  error?: { message?: string };
  image?: UploadedImage;
  upload?: { url: string; method: string; headers: Record<string, string>; token: string };
}

export interface Answer {
  status: number;
  body: Envelope | undefined;
  text: string;
  retryAfter: string | null;
}

/** What a row sends: a file, or the address of a picture the service fetches. */
export type Source = { kind: 'file'; file: File } | { kind: 'url'; url: string };

/** What the page's batch options say when Upload is pressed: the same for every file of that press. */
export interface Options {
  title: string;
  description: string;
  nsfw: boolean;
  expiration: string;
}

/**
 * One request; a network failure answers status 0. With `progress`, its upload's `progress` events (the XHR's own
 * `ProgressEvent`s, loaded and total bytes) are dispatched on it as well: the page listens there, as on any DOM target.
 */
export function request(
  method: string,
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  progress?: EventTarget,
): Promise<Answer> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (progress)
      xhr.upload.addEventListener('progress', (event) => {
        progress.dispatchEvent(new ProgressEvent('progress', event));
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

export const API_UPLOAD = '/api/1/upload?format=json';

export function optionFields(options: Options): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  if (options.title !== '') fields.push(['title', options.title]);
  if (options.description !== '') fields.push(['description', options.description]);
  if (options.nsfw) fields.push(['nsfw', '1']);
  if (options.expiration !== '') fields.push(['expiration', options.expiration]);
  return fields;
}

/** Why an answer is not an image, in plain words, with the service's own message. */
export function reason(answer: Answer): string {
  if (answer.status === 0) return 'The connection failed before the service answered: check the network, then retry.';
  const message = answer.body?.error?.message ?? (answer.text.trim().slice(0, 200) || `status ${answer.status}`);
  if (answer.status === 401) return `The API key was refused ("${message}"): check the key, then retry.`;
  if (answer.status === 429) return `${sentence(message)} Try again ${waitOf(answer.retryAfter)}.`;
  if (answer.status === 413) return `Too large: ${sentence(message)}`;
  if (answer.status === 415) return `Not a picture this service takes: ${sentence(message)}`;
  if (answer.status >= 500) return `The service failed (${message}): retry in a moment.`;
  return `Refused: ${sentence(message)}`;
}

/** A message ending with one full stop, whether or not the service's had one. */
function sentence(message: string): string {
  return `${message.replace(/\.+$/, '')}.`;
}

function waitOf(retryAfter: string | null): string {
  const seconds = Number(retryAfter);
  if (!Number.isFinite(seconds) || seconds <= 0) return 'later';
  if (seconds < 90) return `in ${Math.ceil(seconds)} seconds`;
  return `in ${Math.ceil(seconds / 60)} minutes`;
}

export class Refused extends Error {
  constructor(readonly answer: Answer) {
    super(reason(answer));
  }
}

export function expectImage(answer: Answer): UploadedImage {
  if (answer.status === 200 && answer.body?.image) return answer.body.image;
  throw new Refused(answer);
}

/** A file past the gateway's limit: an upload URL, the bytes PUT to it (with progress), then the upload of the token. */
export async function sendInTwoSteps(
  file: File,
  options: Options,
  key: Record<string, string>,
  progress: EventTarget,
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
  const put = await request(upload.method, upload.url, file, headers, progress);
  if (put.status < 200 || put.status > 299)
    throw new Error(
      put.status === 0
        ? 'The file store could not be reached: check the network, then retry.'
        : `The file store refused the file (status ${put.status}): retry.`,
    );
  const step3 = new URLSearchParams([['upload_token', upload.token], ...optionFields(options)]);
  return expectImage(await request('POST', API_UPLOAD, step3, key));
}
