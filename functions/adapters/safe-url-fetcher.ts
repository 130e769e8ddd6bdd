import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { fileTooBig, ServiceError } from '../core/errors';
import type { SourceFetcher } from '../core/ports';
import { readUpTo } from './bounded-read';

/** `dns.lookup` with `all: true`: every address of a name. */
export type Resolver = (
  hostname: string,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface SafeUrlFetcherOptions {
  /** Host names (lower case) that may resolve to non-public addresses: the operator's named internal hosts. */
  allowHosts: readonly string[];
  timeoutMs?: number;
  /** The slowest a body may come, on average from its headers on, once `rateGraceMs` have passed. */
  minBytesPerSecond?: number;
  rateGraceMs?: number;
  maxRedirects?: number;
  /** Tests inject names here; the default is the system resolver. */
  resolve?: Resolver;
  /** Tests trust their own certificate authority here; the default is Node's bundled roots. */
  ca?: string | Buffer;
  /** Tests decide what counts as public; the default is ipaddr.js's `unicast`. */
  isPublic?: (address: string) => boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/**
 * A body that comes slower than this, on average, 2 s after its headers, is given up (631): a source that trickles a
 * picture over the whole 10 s holds a request's slot all that time (`docs/security.md`, "URL sources"). 32 KB/s is a
 * slow mobile link's tenth; a 200 KB photo at it takes 6 s.
 */
const MIN_BYTES_PER_SECOND = 32_000;
const RATE_GRACE_MS = 2_000;
const USER_AGENT = 'image-upload-service/1 (url source fetch)';

/**
 * Only an address ipaddr.js calls `unicast` is public. That refuses loopback, private, link-local (169.254.169.254
 * included), CGNAT, multicast, broadcast, reserved and documentation ranges, unique-local, and the IPv6 forms that
 * carry an IPv4 address (mapped, 6to4, NAT64, Teredo), which are never checked as their IPv4 inside. ipaddr.js calls
 * IPv4-compatible addresses (`::7f00:1`) unicast, so all of `::/8`, which IANA reserves, is refused here as well.
 */
export function isPublicAddress(address: string): boolean {
  try {
    const parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && ((parsed as ipaddr.IPv6).parts[0] ?? 0) < 0x0100) return false;
    return parsed.range() === 'unicast';
  } catch {
    return false;
  }
}

const notAllowed = (): ServiceError => new ServiceError('UrlNotAllowed', 'URL not allowed');
const unableToFetch = (cause?: unknown): ServiceError =>
  new ServiceError('UrlFetchFailed', 'Unable to fetch the source URL', { cause });

/**
 * Fetches a URL source without becoming a way into the network it runs in: every name is resolved once, every
 * address it resolves to must be public, and the connection goes to that very address (a custom `lookup`, so there is
 * no second resolution to rebind). Redirects are followed by hand, each target checked the same way; the whole fetch
 * has one deadline; the body is read up to the size limit and no further.
 */
export class SafeUrlFetcher implements SourceFetcher {
  private readonly timeoutMs: number;
  private readonly minRate: { bytesPerSecond: number; graceMs: number };
  private readonly maxRedirects: number;
  private readonly resolve: Resolver;
  private readonly isPublic: (address: string) => boolean;

  constructor(private readonly options: SafeUrlFetcherOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.minRate = {
      bytesPerSecond: options.minBytesPerSecond ?? MIN_BYTES_PER_SECOND,
      graceMs: options.rateGraceMs ?? RATE_GRACE_MS,
    };
    this.maxRedirects = options.maxRedirects ?? 5;
    this.resolve = options.resolve ?? ((hostname, callback) => dnsLookup(hostname, { all: true, verbatim: true }, callback));
    this.isPublic = options.isPublic ?? isPublicAddress;
  }

  async fetch(url: string, maxBytes: number): Promise<{ bytes: Uint8Array; filename: string }> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    let target = this.checkUrl(url);
    for (let hop = 0; hop <= this.maxRedirects; hop += 1) {
      const response = await this.request(target, deadline);
      const location = response.headers.location;
      if (REDIRECTS.has(response.statusCode ?? 0) && location) {
        response.resume();
        target = this.checkUrl(new URL(location, target).toString());
        continue;
      }
      if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) > 299) {
        response.resume();
        throw unableToFetch(new Error(`HTTP ${response.statusCode}`));
      }
      const bytes = await readCapped(response, maxBytes, deadline, this.minRate);
      return { bytes, filename: lastPathSegment(target) };
    }
    throw unableToFetch(new Error(`more than ${this.maxRedirects} redirects`));
  }

  /** Only http(s), no credentials, and an IP literal (in any notation the URL parser knows) must be public. */
  private checkUrl(text: string): URL {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw notAllowed();
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) throw notAllowed();
    // WHATWG URL parsing already turned 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 into 127.0.0.1.
    const host = bareHost(url);
    if (isIP(host) && !this.allowed(url) && !this.isPublic(host)) throw notAllowed();
    return url;
  }

  private allowed(url: URL): boolean {
    return this.options.allowHosts.includes(bareHost(url).toLowerCase());
  }

  private request(url: URL, deadline: AbortSignal): Promise<IncomingMessage> {
    const host = bareHost(url);
    const allowed = this.allowed(url);
    let refused = false;
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      this.resolve(hostname, (error, addresses) => {
        if (error) return callback(error, '', 0);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (!allowed && !addresses.every(({ address }) => this.isPublic(address))) {
          refused = true;
          return callback(
            Object.assign(new Error(`${hostname} resolves to a non-public address`), { code: 'EADDRNOTPUBLIC' }),
            '',
            0,
          );
        }
        // The connection goes to the addresses checked here: net.connect does no lookup of its own.
        if (lookupOptions.all) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
        else callback(null, first.address, first.family);
      });
    };
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request({
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { 'User-Agent': USER_AGENT, Accept: 'image/*', 'Accept-Encoding': 'identity' },
        lookup,
        agent: false,
        signal: deadline,
        ...(url.protocol === 'https:'
          ? {
              servername: isIP(host) ? undefined : host,
              rejectUnauthorized: true,
              ...(this.options.ca ? { ca: this.options.ca } : {}),
            }
          : {}),
      });
      request.on('response', resolve);
      request.on('error', (error) => reject(refused ? notAllowed() : unableToFetch(error)));
      request.end();
    });
  }
}

/** The URL's host without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** `original_filename` of a URL source: its last path segment, decoded. */
function lastPathSegment(url: URL): string {
  const segment = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The body up to `maxBytes`; one byte more ends the transfer with 413, without reading on. A body slower than the
 * minimum rate, once its grace is over, is given up.
 */
async function readCapped(
  response: IncomingMessage,
  maxBytes: number,
  deadline: AbortSignal,
  minRate: { bytesPerSecond: number; graceMs: number },
): Promise<Uint8Array> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw fileTooBig(maxBytes);
  }
  const startedMs = Date.now();
  let received = 0;
  response.on('data', (chunk: Buffer) => (received += chunk.length));
  const watch = setInterval(() => {
    const elapsedMs = Date.now() - startedMs;
    if (elapsedMs > minRate.graceMs && received < (minRate.bytesPerSecond * elapsedMs) / 1000)
      response.destroy(new Error(`slower than ${minRate.bytesPerSecond} bytes a second`));
  }, 250);
  let body: Buffer | undefined;
  try {
    body = await readUpTo(response, maxBytes);
  } catch (error) {
    throw unableToFetch(deadline.aborted ? deadline.reason : error);
  } finally {
    clearInterval(watch);
  }
  if (body === undefined) throw fileTooBig(maxBytes);
  return body;
}
