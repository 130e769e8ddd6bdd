import { ParameterNotFoundError } from '@aws-lambda-powertools/parameters';
import type { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { DependencyError } from '../core/errors';
import type { SettingsStore } from '../core/ports';

export interface SettingsParameters {
  apiKey: string;
  floodLimits: string;
  idSalt: string;
}

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
    // The salt never changes once made: one read per cold start.
    const value = await this.read(this.names.idSalt, Number.MAX_SAFE_INTEGER / 1000);
    if (!value) throw new Error(`the id salt parameter ${this.names.idSalt} is missing`);
    return value;
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
