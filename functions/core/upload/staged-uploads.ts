import { DependencyError, fileTooBig, ServiceError } from '../errors';
import type { FloodGuard } from '../flood';
import { cleanOriginalFilename } from './naming';
import type { Clock, Logger, RandomSource, SettingsStore, StagedObjectStore, TokenLedger } from '../ports';
import type { SourceBytes } from './upload-source';
import { keyTagOf, makeUploadToken, readUploadToken, tokenSecret, type UploadTicket } from './upload-tokens';

/** How long an upload URL (and its token) may be used. */
export const UPLOAD_URL_SECONDS = 15 * 60;
/**
 * How long a staged object may serve a token: one put earlier than this before now was put with a token that has
 * expired since (a token is made before its PUT), so the sweep removes it (a PUT after the upload finished, a token
 * never used, forged or refused). Five minutes more for clocks that differ.
 */
export const STAGED_KEEP_MS = (UPLOAD_URL_SECONDS + 5 * 60) * 1000;
const MAX_FILENAME_CHARS = 255;
const ID_HEX_CHARS = 32;

export interface StagedUploadsDeps {
  settings: Pick<SettingsStore, 'idSalt'>;
  staged: StagedObjectStore;
  ledger: TokenLedger;
  /** Upload URLs handed out per client. */
  issuance: Pick<FloodGuard, 'reserve'>;
  random: RandomSource;
  clock: Clock;
  logger: Logger;
  /** The largest image a two-step upload may carry. */
  maxStagedBytes: number;
}

/** What the first step answers. */
export interface UploadUrl {
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  token: string;
  maxBytes: number;
  expiresAtMs: number;
}

/** The first step's request, as the HTTP layer read it (the key is checked before). */
export interface UploadUrlRequest {
  size: string | undefined;
  filename: string | undefined;
  clientIp: string;
}

/**
 * The two-step upload (an extension of the API, `docs/large-uploads.md`): an upload URL straight to the staging
 * place, for a declared size that the store itself holds the PUT to, and a token; then an upload that names the token
 * instead of a source, whose bytes are read from the staging place and stored like any upload's.
 */
export class StagedUploads {
  constructor(private readonly deps: StagedUploadsDeps) {}

  /** Step 1: an upload URL for `size` bytes; refused (413) past the limit before anything is signed. */
  async createUrl(request: UploadUrlRequest, key: string): Promise<UploadUrl> {
    const size = this.declaredSize(request.size);
    await this.deps.issuance.reserve(request.clientIp, this.deps.clock.nowMs());
    const id = this.deps.random.hex(ID_HEX_CHARS);
    const expiresAtMs = this.deps.clock.nowMs() + UPLOAD_URL_SECONDS * 1000;
    const filename = (request.filename ?? '').slice(0, MAX_FILENAME_CHARS);
    const secret = await this.secret();
    const ticket: UploadTicket = { id, size, expiresAtMs, keyTag: keyTagOf(key, secret), filename };
    const { url, headers } = await this.deps.staged.uploadUrl(id, size, UPLOAD_URL_SECONDS);
    return { url, method: 'PUT', headers, token: makeUploadToken(ticket, secret), maxBytes: size, expiresAtMs };
  }

  /**
   * Step 2's token, read before anything is taken: this deployment's, for this key, not expired. An expired one's
   * staged bytes can serve no one any more: they go at once.
   */
  async check(token: string, key: string): Promise<UploadTicket> {
    const ticket = readUploadToken(token, await this.secret(), key);
    if (ticket.expiresAtMs <= this.deps.clock.nowMs()) {
      await this.removeStaged(ticket);
      throw new ServiceError('UploadTokenExpired', 'Upload token expired: ask for a new upload URL');
    }
    return ticket;
  }

  /**
   * The staged bytes of a checked token, once: its use is recorded first, so two requests with one token cannot both
   * read them. Nothing staged yet: the use is forgotten (the client may PUT, then try again). Another size than the
   * declared one (a store that does not hold the PUT to the signed length): refused, and the bytes removed.
   */
  async take(ticket: UploadTicket): Promise<SourceBytes> {
    if (!(await this.deps.ledger.use(ticket.id, ticket.expiresAtMs)))
      throw new ServiceError('UploadTokenUsed', 'Upload token already used: ask for a new upload URL');
    let staged;
    try {
      staged = await this.deps.staged.open(ticket.id);
    } catch (error) {
      await this.forgetUse(ticket);
      throw error;
    }
    if (!staged) {
      await this.forgetUse(ticket);
      throw new ServiceError('NothingStaged', 'Nothing was uploaded to the upload URL of this token');
    }
    if (staged.size !== ticket.size) {
      staged.discard();
      await this.removeStaged(ticket);
      throw new ServiceError(
        'StagedSizeMismatch',
        `The uploaded file is ${staged.size} bytes, not the ${ticket.size} declared: ask for a new upload URL`,
      );
    }
    const bytes = await staged.read();
    if (bytes.length === 0) throw new ServiceError('EmptySource', 'Empty source');
    return { bytes, filename: cleanOriginalFilename(ticket.filename) || undefined };
  }

  /**
   * After the upload: its staged bytes go, whether they were stored or refused (the token is spent); an upload that
   * failed on the service's side (a store) keeps them and gives the token back, so the same request can be tried again.
   */
  async finish(ticket: UploadTicket, error: unknown): Promise<void> {
    if (isFinal(error)) await this.removeStaged(ticket);
    else await this.forgetUse(ticket);
  }

  private declaredSize(text: string | undefined): number {
    const trimmed = text?.trim() ?? '';
    const size = /^[0-9]{1,15}$/.test(trimmed) ? Number(trimmed) : NaN;
    if (!Number.isSafeInteger(size) || size < 1)
      throw new ServiceError('InvalidSize', 'Invalid size: give the file size in bytes');
    if (size > this.deps.maxStagedBytes) throw fileTooBig(this.deps.maxStagedBytes);
    return size;
  }

  private async secret(): Promise<string> {
    return tokenSecret(await this.deps.settings.idSalt());
  }

  private async forgetUse(ticket: UploadTicket): Promise<void> {
    await this.deps.ledger.forget(ticket.id).catch((error: unknown) => {
      this.deps.logger.warn('an upload token stays used after a failure', { id: ticket.id, error });
    });
  }

  private async removeStaged(ticket: UploadTicket): Promise<void> {
    // best effort: the sweep removes what is left once no token can use it (`STAGED_KEEP_MS`)
    await this.deps.staged.remove(ticket.id).catch((error: unknown) => {
      this.deps.logger.warn('a staged upload was left for the lifecycle rule', { id: ticket.id, error });
    });
  }
}

/** Whether an upload's outcome is final: stored, or refused for what was sent; not a store's failure, nor a bug. */
function isFinal(error: unknown): boolean {
  if (error === undefined) return true;
  if (error instanceof DependencyError) return false;
  return error instanceof ServiceError;
}
