import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  NoSuchKey,
  PutObjectCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { DependencyError, VersionsNotKept } from '../core/errors';
import type { ObjectStore, StoredObject } from '../core/ports';

/**
 * The put's payload is signed as `UNSIGNED-PAYLOAD`: the signature covers the headers, Content-MD5 among them, and S3
 * checks the body against that md5, which the upload computed anyway. Signing the body would hash all of it once more
 * with SHA-256, on the event loop's thread (3.3 ms of a 4.4 MB original here), and the SDK's default CRC32 checksum
 * once more again (1.7 ms): `docs/performance.md`, "The handler's own CPU". The client is made with
 * `requestChecksumCalculation: 'WHEN_REQUIRED'` for the latter.
 */
function signWithoutPayload(command: PutObjectCommand): PutObjectCommand {
  command.middlewareStack.add(
    (next) => (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'unsignedPayload' },
  );
  return command;
}

/** How a store without versions refuses to list them (s3rver: `MethodNotAllowed`). */
const WITHOUT_VERSIONS = new Set(['MethodNotAllowed', 'NotImplemented']);

function withoutVersions(error: unknown): boolean {
  return error instanceof S3ServiceException && WITHOUT_VERSIONS.has(error.name);
}

/** Objects in one S3 bucket. */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(object: StoredObject): Promise<void> {
    const command = signWithoutPayload(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: object.key,
        Body: object.body,
        ContentType: object.contentType,
        CacheControl: object.cacheControl,
        // S3 checks the bytes it received against it, and refuses them (BadDigest) if they differ
        ContentMD5: Buffer.from(object.md5, 'hex').toString('base64'),
        // Names are claimed in DynamoDB first; this makes S3 itself refuse to overwrite as well.
        IfNoneMatch: '*',
      }),
    );
    try {
      await this.s3.send(command);
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

  /**
   * Deletes each version and delete marker of each key, found by listing the key's versions. A store that keeps no
   * versions (the local stand-in, which refuses the listing with `MethodNotAllowed`) holds only the current objects,
   * which `deleteMany` removes.
   */
  async purge(keys: readonly string[]): Promise<void> {
    try {
      for (const key of keys) {
        const { versions, markers } = await this.versionsOf(key);
        await this.deleteVersions(key, [...versions, ...markers]);
      }
    } catch (cause) {
      if (withoutVersions(cause)) return this.deleteMany(keys);
      throw new DependencyError('S3 purge', cause);
    }
  }

  /**
   * Deletes every delete marker of each key that has a version kept: the newest version becomes current again, as it
   * was (no copy, no new version). Every key is read first, and nothing changes when one has no version kept.
   */
  async restore(keys: readonly string[]): Promise<string[]> {
    try {
      const found = await Promise.all(keys.map(async (key) => ({ key, ...(await this.versionsOf(key)) })));
      const lost = found.filter(({ versions }) => versions.length === 0).map(({ key }) => key);
      if (lost.length > 0) return lost;
      for (const { key, markers } of found) await this.deleteVersions(key, markers);
      return [];
    } catch (cause) {
      if (withoutVersions(cause)) throw new VersionsNotKept();
      throw new DependencyError('S3 restore', cause);
    }
  }

  /** The version ids of a key's versions and of its delete markers, newest first. */
  private async versionsOf(key: string): Promise<{ versions: string[]; markers: string[] }> {
    const found = { versions: [] as string[], markers: [] as string[] };
    let next: { KeyMarker?: string; VersionIdMarker?: string } = {};
    for (;;) {
      const page = await this.s3.send(new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: key, ...next }));
      // a key that begins with this one is another object
      const ids = (list: Array<{ Key?: string | undefined; VersionId?: string | undefined }> = []) =>
        list.flatMap((version) => (version.Key === key && version.VersionId ? [version.VersionId] : []));
      found.versions.push(...ids(page.Versions));
      found.markers.push(...ids(page.DeleteMarkers));
      if (!page.IsTruncated) return found;
      next = {
        ...(page.NextKeyMarker === undefined ? {} : { KeyMarker: page.NextKeyMarker }),
        ...(page.NextVersionIdMarker === undefined ? {} : { VersionIdMarker: page.NextVersionIdMarker }),
      };
    }
  }

  private async deleteVersions(key: string, versionIds: readonly string[]): Promise<void> {
    await Promise.all(
      versionIds.map((id) => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key, VersionId: id }))),
    );
  }

  async read(key: string): Promise<Uint8Array | undefined> {
    try {
      const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return await answer.Body?.transformToByteArray();
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw new DependencyError('S3 get', error);
    }
  }

  async readKept(key: string): Promise<Uint8Array | undefined> {
    const current = await this.read(key);
    if (current) return current;
    try {
      const [newest] = (await this.versionsOf(key)).versions;
      if (newest === undefined) return undefined;
      const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, VersionId: newest }));
      return await answer.Body?.transformToByteArray();
    } catch (error) {
      if (withoutVersions(error)) return undefined;
      throw new DependencyError('S3 get of a kept version', error);
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
