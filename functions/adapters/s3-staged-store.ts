import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type _Object,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DependencyError } from '../core/errors';
import type { StagedObject, StagedObjectStore, StagedUsage } from '../core/ports';
import { BUCKET_LAYOUT } from './bucket-layout';

const stagedKey = (id: string): string => `${BUCKET_LAYOUT.stagingPrefix}${id}`;

/**
 * The two-step upload's staging place in the bucket. Upload URLs are presigned PUTs with `Content-Length` among the
 * signed headers, so S3 refuses a body of any other size. `presigner` is a client of the same bucket whose requests
 * carry no flexible checksum: a presigned PUT with one would demand the checksum of a body it has not seen.
 */
export class S3StagedStore implements StagedObjectStore {
  constructor(
    private readonly s3: S3Client,
    private readonly presigner: S3Client,
    private readonly bucket: string,
  ) {}

  private origin: Promise<string> | undefined;

  async uploadUrl(id: string, size: number, expiresInSeconds: number): Promise<{ url: string; headers: Record<string, string> }> {
    try {
      const url = await getSignedUrl(
        this.presigner,
        new PutObjectCommand({ Bucket: this.bucket, Key: stagedKey(id), ContentLength: size }),
        { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-length']) },
      );
      return { url, headers: { 'Content-Length': String(size) } };
    } catch (cause) {
      throw new DependencyError('S3 presign', cause);
    }
  }

  /** The origin its upload URLs point at, which the upload page's CSP names: a URL signed once (no request), kept. */
  uploadOrigin(): Promise<string> {
    const origin = (this.origin ??= this.uploadUrl('origin', 1, 60).then(({ url }) => new URL(url).origin));
    origin.catch(() => (this.origin = undefined));
    return origin;
  }

  async open(id: string): Promise<StagedObject | undefined> {
    let answer;
    try {
      answer = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: stagedKey(id) }));
    } catch (cause) {
      if (cause instanceof NoSuchKey) return undefined;
      throw new DependencyError('S3 get staged', cause);
    }
    const body = answer.Body;
    if (!body) return undefined;
    return {
      size: answer.ContentLength ?? 0,
      read: async () => {
        try {
          return await body.transformToByteArray();
        } catch (cause) {
          throw new DependencyError('S3 read staged', cause);
        }
      },
      discard: () => {
        // a body left unread keeps its connection: give it back
        (body as { destroy?: () => void }).destroy?.();
      },
    };
  }

  async remove(id: string): Promise<void> {
    await this.removeKey(stagedKey(id));
  }

  async removeOlderThan(cutoffMs: number): Promise<StagedUsage> {
    const old = (await this.list()).filter((object) => (object.LastModified?.getTime() ?? 0) < cutoffMs);
    // one by one: a role may delete under staging/ only, which DeleteObjects' bucket-wide request does not tell apart
    for (const object of old) await this.removeKey(object.Key ?? '');
    return usageOf(old);
  }

  async usage(): Promise<StagedUsage> {
    return usageOf(await this.list());
  }

  private async list(): Promise<_Object[]> {
    const objects: _Object[] = [];
    let ContinuationToken: string | undefined;
    try {
      do {
        const page = await this.s3.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: BUCKET_LAYOUT.stagingPrefix, ContinuationToken }),
        );
        objects.push(...(page.Contents ?? []));
        ContinuationToken = page.NextContinuationToken;
      } while (ContinuationToken);
    } catch (cause) {
      throw new DependencyError('S3 list staged', cause);
    }
    return objects;
  }

  private async removeKey(key: string): Promise<void> {
    try {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (cause) {
      throw new DependencyError('S3 delete staged', cause);
    }
  }
}

function usageOf(objects: readonly _Object[]): StagedUsage {
  return { files: objects.length, bytes: objects.reduce((sum, object) => sum + (object.Size ?? 0), 0) };
}
