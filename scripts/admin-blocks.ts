import { basename } from 'node:path';
import { MIN_PDQ_QUALITY } from '../functions/core/moderation/pdq-hash';
import { jsonOf, plural, UsageError, utc, type Verb } from './admin-verbs';
import { readNamedFile } from './named-file';
import { fieldSafe } from './terminal-text';

/** The admin tool's block verbs (`docs/operations.md`, "Blocks"): `blocks`, `unblock`, `block-hashes import|remove`. */
export const BLOCK_VERBS: Record<string, Verb> = {
  blocks: {
    args: [],
    options: ['json'],
    summary: 'the blocked bytes (md5) and the blocked pictures, by batch',
    async run({ admin, values, print }) {
      const blocks = await admin.blocks.list();
      if (values.json) return print(jsonOf(blocks));
      print(`blocked bytes: ${blocks.bytes.length}`);
      for (const bytes of blocks.bytes) print(`  md5 ${bytes.md5}\t${utc(bytes.blockedAtMs)}\t${fieldSafe(bytes.reason)}`);
      print(`blocked pictures: ${blocks.pictureCount}, in ${plural(blocks.pictures.length, 'batch', 'batches')}`);
      for (const batch of blocks.pictures)
        print(
          `  batch ${batch.id}\t${plural(batch.count, 'picture', 'pictures')}\t${utc(batch.addedAtMs)}\t${fieldSafe(batch.reason)}`,
        );
    },
  },
  unblock: {
    args: ['HASH|BATCH|MD5'],
    options: [],
    summary: "lift a picture's block (its PDQ hash), a batch's (its number in blocks), or that of bytes (their md5)",
    async run({ admin, args, print, inForce }) {
      print(`lifted the block of ${await admin.blocks.unblock(args[0] ?? '')} (${inForce})`);
    },
  },
  'block-hashes': {
    args: ['import|remove', 'FILE'],
    options: [],
    summary: 'block the pictures of a list of PDQ hashes (one a line), as one batch; or lift them',
    more: `import: all of them or, if anything fails, none; a hash of quality under ${MIN_PDQ_QUALITY} is skipped.
remove: lift the blocks of the pictures of such a list.`,
    async run({ admin, args, print, progress, inForce }) {
      const [action, file = ''] = args;
      if (action !== 'import' && action !== 'remove')
        throw new UsageError(`block-hashes: say import or remove, not ${action ?? 'nothing'}`);
      progress(`reading ${file}`);
      const text = readNamedFile(file, 'the hash list');
      if (action === 'remove') {
        const removed = await admin.blocks.removePictureHashes(text);
        return print(`lifted the blocks of ${plural(removed, 'picture', 'pictures')} (${inForce})`);
      }
      const { blocked, listed, skipped } = await admin.blocks.importPictureHashes(text, basename(file), progress);
      print(`blocked ${plural(blocked, 'picture', 'pictures')} by their PDQ hashes (${inForce})`);
      if (listed > blocked) print(`${plural(listed - blocked, 'hash was', 'hashes were')} blocked already`);
      if (skipped > 0) print(`skipped ${plural(skipped, 'hash', 'hashes')} of quality under ${MIN_PDQ_QUALITY}`);
    },
  },
};
