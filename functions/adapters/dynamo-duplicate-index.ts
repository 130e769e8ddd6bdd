import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DependencyError } from '../core/errors';
import type { DuplicateClaim, DuplicateFingerprint, DuplicateIndex } from '../core/ports';
import { DynamoTable, retrySafe, sendOrFail } from './dynamo-calls';
import { ITEM_PREFIX, TABLE_SCHEMA } from './table-schema';

type ClaimAnswer = Awaited<ReturnType<DuplicateIndex['claim']>>;

/** The item key of a fingerprint: `DUP#{ip}#{md5}#{width or -}`. */
export function duplicateKey(fingerprint: DuplicateFingerprint): string {
  return `${ITEM_PREFIX.duplicate}${fingerprint.clientIp}#${fingerprint.md5}#${fingerprint.width ?? '-'}`;
}

/** The fingerprint of a key written by `duplicateKey` (records keep it so). */
export function fingerprintOfKey(key: string): DuplicateFingerprint | null {
  if (!key.startsWith(ITEM_PREFIX.duplicate)) return null;
  const match = /^(.+)#([0-9a-f]{32})#(\d+|-)$/.exec(key.slice(ITEM_PREFIX.duplicate.length));
  if (!match) return null;
  return { clientIp: match[1] ?? '', md5: match[2] ?? '', width: match[3] === '-' ? undefined : Number(match[3]) };
}

/** Duplicate fingerprints: one item per (client, md5, width), written only by conditional puts and deletes. */
export class DynamoDuplicateIndex extends DynamoTable implements DuplicateIndex {
  async claim(fingerprint: DuplicateFingerprint, claim: DuplicateClaim, windowMs: number): Promise<ClaimAnswer> {
    const key = duplicateKey(fingerprint);
    // A claim that vanishes between the refused put and the read (its image was deleted) is simply tried again.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const condition = 'attribute_not_exists(pk) OR expiresAtMs < :now';
      if (await this.put(key, claim, windowMs, condition, { ':now': claim.claimedAtMs })) return { claimed: true };
      const held = await sendOrFail('read duplicate claim', () =>
        this.db.send(new GetCommand({ TableName: this.table, Key: { pk: key }, ConsistentRead: true })),
      );
      const item = held.Item;
      if (
        item &&
        typeof item['claimId'] === 'string' &&
        typeof item['imageId'] === 'number' &&
        typeof item['claimedAtMs'] === 'number'
      ) {
        return { claimed: false, held: { claimId: item['claimId'], imageId: item['imageId'], claimedAtMs: item['claimedAtMs'] } };
      }
    }
    throw new DependencyError('claim duplicate', new Error(`the claim ${key} keeps changing`));
  }

  takeOver(
    fingerprint: DuplicateFingerprint,
    previousClaimId: string,
    claim: DuplicateClaim,
    windowMs: number,
  ): Promise<boolean> {
    return this.put(duplicateKey(fingerprint), claim, windowMs, 'claimId = :previous', { ':previous': previousClaimId });
  }

  async rebind(fingerprint: DuplicateFingerprint, claimId: string, imageId: number): Promise<void> {
    await this.updateIf('rebind duplicate claim', duplicateKey(fingerprint), {
      UpdateExpression: 'SET imageId = :image',
      ConditionExpression: 'claimId = :claim',
      ExpressionAttributeValues: { ':image': imageId, ':claim': claimId },
    });
  }

  async releaseClaim(fingerprint: DuplicateFingerprint, claimId: string): Promise<void> {
    await this.deleteHeld(fingerprint, 'claimId = :value', claimId, 'release duplicate claim');
  }

  async releaseImage(fingerprint: DuplicateFingerprint, imageId: number): Promise<void> {
    await this.deleteHeld(fingerprint, 'imageId = :value', imageId, 'release duplicate entry');
  }

  private async deleteHeld(fingerprint: DuplicateFingerprint, condition: string, value: unknown, what: string): Promise<void> {
    await this.deleteIf(what, duplicateKey(fingerprint), {
      ConditionExpression: condition,
      ExpressionAttributeValues: { ':value': value },
    });
  }

  private put(
    key: string,
    claim: DuplicateClaim,
    windowMs: number,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const expiresAtMs = claim.claimedAtMs + windowMs;
    const item = {
      pk: key,
      claimId: claim.claimId,
      imageId: claim.imageId,
      claimedAtMs: claim.claimedAtMs,
      expiresAtMs,
      [TABLE_SCHEMA.ttlAttribute]: Math.ceil(expiresAtMs / 1000) + 86400,
    };
    const write = { Item: item, ConditionExpression: condition, ExpressionAttributeValues: values };
    return this.putIf('claim duplicate', retrySafe(write, { claimId: claim.claimId }));
  }
}
