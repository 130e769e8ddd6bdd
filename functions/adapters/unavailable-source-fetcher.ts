import { UploadError } from '../core/errors';
import type { SourceFetcher } from '../core/ports';

/** Refuses every URL source; stands until the safe fetcher lands. */
export class UnavailableSourceFetcher implements SourceFetcher {
  fetch(): Promise<{ bytes: Uint8Array; filename: string }> {
    return Promise.reject(new UploadError('UrlNotAllowed', 'URL not allowed'));
  }
}
