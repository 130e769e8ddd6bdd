import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * `npm run upload -- FILE [BASE_URL KEY]`: uploads one image and prints its link. A file that fits through the
 * gateway in one request goes directly (multipart); a larger one takes the two-step upload (upload URL, PUT, upload
 * with the token). BASE_URL and KEY default to IMAGE_UPLOAD_URL and IMAGE_UPLOAD_KEY (and http://localhost:3000).
 */

/** A multipart body of at most 4.6 MB passes the edge; a file a little under leaves room for the form's framing. */
export const DIRECT_MAX_BYTES = 4_500_000;

interface Envelope {
  error?: { message: string };
  image?: { url: string };
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

export async function upload(file: string, baseUrl: string, key: string): Promise<string> {
  const bytes = readFileSync(file);
  const name = basename(file);
  const api = `${baseUrl.replace(/\/+$/, '')}/api/1`;
  const headers = { 'X-API-Key': key };
  let body: Envelope;
  if (bytes.length <= DIRECT_MAX_BYTES) {
    const form = new FormData();
    form.append('source', new Blob([bytes]), name);
    body = await answer(await fetch(`${api}/upload?format=json`, { method: 'POST', headers, body: form }));
  } else {
    const params = new URLSearchParams({ size: String(bytes.length), filename: name });
    const ticket = (await answer(await fetch(`${api}/upload-url`, { method: 'POST', headers, body: params }))).upload;
    if (!ticket) throw new Error('the service answered no upload URL');
    const put = await fetch(ticket.url, { method: ticket.method, headers: ticket.headers, body: bytes });
    if (!put.ok) throw new Error(`the upload URL refused the file: ${put.status}`);
    const form = new URLSearchParams({ upload_token: ticket.token, format: 'json' });
    body = await answer(await fetch(`${api}/upload`, { method: 'POST', headers, body: form }));
  }
  if (!body.image) throw new Error('the service answered no image');
  return body.image.url;
}

async function main(argv: readonly string[]): Promise<number> {
  const [file, baseUrl = process.env['IMAGE_UPLOAD_URL'] ?? 'http://localhost:3000', key = process.env['IMAGE_UPLOAD_KEY']] =
    argv;
  if (!file || !key) {
    process.stderr.write('usage: npm run upload -- FILE [BASE_URL KEY]   (or IMAGE_UPLOAD_URL and IMAGE_UPLOAD_KEY)\n');
    return 2;
  }
  try {
    statSync(file);
    process.stdout.write(`${await upload(file, baseUrl, key)}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`upload failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
