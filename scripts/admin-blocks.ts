import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Admin } from '../functions/core/admin';
import { formatDateTime } from '../functions/core/formatting';
import { MIN_PDQ_QUALITY } from '../functions/core/pdq';

/**
 * The admin tool's block verbs (`docs/operations.md`, "Blocks"): `blocks`, `unblock`, `block-hashes import|remove`.
 * Progress goes to `progress` (standard error), results to `print`.
 */
export const BLOCK_USAGE = `  blocks [--json]                the blocked bytes (md5) and the blocked pictures, by batch
  unblock HASH|BATCH|MD5         lift a picture's block (its PDQ hash), a batch's (its number in blocks),
                                 or that of bytes (their md5)
  block-hashes import FILE       block the pictures of a list of PDQ hashes (one a line, 64 hex digits),
                                 as one batch: all of them or, if anything fails, none
  block-hashes remove FILE       lift the blocks of the pictures of such a list`;

export const BLOCK_COMMANDS = ['blocks', 'unblock', 'block-hashes'];

const IN_FORCE = 'in force within MODERATION_CACHE_SECONDS, 30 s by default';
const utc = (epochMs: number): string => `${formatDateTime(epochMs, 'UTC')} UTC`;
const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** Runs a block verb; undefined when its arguments are short (the caller prints the usage). */
export async function runBlocks(
  admin: Admin,
  [command, argument, file]: ReadonlyArray<string | undefined>,
  json: boolean,
  print: (line: string) => void,
  progress: (line: string) => void,
): Promise<number | undefined> {
  if (command === 'blocks') {
    const blocks = await admin.blocks.list();
    if (json) {
      print(JSON.stringify(blocks, null, 2));
      return 0;
    }
    print(`blocked bytes: ${blocks.bytes.length}`);
    for (const bytes of blocks.bytes) print(`  md5 ${bytes.md5}\t${utc(bytes.blockedAtMs)}\t${bytes.reason}`);
    print(`blocked pictures: ${blocks.pictureCount}, in ${plural(blocks.pictures.length, 'batch', 'batches')}`);
    for (const batch of blocks.pictures)
      print(`  batch ${batch.id}\t${plural(batch.count, 'picture', 'pictures')}\t${utc(batch.addedAtMs)}\t${batch.reason}`);
    return 0;
  }
  if (command === 'unblock') {
    if (!argument) return undefined;
    print(`lifted the block of ${await admin.blocks.unblock(argument)} (${IN_FORCE})`);
    return 0;
  }
  if (command !== 'block-hashes' || !file || (argument !== 'import' && argument !== 'remove')) return undefined;
  progress(`reading ${file}`);
  const text = readFileSync(file, 'utf8');
  if (argument === 'remove') {
    const removed = await admin.blocks.removePictureHashes(text);
    print(`lifted the blocks of ${plural(removed, 'picture', 'pictures')} (${IN_FORCE})`);
    return 0;
  }
  const { blocked, listed, skipped } = await admin.blocks.importPictureHashes(text, basename(file), progress);
  print(`blocked ${plural(blocked, 'picture', 'pictures')} by their PDQ hashes (${IN_FORCE})`);
  if (listed > blocked) print(`${plural(listed - blocked, 'hash was', 'hashes were')} blocked already`);
  if (skipped > 0) print(`skipped ${plural(skipped, 'hash', 'hashes')} of quality under ${MIN_PDQ_QUALITY}`);
  return 0;
}
