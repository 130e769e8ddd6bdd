import { ParameterNotFoundError } from '@aws-lambda-powertools/parameters';
import type { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { DependencyError } from '../core/errors';
import type { SettingsStore } from '../core/ports';
import type { SettingsParameters } from './parameter-names';

/** Values that never change once made: one read per cold start. */
const FOREVER_SECONDS = Number.MAX_SAFE_INTEGER / 1000;
/** The origin secret is rotated by redeploying; instances pick the new one up within this time. */
const ORIGIN_SECRET_SECONDS = 300;

export interface SettingsCacheAges {
  apiKeySeconds: number;
  floodLimitsSeconds: number;
}

/** Settings read from SSM Parameter Store through Powertools' cache, decrypting SecureStrings. */
export class SsmSettingsStore implements SettingsStore {
  constructor(
    private readonly provider: SSMProvider,
    private readonly names: SettingsParameters,
    private readonly maxAges: SettingsCacheAges,
  ) {}

  async apiKey(): Promise<string | undefined> {
    const value = await this.read(this.names.apiKey, this.maxAges.apiKeySeconds);
    return value?.trim() || undefined;
  }

  floodLimits(): Promise<string | undefined> {
    return this.read(this.names.floodLimits, this.maxAges.floodLimitsSeconds);
  }

  async idSalt(): Promise<string> {
    const value = await this.read(this.names.idSalt, FOREVER_SECONDS);
    if (!value) throw new Error(`the id salt parameter ${this.names.idSalt} is missing`);
    return value;
  }

  async publicUrl(): Promise<string | undefined> {
    return (await this.read(this.names.publicUrl, FOREVER_SECONDS))?.trim() || undefined;
  }

  async distributionId(): Promise<string | undefined> {
    return (await this.read(this.names.distributionId, FOREVER_SECONDS))?.trim() || undefined;
  }

  async originSecret(): Promise<string | undefined> {
    return (await this.read(this.names.originSecret, ORIGIN_SECRET_SECONDS))?.trim() || undefined;
  }

  private async read(name: string, maxAgeSeconds: number): Promise<string | undefined> {
    try {
      return await this.provider.get(name, { maxAge: maxAgeSeconds, decrypt: true, throwOnMissing: true });
    } catch (error) {
      if (error instanceof ParameterNotFoundError) return undefined;
      throw new DependencyError('SSM get parameter', error);
    }
  }
}
