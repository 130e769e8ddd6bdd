import { createHash, randomBytes } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HASH_BYTES } from '../core/moderation/hash-index';
import { NO_PICTURE_BLOCKS, withBatch } from '../core/moderation/picture-blocks';
import type { PictureBlockBatch, PictureBlockList, PictureBlockStore } from '../core/moderation/picture-blocks';
import { BUCKET_LAYOUT } from './bucket-layout';
import { DynamoTable, retrySafe, sendConditional, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, SINGLE_ITEM } from './table-schema';

/**
 * The blocked pictures' list as one S3 object, and which object is the list as one table item (`docs/moderation.md`,
 * "Block lists at scale"). A change writes a new object, then moves the item to it only if it still names the object
 * the change was made from: a list is replaced whole or not at all, and of two changes at once the second is told to
 * start again. The function reads the small item once per cache period, and the object only when the item moved.
 *
 * The object: `PDQLIST1`, the number of hashes and the length of the batches' JSON (32-bit little-endian), the hashes
 * (32 bytes each, ascending), the batch of each (32-bit little-endian), then the batches and the last batch id as JSON.
 */
const MAGIC = Buffer.from('PDQLIST1');
const HEADER_BYTES = MAGIC.length + 8;
const POINTER_PK = SINGLE_ITEM.pictureList;
/** Before the list was an object: 16 items of hashes by their first hex digit, read whole. */
const LEGACY_CHUNKS = [...'0123456789abcdef'].map((digit) => `${ITEM_PREFIX.pictureBlocks}${digit}`);
const LEGACY_VERSION = 'legacy:';

const objectKey = (version: string): string => `${BUCKET_LAYOUT.moderationPrefix}pdq-blocks/${version}.bin`;

/** The stored form of a list. */
export function encodePictureBlocks(list: PictureBlockList): Uint8Array {
  const count = list.batchOf.length;
  const batches = Buffer.from(JSON.stringify({ batches: list.batches, lastBatchId: list.lastBatchId }));
  const bytes = Buffer.alloc(HEADER_BYTES + count * (HASH_BYTES + 4) + batches.length);
  MAGIC.copy(bytes, 0);
  bytes.writeUInt32LE(count, MAGIC.length);
  bytes.writeUInt32LE(batches.length, MAGIC.length + 4);
  bytes.set(list.hashes, HEADER_BYTES);
  const ids = HEADER_BYTES + count * HASH_BYTES;
  list.batchOf.forEach((id, row) => bytes.writeUInt32LE(id, ids + row * 4));
  batches.copy(bytes, ids + count * 4);
  return bytes;
}

/** The stored form's parts: where the batch ids start, and the number of hashes; a form that does not add up throws. */
function partsOf(bytes: Buffer): { count: number; ids: number } {
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a PDQ block list');
  const count = bytes.readUInt32LE(MAGIC.length);
  const ids = HEADER_BYTES + count * HASH_BYTES;
  if (bytes.length !== ids + count * 4 + bytes.readUInt32LE(MAGIC.length + 4))
    throw new Error('a PDQ block list of the wrong length');
  return { count, ids };
}

/** The hashes of a list's stored form, alone (what an upload's check needs), without a copy. */
export function hashesOfStored(stored: Uint8Array): Uint8Array {
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  return bytes.subarray(HEADER_BYTES, partsOf(bytes).ids);
}

/** A list from its stored form. */
export function decodePictureBlocks(stored: Uint8Array, version: string): PictureBlockList {
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const { count, ids } = partsOf(bytes);
  const batchOf = new Uint32Array(count);
  for (let row = 0; row < count; row += 1) batchOf[row] = bytes.readUInt32LE(ids + row * 4);
  const { batches, lastBatchId } = JSON.parse(bytes.subarray(ids + count * 4).toString('utf8')) as {
    batches: PictureBlockBatch[];
    lastBatchId: number;
  };
  return { version, hashes: bytes.subarray(HEADER_BYTES, ids), batchOf, batches, lastBatchId };
}

interface Pointer {
  version: string;
  /** The version before it, whose object is kept while instances may still be reading it. */
  previous?: string;
}

export class S3PictureBlocks extends DynamoTable implements PictureBlockStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    db: DynamoDBDocumentClient,
    table: string,
  ) {
    super(db, table);
  }

  async hashes(known: string | undefined): Promise<{ version: string; hashes?: Uint8Array }> {
    const pointer = await this.pointer();
    if (pointer && pointer.version === known) return { version: pointer.version };
    if (pointer) {
      // the hashes alone: what the upload's check needs
      return { version: pointer.version, hashes: hashesOfStored(await this.stored(pointer.version)) };
    }
    const list = await this.legacy();
    return list.version === known ? { version: list.version } : { version: list.version, hashes: list.hashes };
  }

  async read(): Promise<PictureBlockList> {
    const pointer = await this.pointer();
    return pointer ? this.object(pointer.version) : this.legacy();
  }

  async replace(next: PictureBlockList): Promise<boolean> {
    const version = `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
    await sendOrFail('write blocked pictures', () =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey(version),
          Body: encodePictureBlocks(next),
          ContentType: 'application/octet-stream',
        }),
      ),
    );
    const fromObject = next.version !== '' && !next.version.startsWith(LEGACY_VERSION);
    // sent again by the SDK when an answer is lost: the item naming this very object counts as moved (`retrySafe`)
    const condition = retrySafe(
      fromObject
        ? { ConditionExpression: 'version = :from', ExpressionAttributeValues: { ':from': next.version } }
        : { ConditionExpression: 'attribute_not_exists(pk)' },
      { version },
    );
    const moved = await sendConditional('switch blocked pictures', () =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: POINTER_PK, version, ...(fromObject ? { previous: next.version } : {}) },
          ...condition,
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    if (!moved) {
      await this.deleteObject(version);
      return false;
    }
    // the list two changes back: no instance reads it any more once it read the item again (a cache period). The
    // change has landed: what is left of a failed clean-up (an object, or items, nobody reads) does no harm
    const before = moved.Attributes ?? {};
    const old: unknown = before['version'] === version ? undefined : before['previous'];
    await this.cleanUp(typeof old === 'string' ? old : undefined, next.version.startsWith(LEGACY_VERSION)).catch(() => undefined);
    return true;
  }

  private async cleanUp(oldVersion: string | undefined, fromLegacy: boolean): Promise<void> {
    if (oldVersion) await this.deleteObject(oldVersion);
    if (fromLegacy)
      for (const pk of LEGACY_CHUNKS)
        await sendOrFail('remove old blocked pictures', () =>
          this.db.send(new DeleteCommand({ TableName: this.table, Key: { pk } })),
        );
  }

  private async pointer(): Promise<Pointer | undefined> {
    const result = await sendOrFail('read blocked pictures', () =>
      this.db.send(new GetCommand({ TableName: this.table, Key: { pk: POINTER_PK }, ConsistentRead: true })),
    );
    const version: unknown = result.Item?.['version'];
    return typeof version === 'string' ? { version } : undefined;
  }

  private async object(version: string): Promise<PictureBlockList> {
    return decodePictureBlocks(await this.stored(version), version);
  }

  /** A list's stored form, read and checked (a form that does not add up is a failed read). */
  private stored(version: string): Promise<Buffer> {
    return sendOrFail('read blocked pictures', async () => {
      const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(version) }));
      if (!answer.Body) throw new Error('an empty answer');
      const read = await answer.Body.transformToByteArray();
      const bytes = Buffer.from(read.buffer, read.byteOffset, read.byteLength);
      partsOf(bytes);
      return bytes;
    });
  }

  /**
   * The list kept in the 16 items of before, as one (each hash's reason a batch), named by what it holds; the first
   * change stores it as an object and removes the items.
   */
  private async legacy(): Promise<PictureBlockList> {
    const chunks = await this.getMany('read blocked pictures', LEGACY_CHUNKS);
    const byReason = new Map<string, { hashes: string[]; addedAtMs: number }>();
    for (const chunk of chunks)
      for (const [hash, entry] of Object.entries(
        (chunk['hashes'] ?? {}) as Record<string, { reason?: string; blockedAtMs?: number }>,
      )) {
        const reason = entry.reason ?? 'blocked';
        const batch = byReason.get(reason) ?? { hashes: [], addedAtMs: entry.blockedAtMs ?? 0 };
        batch.hashes.push(hash);
        byReason.set(reason, batch);
      }
    let list = NO_PICTURE_BLOCKS;
    for (const [reason, batch] of [...byReason].sort((a, b) => a[1].addedAtMs - b[1].addedAtMs))
      list = withBatch(list, batch.hashes, reason, batch.addedAtMs).list;
    const names = [...byReason.values()].flatMap((batch) => batch.hashes).sort();
    const digest = createHash('sha256').update(names.join('\n')).digest('hex');
    return { ...list, version: names.length === 0 ? '' : `${LEGACY_VERSION}${digest}` };
  }

  private async deleteObject(version: string): Promise<void> {
    await sendOrFail('remove blocked pictures', () =>
      this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey(version) })),
    );
  }
}
