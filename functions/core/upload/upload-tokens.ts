import { createHmac } from 'node:crypto';
import { constantTimeEquals } from '../hashes';
import { ServiceError } from '../errors';

/**
 * Tokens of the two-step upload: what was promised at the first step (where the bytes are staged, how many, until
 * when, for which key and file name), signed with a secret of the deployment so that the second step needs no stored
 * state to trust them. A token is used once: the second step records its id (`StagedUploads`).
 */
export interface UploadTicket {
  /** Random; names the staged object and the record of the token's use. */
  id: string;
  /** Bytes declared at the first step, signed into the upload URL. */
  size: number;
  expiresAtMs: number;
  /** The key that asked for it, as `keyTagOf` tags it: no one without the secret can test a guess of the key. */
  keyTag: string;
  /** The file name given at the first step, cleaned later like any upload's; empty when none. */
  filename: string;
}

/** The secret of the tokens, derived from the deployment's id salt (one secret to keep, two uses kept apart). */
export function tokenSecret(idSalt: string): string {
  return createHmac('sha256', idSalt).update('upload-token').digest('hex');
}

/**
 * The key a token is for: an HMAC of it with the tokens' secret, 32 hex characters. A token's body is readable, so a
 * plain hash of the key there would let anyone who sees a token test guesses of the key offline.
 */
export function keyTagOf(key: string, secret: string): string {
  return createHmac('sha256', secret).update(`api-key:${key}`, 'utf8').digest('hex').slice(0, 32);
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');
const sign = (secret: string, body: string): string => base64url(createHmac('sha256', secret).update(body).digest());

export function makeUploadToken(ticket: UploadTicket, secret: string): string {
  const body = base64url(
    Buffer.from(JSON.stringify({ i: ticket.id, s: ticket.size, e: ticket.expiresAtMs, k: ticket.keyTag, f: ticket.filename })),
  );
  return `${body}.${sign(secret, body)}`;
}

const invalid = (): ServiceError => new ServiceError('InvalidUploadToken', 'Invalid upload token');

/**
 * The ticket of a token, if it is one of this deployment's and for this key (its expiry is the caller's to check). A
 * token of another key is told apart from no token at all only by its signature: both are invalid to the client.
 */
export function readUploadToken(token: string, secret: string, key: string): UploadTicket {
  const [body, signature, extra] = token.trim().split('.');
  if (!body || !signature || extra !== undefined || !constantTimeEquals(signature, sign(secret, body))) throw invalid();
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { i, s, e, k, f } = (fields ?? {}) as Record<string, unknown>;
  if (typeof i !== 'string' || typeof s !== 'number' || typeof e !== 'number' || typeof k !== 'string' || typeof f !== 'string')
    throw invalid();
  if (!constantTimeEquals(k, keyTagOf(key, secret))) throw invalid();
  return { id: i, size: s, expiresAtMs: e, keyTag: k, filename: f };
}
