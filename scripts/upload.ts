import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { basename } from 'node:path';
import { formatSize } from '../functions/core/image/formatting';
import { readCommandLine } from './command-line';
import { terminalSafe } from './terminal-text';

/**
 * `npm run upload -- FILE... [BASE_URL KEY] [OPTIONS]`: uploads images as ShareX would and prints, for each, its
 * link, its viewer page and its delete link (`docs/clients.md`). A file that fits through the gateway in one request
 * goes directly (multipart); a larger one takes the two-step upload (upload URL, PUT, upload with the token), with a
 * progress bar on a terminal. BASE_URL and KEY default to IMAGE_UPLOAD_URL and IMAGE_UPLOAD_KEY (and
 * http://localhost:3000). Exit codes: 0 all uploaded, 1 one failed (the others are still sent), 2 usage.
 */
const USAGE = `usage: npm run upload -- FILE... [BASE_URL KEY] [--title TEXT] [--description TEXT] [--expiration DURATION] [--nsfw] [--json]
  BASE_URL and KEY: or IMAGE_UPLOAD_URL and IMAGE_UPLOAD_KEY (BASE_URL defaults to http://localhost:3000)
  --expiration: seconds or ISO 8601 (PT5M, P1D), as the API takes it; every option applies to every file
  --json: the API's image objects (a failure: {"file", "error"}) as one JSON array
  a KEY that begins with - goes after --: npm run upload -- photo.jpg BASE_URL -- -KEY
  exit codes: 0 all uploaded, 1 one or more failed, 2 usage`;

/** A multipart body of at most 4.6 MB passes the edge; a file a little under leaves room for the form's framing. */
export const DIRECT_MAX_BYTES = 4_500_000;

/** The upload parameters a run applies to every file. */
export interface UploadOptions {
  title?: string | undefined;
  description?: string | undefined;
  expiration?: string | undefined;
  nsfw?: boolean | undefined;
}

/** The parts of the API's image object the tool prints. */
export interface UploadedImage {
  url: string;
  url_viewer: string;
  delete_url: string;
  [field: string]: unknown;
}

interface Envelope {
  error?: { message: string };
  image?: UploadedImage;
  upload?: { url: string; method: string; headers: Record<string, string>; token: string };
}

async function answer(response: Response): Promise<Envelope> {
  const text = await response.text();
  let body: Envelope;
  try {
    body = JSON.parse(text) as Envelope;
  } catch {
    throw new Error(`${response.status} ${text.slice(0, 200)}`);
  }
  if (!response.ok) throw new Error(body.error?.message ?? `${response.status}`);
  return body;
}

/** The options as the API's form fields. */
function fields({ title, description, expiration, nsfw }: UploadOptions): Array<[string, string]> {
  const given = { title, description, expiration, nsfw: nsfw ? '1' : undefined };
  return Object.entries(given).filter((field): field is [string, string] => field[1] !== undefined);
}

/** `large.png [##########----------] 52% 14.1 MB of 27.0 MB`, `width` marks wide. */
export function progressLine(name: string, sent: number, total: number, width = 20): string {
  const share = total === 0 ? 1 : Math.min(1, sent / total);
  const done = Math.round(share * width);
  return `${name} [${'#'.repeat(done)}${'-'.repeat(width - done)}] ${Math.floor(share * 100)}% ${formatSize(sent)} of ${formatSize(total)}`;
}

/** PUTs the bytes in slices, telling `onSent` how many have gone (node:http: a presigned PUT's own Content-Length). */
function put(
  ticket: { url: string; method: string; headers: Record<string, string> },
  bytes: Uint8Array,
  onSent: (sent: number) => void,
): Promise<number> {
  const { url, method, headers } = ticket;
  const send = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, { method, headers: { ...headers, 'Content-Length': String(bytes.length) } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    const SLICE = 256 * 1024;
    let at = 0;
    const next = (): void => {
      while (at < bytes.length) {
        const slice = bytes.subarray(at, at + SLICE);
        at += slice.length;
        const sentNow = at;
        if (!request.write(slice, () => onSent(sentNow))) return void request.once('drain', next);
      }
      request.end();
    };
    next();
  });
}

/** Uploads one file: directly, or in two steps past the gateway's limit; `onSent` follows the two-step PUT. */
export async function upload(
  file: string,
  baseUrl: string,
  key: string,
  options: UploadOptions = {},
  onSent: (sent: number, total: number) => void = () => undefined,
): Promise<UploadedImage> {
  if (!existsSync(file)) throw new Error(`no such file: ${file}`);
  const bytes = readFileSync(file);
  const name = basename(file);
  const api = `${baseUrl.replace(/\/+$/, '')}/api/1`;
  const headers = { 'X-API-Key': key };
  let body: Envelope;
  if (bytes.length <= DIRECT_MAX_BYTES) {
    const form = new FormData();
    form.append('source', new Blob([bytes]), name);
    for (const [field, value] of fields(options)) form.append(field, value);
    body = await answer(await fetch(`${api}/upload?format=json`, { method: 'POST', headers, body: form }));
  } else {
    const params = new URLSearchParams({ size: String(bytes.length), filename: name });
    const ticket = (await answer(await fetch(`${api}/upload-url`, { method: 'POST', headers, body: params }))).upload;
    if (!ticket) throw new Error('the service answered no upload URL');
    const status = await put(ticket, bytes, (sent) => onSent(sent, bytes.length));
    if (status < 200 || status > 299) throw new Error(`the upload URL refused the file: ${status}`);
    const form = new URLSearchParams([['upload_token', ticket.token], ['format', 'json'], ...fields(options)]);
    body = await answer(await fetch(`${api}/upload`, { method: 'POST', headers, body: form }));
  }
  if (!body.image) throw new Error('the service answered no image');
  return body.image;
}

/**
 * What a request that got no answer means, in a line: fetch says only "fetch failed", its cause says why (nothing
 * listens there, no such host, a certificate refused).
 */
function unreached(error: unknown, baseUrl: string): string | undefined {
  if (!(error instanceof TypeError) || error.message !== 'fetch failed') return undefined;
  const cause = error.cause as NodeJS.ErrnoException | undefined;
  const code = cause?.code ?? '';
  if (code === 'ECONNREFUSED')
    return `nothing answers at ${baseUrl}: start the service (npm start), or give its BASE_URL (or IMAGE_UPLOAD_URL)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `no such host: ${baseUrl} (check BASE_URL, or IMAGE_UPLOAD_URL)`;
  return `${baseUrl} could not be reached (${code || cause?.message || 'no answer'})`;
}

/** The files, base URL and key of a command line: a positional that is an http(s) URL starts `BASE_URL [KEY]`. */
function targetOf(positionals: string[]): { files: string[]; baseUrl: string | undefined; key: string | undefined } {
  const at = positionals.findIndex((text) => /^https?:\/\//i.test(text));
  if (at === -1) return { files: positionals, baseUrl: undefined, key: undefined };
  if (at < positionals.length - 2) throw new Error('BASE_URL and KEY come last, after the files');
  // BASE_URL alone: the key from IMAGE_UPLOAD_KEY
  return { files: positionals.slice(0, at), baseUrl: positionals[at], key: positionals[at + 1] };
}

export async function main(
  argv: readonly string[],
  io: { out: (text: string) => void; err: (text: string) => void; terminal: boolean },
): Promise<number> {
  const reading = readCommandLine(USAGE, argv, {
    title: { type: 'string' },
    description: { type: 'string' },
    expiration: { type: 'string' },
    nsfw: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (!('read' in reading)) {
    (reading.exit === 0 ? io.out : io.err)(reading.text);
    return reading.exit;
  }
  const parsed = reading.read;
  const { values } = parsed;
  let target;
  try {
    target = targetOf(parsed.positionals);
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const baseUrl = target.baseUrl ?? process.env['IMAGE_UPLOAD_URL'] ?? 'http://localhost:3000';
  const key = target.key ?? process.env['IMAGE_UPLOAD_KEY'];
  if (target.files.length === 0 || !key) {
    io.err(`${target.files.length === 0 ? 'no file given' : 'no key: give BASE_URL KEY, or set IMAGE_UPLOAD_KEY'}\n${USAGE}\n`);
    return 2;
  }
  const { title, description, expiration, nsfw } = values;
  const options: UploadOptions = { title, description, expiration, nsfw };
  const results: Array<UploadedImage | { file: string; error: string }> = [];
  for (const file of target.files) {
    const name = basename(file);
    // the bar redraws one line of the terminal, at most every 100 ms; piped, nothing
    let drawnAt = 0;
    const onSent = (sent: number, total: number): void => {
      if (!io.terminal || (sent < total && Date.now() - drawnAt < 100)) return;
      drawnAt = Date.now();
      io.err(`\r${terminalSafe(progressLine(name, sent, total))}${sent === total ? '\n' : ''}`);
    };
    try {
      const image = await upload(file, baseUrl, key, options, onSent);
      results.push(image);
      // what the service answered reaches the terminal escaped, as any text from elsewhere
      if (!values.json) io.out(terminalSafe(`${image.url}\n  viewer: ${image.url_viewer}\n  delete: ${image.delete_url}`) + '\n');
    } catch (error) {
      const message = unreached(error, baseUrl) ?? (error instanceof Error ? error.message : String(error));
      results.push({ file, error: message });
      io.err(`${terminalSafe(target.files.length > 1 ? `${name}: ` : '')}upload failed: ${terminalSafe(message)}\n`);
    }
  }
  // escaped as \uXXXX, which JSON reads back as the same characters
  if (values.json) io.out(`${terminalSafe(JSON.stringify(results, null, 2))}\n`);
  return results.some((result) => 'error' in result) ? 1 : 0;
}

if (require.main === module) {
  const io = {
    out: (text: string) => void process.stdout.write(text),
    err: (text: string) => void process.stderr.write(text),
    terminal: process.stderr.isTTY,
  };
  void main(process.argv.slice(2), io).then((code) => (process.exitCode = code));
}
