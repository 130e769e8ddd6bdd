import ipaddr from 'ipaddr.js';
import { ServiceError } from '../errors';
import { nextTurn } from '../turns';
import { HashIndex } from './hash-index';
import { isPdqHash, MIN_PDQ_QUALITY, pdqDistance } from './pdq-hash';
import type { Ban, BanList, BlockList, Clock, ProcessedImage } from '../ports';
import type { PictureBlockStore } from './picture-blocks';
import type { ImageRecord } from '../ports';

export type { Ban, BanList, BlockList } from '../ports';

/**
 * The operator's refusals (`npm run admin`, `docs/operations.md`): address ranges banned from uploading, and the
 * fingerprints (md5) of images taken down with `--block`, which may not be uploaded again.
 */

/**
 * A range as given (`203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`) in canonical CIDR form; undefined if none. An
 * IPv4-mapped range (`::ffff:203.0.113.0/120`) is its IPv4 range, as clients are compared as IPv4 addresses; one wider
 * than the mapped space (a prefix under 96) is none.
 */
export function canonicalRange(text: string): string | undefined {
  const trimmed = text.trim();
  try {
    if (trimmed.includes('/')) {
      const [address, prefix] = ipaddr.parseCIDR(trimmed);
      if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress())
        return prefix < 96 ? undefined : canonicalRange(`${address.toIPv4Address().toString()}/${prefix - 96}`);
      const network =
        address.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(trimmed) : ipaddr.IPv6.networkAddressFromCIDR(trimmed);
      return `${network.toString()}/${prefix}`;
    }
    const address = ipaddr.process(trimmed);
    return `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    return undefined;
  }
}

/** Whether an address falls in a range (an IPv4-mapped IPv6 address counts as its IPv4 address). */
export function inRange(ip: string, range: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  const [network, prefix] = ipaddr.parseCIDR(range);
  return address.kind() === network.kind() && address.match(network, prefix);
}

/** The bans among `bans` other than `range` that cover all of it (as wide or wider): still in force after its unban. */
export function bansCovering(range: string, bans: readonly Ban[]): Ban[] {
  const [network, prefix] = ipaddr.parseCIDR(range);
  return bans.filter((ban) => {
    if (ban.range === range) return false;
    const [wider, widerPrefix] = ipaddr.parseCIDR(ban.range);
    return wider.kind() === network.kind() && widerPrefix <= prefix && network.match(wider, widerPrefix);
  });
}

/** The PDQ distance at or under which an upload is taken for a blocked picture (`docs/moderation.md`). */
export const PICTURE_MATCH_DISTANCE = 31;

/**
 * The hashes of a hash list (one PDQ hash a line, as 64 hex digits, the first field of its line; blank lines and `#`
 * comments are passed over; lines end in CR, LF or both, or a Unicode line separator), each once, in lower case; or
 * the first line that cannot be read, and why. A second field that is a number (`49`, `"49"`, `49.0`, `49%`) is the
 * hash's quality, as Meta's hashers write it (`hash,quality`): one under `MIN_PDQ_QUALITY` is skipped and counted, as
 * the service never matches one, and so is a hash with under a quarter of its bits set (a flat picture's: a
 * median-cut hash of a picture with detail sets half of them); one over 100 is no quality. A line of hashes
 * separated by spaces alone is refused: one hash a line (two on a line had the second taken for a quality, and a third
 * dropped); a column of 64 hex digits after a comma (a SHA-256) is another column. With `every`, every hash is taken
 * whatever its quality (a list of blocks to lift).
 */
export function parseHashList(
  text: string,
  { every = false } = {},
): { hashes: string[]; skipped: number } | { badLine: number; problem: string } {
  const hashes = new Set<string>();
  let skipped = 0;
  for (const [index, line] of text.split(/\r\n|[\n\r\u2028\u2029]/).entries()) {
    const [field = '', second = '', ...rest] = line.trim().split(/[\s,;]+/);
    if (field === '' || field.startsWith('#')) continue;
    const bad = (problem: string) => ({ badLine: index + 1, problem: `${problem}: ${line.slice(0, 80)}` });
    if (!isPdqHash(field)) return bad('holds no PDQ hash (64 hex digits)');
    if (!/[,;]/.test(line) && [second, ...rest].some(isPdqHash)) return bad('holds more than one PDQ hash (one a line)');
    const quality = Number(second.replace(/^"(.*)"$/, '$1').replace(/%$/, '') || NaN);
    if (quality > 100) return bad('has a quality over 100');
    if (!every && (quality < MIN_PDQ_QUALITY || bitsSet(field) < 64)) skipped += 1;
    else hashes.add(field.toLowerCase());
  }
  return { hashes: [...hashes], skipped };
}

/** How many of a hash's 256 bits are set. */
function bitsSet(hash: string): number {
  return pdqDistance(hash, '0'.repeat(64));
}

/**
 * The hashes of an image's picture worth blocking or comparing, each once (its own hash and the one inside its border
 * can be the same): none when the picture's own hash is under `MIN_PDQ_QUALITY`. Records made before hashes were
 * sorted by quality kept such hashes (a flat picture's 256 zero bits, and the one inside its border, of no known
 * quality), and any two flat pictures came 0 bits apart.
 */
export function comparableHashes(perceptual: ImageRecord['perceptual']): string[] {
  if (!perceptual || perceptual.quality < MIN_PDQ_QUALITY) return [];
  return [...new Set(perceptual.hashes.map((hash) => hash.toLowerCase()))];
}

/** What the NSFW classifier's score does to an upload (`NSFW_POLICY`, `docs/moderation.md`). */
export interface NsfwRule {
  policy: 'off' | 'flag' | 'reject';
  /** The score (0 to 1) at or over which the policy applies. */
  threshold: number;
}

export const NSFW_OFF: NsfwRule = { policy: 'off', threshold: 1 };

/** What a picture is compared by: its fingerprint's queries, a batch a picture (a frame of an animation). */
export interface PictureQueries {
  perceptual?: Pick<NonNullable<ProcessedImage['perceptual']>, 'queries'> | undefined;
}

/** One upload's look at the blocked pictures (`UploadGate.pictureCheck`). */
export interface PictureCheck {
  /** Whether its picture is compared at all: when not, its fingerprint makes only the views its record keeps. */
  compared: Promise<boolean>;
  /** Refuses its picture when one of its queries is within `PICTURE_MATCH_DISTANCE` of a blocked picture. */
  check(processed: PictureQueries): Promise<void>;
}

const blocked = (): ServiceError => new ServiceError('Blocked', 'This image was taken down and may not be uploaded again');

/**
 * The checks an upload passes: before anything is taken, its address is not banned; while it decodes, its bytes (as
 * sent and as stored) are not blocked; once decoded, nor is its picture, and the NSFW policy takes its score. The bans
 * and the blocked pictures are read whole and kept for `MODERATION_CACHE_SECONDS`, so a ban or a block is in force
 * within that time.
 */
export class UploadGate {
  private readonly bans: Kept<Ban[]>;
  private readonly pictures: BlockedPictures;

  constructor(
    bans: Pick<BanList, 'all'>,
    private readonly blocks: Pick<BlockList, 'anyBlocked'>,
    pictures: Pick<PictureBlockStore, 'hashes'>,
    private readonly clock: Clock,
    cacheMs: number,
    private readonly nsfw: NsfwRule = NSFW_OFF,
  ) {
    this.bans = new Kept(() => bans.all(), clock, cacheMs);
    this.pictures = new BlockedPictures(pictures, clock, cacheMs);
  }

  async admit(ip: string): Promise<void> {
    const nowMs = this.clock.nowMs();
    // the blocked pictures are read (and their index built, when they changed) from the start, while the upload is
    // read and decoded; the upload's `pictureCheck` takes them (the same read while it runs), and reads them again if
    // it failed
    this.pictures.index().catch(() => undefined);
    const bans = await this.bans.value();
    const banned = bans.some((ban) => (ban.untilMs === null || ban.untilMs > nowMs) && inRange(ip, ban.range));
    if (banned) throw new ServiceError('Banned', 'Uploads from your address are not allowed');
  }

  /** The bytes as sent and as they will be stored (metadata removed): one read for both. */
  async checkBytes(md5s: readonly string[]): Promise<void> {
    if (await this.blocks.anyBlocked(md5s)) throw blocked();
  }

  /**
   * One upload's look at the blocked pictures, read (or taken from the cache) once for both of its questions: whether
   * its picture is compared at all (some picture is blocked, or the list could not be read), which tells its
   * fingerprint whether to make the views that are only compared; and the check of its picture, which reads the list
   * again when that read failed.
   */
  pictureCheck(): PictureCheck {
    const index = this.pictures.index();
    return {
      compared: index.then(
        (found) => found.size > 0,
        () => true,
      ),
      check: (processed) =>
        this.checkAgainst(
          processed,
          index.catch(() => this.pictures.index()),
        ),
    };
  }

  /** A picture's queries against the blocked pictures, read (or taken from the cache) for it alone: a restored image's. */
  checkPicture(processed: PictureQueries): Promise<void> {
    return this.checkAgainst(processed, this.pictures.index());
  }

  /**
   * A picture's queries against the blocked pictures' index, a batch (a picture, or a frame of an animation) in each
   * turn of the event loop: a few ms each at a million hashes (`docs/moderation.md`, "Block lists at scale").
   */
  private async checkAgainst(processed: PictureQueries, reading: Promise<HashIndex>): Promise<void> {
    const index = await reading;
    for (const [at, batch] of (processed.perceptual?.queries ?? []).entries()) {
      if (at > 0) await nextTurn();
      if (index.anyWithin(batch, PICTURE_MATCH_DISTANCE)) throw blocked();
    }
  }

  /**
   * The classifier's verdict on the decoded upload: refused under `reject`, or whether to mark it `nsfw` under `flag`
   * (an upload the client marked stays marked). An upload without a score (the policy `off`) passes unmarked.
   */
  checkContent(nsfwScore: number | undefined): { flag: boolean } {
    const explicit = nsfwScore !== undefined && nsfwScore >= this.nsfw.threshold;
    if (explicit && this.nsfw.policy === 'reject') throw new ServiceError('AdultContent', 'Adult content is not accepted here');
    return { flag: explicit && this.nsfw.policy === 'flag' };
  }
}

/**
 * The blocked pictures' index: the list's version is read again once the kept one is older than `maxAgeMs`, and the
 * list itself, and a new index built from it, only when its version changed (`docs/moderation.md`, "Block lists at
 * scale").
 */
class BlockedPictures {
  private built: { version: string; index: HashIndex } | undefined;
  private readonly kept: Kept<HashIndex>;

  constructor(store: Pick<PictureBlockStore, 'hashes'>, clock: Clock, maxAgeMs: number) {
    this.kept = new Kept(
      async () => {
        const read = await store.hashes(this.built?.version);
        if (read.hashes && read.version !== this.built?.version)
          this.built = { version: read.version, index: await HashIndex.build(read.hashes) };
        return this.built?.index ?? HashIndex.EMPTY;
      },
      clock,
      maxAgeMs,
    );
  }

  index(): Promise<HashIndex> {
    return this.kept.value();
  }
}

/** A value read again once it is older than `maxAgeMs`; the callers meanwhile share the read in progress. */
class Kept<T> {
  private kept: { value: T; readAtMs: number } | undefined;
  private reading: Promise<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly clock: Clock,
    private readonly maxAgeMs: number,
  ) {}

  async value(): Promise<T> {
    const nowMs = this.clock.nowMs();
    if (this.kept && nowMs - this.kept.readAtMs < this.maxAgeMs) return this.kept.value;
    this.reading ??= this.read()
      .then((value) => {
        this.kept = { value, readAtMs: nowMs };
        return value;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
