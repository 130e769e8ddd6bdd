import { createHash } from 'node:crypto';
import { keyTagOf, makeUploadToken, readUploadToken, tokenSecret } from '../../../functions/core/upload/upload-tokens';

const KEY = 'the-api-key-0123456789';
const secret = tokenSecret('a'.repeat(64));
const ticket = { id: 'f'.repeat(32), size: 1234, expiresAtMs: 2_000_000, keyTag: keyTagOf(KEY, secret), filename: 'a.png' };

/** What anyone who sees a token can read in it: its body, base64url JSON. */
const bodyOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

describe('upload tokens', () => {
  it('are read back for their key, and refused for another key or a changed body', () => {
    const token = makeUploadToken(ticket, secret);
    expect(readUploadToken(token, secret, KEY)).toEqual(ticket);
    expect(() => readUploadToken(token, secret, `${KEY}x`)).toThrow('Invalid upload token');
    const [body, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...bodyOf(token), s: 999_999_999 })).toString('base64url');
    expect(() => readUploadToken(`${forged}.${signature}`, secret, KEY)).toThrow('Invalid upload token');
    expect(body).toBeDefined();
  });

  it('carry nothing a guess of the key can be tested against without the secret', () => {
    const readable = JSON.stringify(bodyOf(makeUploadToken(ticket, secret)));
    const sha256 = createHash('sha256').update(KEY, 'utf8').digest('hex');
    // neither the unsalted hash of the key (any part of it) nor the key itself
    expect(readable).not.toContain(sha256.slice(0, 16));
    expect(readable).not.toContain(KEY);
    // the tag depends on the deployment's secret: the same key under another secret tags otherwise
    expect(keyTagOf(KEY, tokenSecret('b'.repeat(64)))).not.toBe(ticket.keyTag);
    expect(bodyOf(makeUploadToken(ticket, secret))['k']).toBe(keyTagOf(KEY, secret));
  });
});
