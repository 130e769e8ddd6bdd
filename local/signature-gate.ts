import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { readUpTo } from '../functions/adapters/bounded-read';

/**
 * The one door of a local stand-in (s3rver, dynalite, our SSM server), which itself listens only on a socket in a
 * folder no other user may enter: a request passes only if it is signed (SigV4, in its headers or as a presigned
 * URL) with the data folder's own secret, as AWS would check it, and then goes to the stand-in unchanged. Without
 * it, any local user could read and write the bucket (s3rver checks no V4 signature) or read the API key
 * (`docs/local.md`). The signature is recomputed with the AWS SDK's own signer over exactly the headers the request
 * says it signed.
 */
export interface SignatureGate {
  url: string;
  close(): Promise<void>;
}

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The query parameters of a presigned URL that are its signature's own: the signer writes them again. */
const AUTH_PARAMETERS = new Set([
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Expires',
  'X-Amz-SignedHeaders',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
]);
/** A request's time may differ from this machine's by this much, as AWS allows. */
const MAX_SKEW_MS = 15 * 60_000;
/** The payload hash of a request that signs no payload (S3's presigned URLs). */
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** Bodies hashed to check a signature (JSON requests of DynamoDB and SSM; S3 sends its payload's hash). */
const MAX_HASHED_BODY_BYTES = 16 * 1024 * 1024;

/** node:crypto as the signer's hash: sha256, or HMAC-sha256 with a secret. */
export class NodeSha256 {
  private hash;

  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }

  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    throw new Error('not used by the signer');
  }
}

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

interface Claim {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  /** When it was signed, and, for a presigned URL, for how many seconds. */
  signedAtMs: number;
  expiresSeconds: number | undefined;
}

/** `20261125T120000Z` as a time; NaN when it is not one. */
function amzDateMs(text: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return match ? Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!, +match[4]!, +match[5]!, +match[6]!) : NaN;
}

/** The query of a URL as the signer reads it: names and values decoded, repeated names as arrays. */
function queryOf(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const [name = '', value = ''] = pair.split(/=(.*)/s);
    const key = decodeURIComponent(name);
    const decoded = decodeURIComponent(value);
    const existing = query[key];
    query[key] = existing === undefined ? decoded : [existing, decoded].flat();
  }
  return query;
}

/** What a request claims about its signature, from its Authorization header or its presigned query; undefined: none. */
function claimOf(request: IncomingMessage, query: Record<string, string | string[]>): Claim | undefined {
  const authorization = request.headers['authorization'];
  if (authorization !== undefined) {
    const match =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    if (!match) return undefined;
    return {
      accessKeyId: match[1]!,
      date: match[2]!,
      region: match[3]!,
      service: match[4]!,
      signedHeaders: match[5]!.split(';'),
      signature: match[6]!,
      signedAtMs: amzDateMs(String(request.headers['x-amz-date'] ?? '')),
      expiresSeconds: undefined,
    };
  }
  const text = (name: string): string => {
    const value = query[name];
    return typeof value === 'string' ? value : '';
  };
  if (text('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') return undefined;
  const [accessKeyId = '', date = '', region = '', service = '', terminator] = text('X-Amz-Credential').split('/');
  if (terminator !== 'aws4_request') return undefined;
  return {
    accessKeyId,
    date,
    region,
    service,
    signedHeaders: text('X-Amz-SignedHeaders').split(';'),
    signature: text('X-Amz-Signature'),
    signedAtMs: amzDateMs(text('X-Amz-Date')),
    expiresSeconds: Number(text('X-Amz-Expires')),
  };
}

/** Why the gate refused a request: said in its answer, as S3 or DynamoDB would say it. */
export const REFUSALS = {
  unsigned: 'The request is not signed (AWS Signature Version 4): sign it with the credentials in endpoints.json',
  otherCredentials: "The request is not signed with this data folder's credentials (endpoints.json)",
  clock: "The request was signed more than 15 minutes from this machine's time: check the clock",
  expired: 'The presigned URL has expired, or is not valid yet: ask for a new one',
  mismatch:
    "The request's signature does not match it: it was signed with another secret than this data folder's " +
    '(endpoints.json), or a part of it that was signed (its length, a header, the body) changed since',
  unsignedHeaders: 'Headers x-amz-* that were not signed were sent, and S3 refuses them:',
} as const;

type Verdict = { valid: true; body?: Buffer | undefined } | { valid: false; reason: string };

/**
 * Whether the request carries a valid signature of these credentials, over every `x-amz-*` header it sends (S3
 * refuses one not signed: an `x-amz-copy-source` added to a presigned PUT would copy another object); `body` is read
 * when the signature covers it (no `x-amz-content-sha256` header names its hash). Answers the body read, if any, to
 * be sent on, or why the request is refused.
 */
async function verify(request: IncomingMessage, credentials: Credentials, region: string): Promise<Verdict> {
  const url = new URL(request.url ?? '/', 'http://gate');
  const query = queryOf(url.search);
  const claim = claimOf(request, query);
  const refused = (reason: string): Verdict => ({ valid: false, reason });
  if (!claim) return refused(REFUSALS.unsigned);
  if (claim.accessKeyId !== credentials.accessKeyId || claim.region !== region) return refused(REFUSALS.otherCredentials);
  if (!Number.isFinite(claim.signedAtMs)) return refused(REFUSALS.unsigned);
  const nowMs = Date.now();
  if (claim.expiresSeconds === undefined) {
    if (Math.abs(nowMs - claim.signedAtMs) > MAX_SKEW_MS) return refused(REFUSALS.clock);
  } else if (
    !(claim.expiresSeconds > 0 && claim.signedAtMs <= nowMs + MAX_SKEW_MS) ||
    nowMs > claim.signedAtMs + claim.expiresSeconds * 1000
  ) {
    return refused(REFUSALS.expired);
  }
  const notSigned = Object.keys(request.headers).filter(
    (name) => name.startsWith('x-amz-') && !claim.signedHeaders.includes(name),
  );
  if (notSigned.length > 0) return refused(`${REFUSALS.unsignedHeaders} ${notSigned.join(', ')}`);
  const headers: Record<string, string> = {};
  for (const name of claim.signedHeaders) {
    const value = request.headers[name];
    if (value === undefined) return refused(REFUSALS.mismatch);
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const presigned = claim.expiresSeconds !== undefined;
  const body =
    presigned || headers['x-amz-content-sha256'] !== undefined ? undefined : await readUpTo(request, MAX_HASHED_BODY_BYTES);
  if (!presigned && headers['x-amz-content-sha256'] === undefined && body === undefined) return refused(REFUSALS.mismatch);
  const signer = new SignatureV4({
    credentials,
    region,
    service: claim.service,
    sha256: NodeSha256,
    // S3 signs the path as sent; the other services encode it once more
    uriEscapePath: claim.service !== 's3',
    // the payload's hash is a header only where the request sent it (S3); the signer would add it to every request,
    // and sign it, where the AWS CLI signs none for SSM or DynamoDB
    applyChecksum: false,
  });
  // A presigned URL carries in its query the x-amz-* headers the presigner hoisted there (the payload's hash among
  // them): as headers again, spelled as they were, they are hoisted the same way; the signature's own parameters
  // are the signer's to write.
  const signedQuery: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(query)) {
    if (presigned && AUTH_PARAMETERS.has(name)) continue;
    if (presigned && /^x-amz-/i.test(name) && typeof value === 'string') headers[name] = value;
    else signedQuery[name] = value;
  }
  const unsigned = {
    method: request.method ?? 'GET',
    protocol: 'http:',
    hostname: url.hostname,
    path: url.pathname,
    query: signedQuery,
    headers,
    ...(body === undefined ? {} : { body }),
  };
  const signingDate = new Date(claim.signedAtMs);
  let expected: string;
  if (presigned) {
    // S3 signs a presigned URL's payload as UNSIGNED-PAYLOAD where the URL names no hash of it (the AWS CLI's never
    // do): the hash the signer reads, kept out of the query and the signed headers
    const payloadHash = Object.keys(query).some((name) => name.toLowerCase() === 'x-amz-content-sha256');
    if (claim.service === 's3' && !payloadHash) unsigned.headers['x-amz-content-sha256'] = UNSIGNED_PAYLOAD;
    const signed = await signer.presign(unsigned, {
      signingDate,
      expiresIn: claim.expiresSeconds ?? 0,
      signableHeaders: new Set(claim.signedHeaders),
      ...(claim.service === 's3' && !payloadHash
        ? { unhoistableHeaders: new Set(['x-amz-content-sha256']), unsignableHeaders: new Set(['x-amz-content-sha256']) }
        : {}),
    });
    const signature = signed.query?.['X-Amz-Signature'];
    expected = typeof signature === 'string' ? signature : '';
  } else {
    const signed = (await signer.sign(unsigned as never, { signingDate })) as unknown as { headers: Record<string, string> };
    expected = /Signature=([0-9a-f]{64})/.exec(signed.headers['authorization'] ?? '')?.[1] ?? '';
  }
  const valid =
    expected.length === claim.signature.length && timingSafeEqual(Buffer.from(expected), Buffer.from(claim.signature));
  return valid ? { valid, body } : refused(REFUSALS.mismatch);
}

/** A CORS preflight: no credentials by the Fetch standard, and nothing changed; the stand-in answers it from its rules. */
function isPreflight(request: IncomingMessage): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

/** A refusal as the stand-in's service words its errors: S3's XML (which its SDK client reads), or JSON. */
function refuse(response: ServerResponse, reason: string, s3: boolean): void {
  if (s3) {
    const message = reason.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    response
      .writeHead(403, { 'Content-Type': 'application/xml' })
      .end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`);
  } else {
    response
      .writeHead(403, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ __type: 'UnrecognizedClientException', message: reason }));
  }
}

/**
 * Starts a gate on 127.0.0.1 (a free port) in front of the stand-in listening on `socketPath`. `s3`: the stand-in is
 * S3's, so CORS preflights go through unsigned (for the upload page's PUTs; S3 answers them by the bucket's CORS
 * rule) and refusals are in S3's XML.
 */
export async function startSignatureGate(options: {
  socketPath: string;
  credentials: Credentials;
  region: string;
  s3?: boolean;
}): Promise<SignatureGate> {
  const s3 = options.s3 ?? false;
  const server: Server = createServer((request, response) => {
    const checked: Promise<Verdict> =
      s3 && isPreflight(request) ? Promise.resolve({ valid: true }) : verify(request, options.credentials, options.region);
    checked.then(
      (verdict) => {
        if (!verdict.valid) {
          request.resume();
          refuse(response, verdict.reason, s3);
          return;
        }
        const { body } = verdict;
        const onward = httpRequest(
          { socketPath: options.socketPath, method: request.method, path: request.url, headers: request.headers },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(response);
          },
        );
        onward.on('error', () => {
          if (!response.headersSent) response.writeHead(502);
          response.end();
        });
        if (body === undefined) request.pipe(onward);
        else onward.end(body);
      },
      () => {
        if (!response.headersSent) response.writeHead(400);
        response.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
