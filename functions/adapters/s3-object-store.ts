import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DependencyError } from '../core/errors';
import type { ObjectStore, StoredObject } from '../core/ports';

/** Objects in one S3 bucket. */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(object: StoredObject): Promise<void> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: object.key,
          Body: object.body,
          ContentType: object.contentType,
          CacheControl: object.cacheControl,
          // Names are claimed in DynamoDB first; this makes S3 itself refuse to overwrite as well.
          IfNoneMatch: '*',
        }),
      );
    } catch (cause) {
      throw new DependencyError('S3 put', cause);
    }
  }

  async exist(keys: readonly string[]): Promise<boolean> {
    try {
      const found = await Promise.all(keys.map((key) => this.has(key)));
      return found.every(Boolean);
    } catch (cause) {
      throw new DependencyError('S3 head', cause);
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    try {
      await Promise.all(keys.map((key) => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }))));
    } catch (cause) {
      throw new DependencyError('S3 delete', cause);
    }
  }

  private async has(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      // a HEAD answer has no body, only its status: 404 (403 to a role without s3:ListBucket; the functions have it)
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw error;
    }
  }
}
