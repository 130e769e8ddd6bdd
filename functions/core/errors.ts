import { formatSize } from './image/formatting';

/** Every way an operation can fail that a client is told about. The HTTP layer maps each kind to a status and code. */
export type ServiceErrorKind =
  | 'NoKey'
  | 'InvalidKey'
  | 'KeyNotConfigured'
  | 'EmptyUploadSource'
  | 'EmptySource'
  | 'InvalidBase64'
  | 'UnsupportedFormat'
  | 'FileTooBig'
  | 'ImageTooLarge'
  | 'ImageTooThin'
  | 'WidthTooLarge'
  | 'InvalidWidth'
  | 'InvalidExpiration'
  | 'UrlNotAllowed'
  | 'UrlFetchFailed'
  | 'Flooding'
  | 'FetchFailuresExceeded'
  | 'UrlFetchesExceeded'
  | 'Duplicate'
  | 'NotFound'
  | 'InvalidSize'
  | 'UploadUrlsExceeded'
  | 'InvalidUploadToken'
  | 'UploadTokenExpired'
  | 'UploadTokenUsed'
  | 'NothingStaged'
  | 'StagedSizeMismatch'
  | 'Banned'
  | 'Blocked'
  | 'AdultContent'
  | 'InvalidReport'
  | 'ReportsExceeded'
  | 'DependencyFailed';

export interface ServiceErrorOptions {
  cause?: unknown;
  /** Seconds a client should wait before trying again (flood limits). */
  retryAfterSeconds?: number;
}

/** A refusal or failure a client is told about (of an upload, a page, a report, a delete link), with a safe message. */
export class ServiceError extends Error {
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly kind: ServiceErrorKind,
    message: string,
    options: ServiceErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ServiceError';
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** A store (S3, DynamoDB, SSM) failed or timed out; the client may try again. */
export class DependencyError extends ServiceError {
  constructor(
    readonly what: string,
    cause: unknown,
  ) {
    super('DependencyFailed', 'Service unavailable, try again', { cause });
    this.name = 'DependencyError';
  }
}

/** The object store keeps no earlier versions (the local stand-in): nothing removed can be restored. */
export class VersionsNotKept extends Error {
  constructor() {
    super('this object store keeps no earlier versions of removed files (the local stand-in does not): nothing to restore');
    this.name = 'VersionsNotKept';
  }
}

/** `File too big - max 10 MB`: the file, or the URL source's body, is larger than the limit. */
export function fileTooBig(maxBytes: number): ServiceError {
  return new ServiceError('FileTooBig', `File too big - max ${formatSize(maxBytes)}`);
}
