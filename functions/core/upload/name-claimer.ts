import { PENDING_GRACE_MS } from '../lifecycle/lifecycle';
import { objectKey } from '../image/links';
import { sanitizeName, type NamingMode } from './naming';
import type { ImageKeys, NameClaims, RandomSource } from '../ports';

const NAME_SUFFIX_HEX_CHARS = 16;
const RANDOM_NAME_HEX_CHARS = 32;
const NAME_CLAIM_ATTEMPTS = 5;
/** Names this instance found taken, remembered so that a popular name's claim is not written again and again. */
const TAKEN_NAMES_KEPT = 10_000;

/**
 * Stored file names (`docs/api.md`, section 4): the uploaded name, a random one or the id, claimed in the table for the
 * day's folder so that no object is ever overwritten, even by two uploads of the same name at the same moment. A name
 * taken gets 16 random hex characters appended. Claims are never released: a URL never comes to mean another image.
 * The claim also records the upload as pending, naming its three files before any is written: should the upload die,
 * the sweep finds the claim and removes them.
 *
 * A name found taken is remembered (up to 10,000 per instance): every later upload of `image.png` that day goes straight
 * to a suffixed name, so a popular name's claim item takes one failed write per instance, not one per upload (a single
 * DynamoDB item takes at most 1,000 writes a second; `docs/scale.md`).
 */
export class NameClaimer {
  private readonly taken = new Set<string>();

  constructor(
    private readonly images: Pick<NameClaims, 'claimName'>,
    private readonly random: RandomSource,
    private readonly naming: NamingMode,
  ) {}

  /** Claims a free name and records the upload as pending under it; answers the name and the files' keys. */
  async claim(upload: {
    baseName: string;
    extension: string;
    folder: string;
    imageId: number;
    idEncoded: string;
    nowMs: number;
  }): Promise<{ name: string; keys: ImageKeys }> {
    const { baseName, extension, folder, imageId, idEncoded, nowMs } = upload;
    const first =
      this.naming === 'id'
        ? idEncoded
        : this.naming === 'random'
          ? this.random.hex(RANDOM_NAME_HEX_CHARS)
          : sanitizeName(baseName) || this.random.hex(RANDOM_NAME_HEX_CHARS);
    const suffixed = (): string => `${first}${this.random.hex(NAME_SUFFIX_HEX_CHARS)}`;
    const plain = objectKey(folder, first, '', extension);
    let candidate = this.taken.has(plain) ? suffixed() : first;
    for (let attempt = 0; attempt < NAME_CLAIM_ATTEMPTS; attempt += 1) {
      const keys = {
        original: objectKey(folder, candidate, '', extension),
        thumb: objectKey(folder, candidate, '.th', extension),
        medium: objectKey(folder, candidate, '.md', extension),
      };
      const pending = { status: 'pending' as const, name: keys.original, imageId, keys, createdAtMs: nowMs };
      if (await this.images.claimName(pending, nowMs + PENDING_GRACE_MS)) return { name: candidate, keys };
      if (candidate === first) this.rememberTaken(plain);
      candidate = suffixed();
    }
    throw new Error(`no free name for ${first} after ${NAME_CLAIM_ATTEMPTS} attempts`);
  }

  private rememberTaken(key: string): void {
    if (this.taken.size >= TAKEN_NAMES_KEPT) this.taken.clear();
    this.taken.add(key);
  }

  /** Whether a name depends on the image's id (so a new id needs a new name). */
  get followsId(): boolean {
    return this.naming === 'id';
  }
}
