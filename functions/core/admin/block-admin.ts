import { AdminError } from './admin-error';
import { isPdqHash } from '../moderation/pdq-hash';
import {
  blockedCount,
  countedBatches,
  MAX_PICTURE_BLOCKS,
  withBatch,
  withoutBatch,
  withoutHashes,
  type CountedBatch,
} from '../moderation/picture-blocks';
import { comparableHashes, parseHashList } from '../moderation/moderation';
import type { BlockedBytes, BlockList, Clock, ObjectStore } from '../ports';
import type { PictureBlockList, PictureBlockStore } from '../moderation/picture-blocks';
import type { ImageRecord } from '../ports';

export interface BlockAdminDeps {
  moderation: BlockList;
  pictureBlocks: PictureBlockStore;
  clock: Clock;
  objects: Pick<ObjectStore, 'readKept'>;
  /**
   * The hashes a block adds for a picture besides its record's, from its original's bytes: its crops, and with
   * `inside` the pictures found inside it (`blockedHashesOf`, `functions/fingerprint/fingerprint.ts`); none without it.
   */
  pictureCrops?: ((original: Uint8Array, options: { inside: boolean }) => Promise<PictureParts>) | undefined;
}

/** The hashes a block adds for a picture besides its record's, by part. */
export interface PictureParts {
  crops: string[];
  /** Of the pictures found inside it: only when the operator asked (`takedown --block --inside`). */
  inside: string[];
}

/** What `admin blocks` shows: the blocked bytes, and the blocked pictures by batch. */
export interface Blocks {
  bytes: BlockedBytes[];
  pictures: CountedBatch[];
  /** Blocked pictures in all. */
  pictureCount: number;
}

/** A change of the list: the list it makes, and how many hashes it added or removed. */
type Change = (list: PictureBlockList) => { list: PictureBlockList; count: number };

/** A hash list's hashes (`parseHashList`); a line without a hash refuses the whole list, naming it. */
function readList(text: string, done: 'blocked' | 'lifted'): { hashes: string[]; skipped: number } {
  // a block is lifted by its hash whatever quality the list gives it
  const list = parseHashList(text, { every: done === 'lifted' });
  if ('badLine' in list) throw new AdminError(`line ${list.badLine} ${list.problem}: nothing was ${done}`);
  return list;
}

/** How a takedown's batches are named: `taken down: ID` (its own hashes), then `taken down: ID, its crops`, and so on. */
const TAKEDOWN = 'taken down: ';
export const takedownReason = (idEncoded: string): string => `${TAKEDOWN}${idEncoded}`;
export const TAKEDOWN_PART = { crops: 'its crops', inside: 'pictures inside it' } as const;

/** Tries of a change that another change overtook: each starts again from the list stored then. */
const CHANGE_TRIES = 3;

/**
 * The operator's blocks (`npm run admin`, `docs/operations.md`): the bytes blocked by their md5, and the pictures by
 * their PDQ hashes, in batches (a takedown's, an imported list's). Each change of the pictures stores a whole new
 * list in place of the one it read, or nothing.
 */
export class BlockAdmin {
  constructor(private readonly deps: BlockAdminDeps) {}

  async list(): Promise<Blocks> {
    const [bytes, pictures] = await Promise.all([this.deps.moderation.blockedBytes(), this.deps.pictureBlocks.read()]);
    return { bytes, pictures: countedBatches(pictures), pictureCount: blockedCount(pictures) };
  }

  /**
   * The hashes a block adds for a stored picture besides its record's (`docs/moderation.md`, "Crops and frames"), made
   * from its original: its crops, and with `inside` the pictures found inside it. None when its own hash says too
   * little, or without a hasher; a failure to read or hash the original fails the block (nothing is half blocked
   * silently: the takedown says what to do).
   */
  async partsOf(record: ImageRecord, { inside }: { inside: boolean }): Promise<PictureParts> {
    const hasher = this.deps.pictureCrops;
    const none: PictureParts = { crops: [], inside: [] };
    if (!hasher || comparableHashes(record.perceptual).length === 0) return none;
    try {
      // a removed image's original is a kept version (a takedown removes every version after this read)
      const original = await this.deps.objects.readKept(record.original.key);
      return original ? await hasher(original, { inside }) : none;
    } catch (cause) {
      throw new AdminError(
        `the picture of ${record.original.key} could not be hashed (${String(cause)}): nothing was taken down`,
        {
          cause,
        },
      );
    }
  }

  /** Blocks pictures by their hashes, as one batch; how many were not blocked already. */
  addPictures(hashes: readonly string[], reason: string): Promise<number> {
    return this.addPictureBatches([{ hashes, reason }]);
  }

  /**
   * Blocks pictures by batches of hashes (a takedown's: its own, its crops', the pictures' inside it), in one change
   * of the list, each batch its own (a hash held already stays in its batch; a batch of nothing new is none); how many
   * were not blocked already.
   */
  addPictureBatches(batches: ReadonlyArray<{ hashes: readonly string[]; reason: string }>): Promise<number> {
    const nowMs = this.deps.clock.nowMs();
    return this.change((list) => {
      let next = list;
      let count = 0;
      for (const { hashes, reason } of batches) {
        if (hashes.length === 0) continue;
        const { list: more, added } = withBatch(next, hashes, reason, nowMs);
        next = more;
        count += added;
      }
      if (blockedCount(next) > MAX_PICTURE_BLOCKS)
        throw new AdminError(`the list would hold ${blockedCount(next)} pictures: it holds at most ${MAX_PICTURE_BLOCKS}`);
      return { list: next, count };
    });
  }

  /**
   * Blocks the pictures of a hash list (`parseHashList`), as one batch named by its source; a line without a hash
   * refuses the whole list, naming it. `blocked`: those new to the list.
   */
  async importPictureHashes(
    text: string,
    source: string,
    progress: (step: string) => void = () => undefined,
  ): Promise<{ blocked: number; listed: number; skipped: number }> {
    const list = readList(text, 'blocked');
    progress(`read ${list.hashes.length} hashes (skipped ${list.skipped}); storing the new list`);
    const blocked = await this.addPictures(list.hashes, `imported: ${source}`);
    return { blocked, listed: list.hashes.length, skipped: list.skipped };
  }

  /** Lifts the blocks of the pictures of a hash list; how many of them were blocked. */
  async removePictureHashes(text: string): Promise<number> {
    const list = readList(text, 'lifted');
    return this.change((stored) => this.counted(withoutHashes(stored, list.hashes)));
  }

  /**
   * Lifts a block: a picture's by its PDQ hash (64 hex digits), a batch's by its number (`admin blocks`), or bytes'
   * by their md5 (32 hex digits). Says what it lifted; a block that is not there is refused.
   */
  async unblock(what: string): Promise<string> {
    const text = what.trim().toLowerCase();
    if (isPdqHash(text)) {
      // a takedown blocks a picture by many hashes, in a batch a part (its own, its crops', the pictures' inside it):
      // the others still block it
      let rest: CountedBatch[] = [];
      const removed = await this.change((list) => {
        const lifted = withoutHashes(list, [text]);
        // the hash's batch is the one it left: counted, not looked for again among every hash
        const after = countedBatches(lifted.list);
        const counts = new Map(after.map((one) => [one.id, one.count]));
        // (a batch emptied is listed no more)
        const left = countedBatches(list).find((one) => one.count > (counts.get(one.id) ?? 0) && one.reason.startsWith(TAKEDOWN));
        const takedown = left?.reason.split(', ')[0];
        rest = after.filter((one) => one.count > 0 && (one.reason === takedown || one.reason.startsWith(`${takedown ?? ''}, `)));
        return this.counted(lifted);
      });
      if (removed === 0) throw new AdminError(`no blocked picture of PDQ hash ${text}`);
      if (rest.length === 0) return `the picture of PDQ hash ${text}`;
      const batches = rest.map((one) => `batch ${one.id} (${one.reason}): ${one.count} more`).join('; ');
      const unblock = rest.map((one) => `unblock ${one.id}`).join(', ');
      return `the picture of PDQ hash ${text}; the rest of its takedown still blocks that picture, by ${batches}; ${unblock} lifts them`;
    }
    if (/^[0-9a-f]{32}$/.test(text)) {
      if (!(await this.deps.moderation.unblock(text))) throw new AdminError(`no blocked bytes of md5 ${text}`);
      return `the bytes of md5 ${text}`;
    }
    // a batch's number: whole and safe (a longer run of digits is none, not a batch of 1.2e+32)
    if (/^\d{1,15}$/.test(text)) {
      const id = Number(text);
      const removed = await this.change((list) => this.counted(withoutBatch(list, id)));
      if (removed === 0) throw new AdminError(`no batch ${id} of blocked pictures (admin blocks lists them)`);
      return `batch ${id}: ${removed} ${removed === 1 ? 'picture' : 'pictures'}`;
    }
    throw new AdminError(`not a PDQ hash (64 hex digits), a batch number or an md5 (32 hex digits): ${what}`);
  }

  private counted({ list, removed }: { list: PictureBlockList; removed: number }): { list: PictureBlockList; count: number } {
    return { list, count: removed };
  }

  /** Applies a change to the stored list, and stores the result in its place; nothing is stored when it counts none. */
  private async change(make: Change): Promise<number> {
    for (let attempt = 1; attempt <= CHANGE_TRIES; attempt += 1) {
      const { list, count } = make(await this.deps.pictureBlocks.read());
      if (count === 0 || (await this.deps.pictureBlocks.replace(list))) return count;
    }
    throw new AdminError(`the blocked pictures changed ${CHANGE_TRIES} times while this ran: run it again`);
  }
}
