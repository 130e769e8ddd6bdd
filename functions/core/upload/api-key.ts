import { ServiceError } from '../errors';
import { constantTimeEquals } from '../hashes';
import type { SettingsStore } from '../ports';

/**
 * The key check (`docs/api.md`, section 13): the one API key, read from its parameter (cached there for
 * `PARAMETERS_CACHE_SECONDS`), compared in constant time.
 */
export class ApiKeyCheck {
  constructor(private readonly settings: Pick<SettingsStore, 'apiKey'>) {}

  /** The request's key, once it is the service's; refused (401, or 503 before the operator set one) otherwise. */
  async check(key: string | undefined): Promise<string> {
    if (key === undefined || key === '') throw new ServiceError('NoKey', 'No key provided');
    const expected = await this.settings.apiKey();
    if (expected === undefined || expected === '') throw new ServiceError('KeyNotConfigured', 'API key is not configured');
    if (!constantTimeEquals(key, expected)) throw new ServiceError('InvalidKey', 'Invalid API key.');
    return key;
  }

  /** Whether a request carried the service's key: refusals are counted apart by it (`docs/operations.md`). */
  async holds(key: string | undefined): Promise<boolean> {
    return this.check(key).then(
      () => true,
      () => false,
    );
  }
}
