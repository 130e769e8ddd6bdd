import { GetParametersCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { DependencyError } from '../core/errors';
import type { SettingsStore } from '../core/ports';
import { originSecretLines, type SettingsParameters } from './parameter-names';

type Values = Partial<Record<keyof SettingsParameters, string>>;

/**
 * Settings read from SSM Parameter Store, SecureStrings decrypted: every parameter in one `GetParameters` call per
 * refresh (Parameter Store's default throughput is 40 calls a second per account and region, which a burst of cold
 * starts would use up several times faster with a call per parameter). The values, missing ones included, are kept
 * for `maxAgeSeconds` (`PARAMETERS_CACHE_SECONDS`: one age for all, since one call reads all); reads during a
 * refresh share it.
 * It reads only the parameters it is given (the sweep: the distribution id), which its function's role allows; a
 * setting it was not given reads as missing.
 */
export class SsmSettingsStore implements SettingsStore {
  private cached: { values: Values; readAtMs: number } | undefined;
  private refreshing: Promise<Values> | undefined;

  constructor(
    private readonly ssm: SSMClient,
    private readonly names: Partial<SettingsParameters>,
    private readonly maxAgeSeconds: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  async apiKey(): Promise<string | undefined> {
    return (await this.values()).apiKey?.trim() || undefined;
  }

  async floodLimits(): Promise<string | undefined> {
    return (await this.values()).floodLimits;
  }

  async idSalt(): Promise<string> {
    const value = (await this.values()).idSalt;
    if (!value) throw new Error(`the id salt parameter ${this.names.idSalt ?? '(not read here)'} is missing`);
    return value;
  }

  async publicUrl(): Promise<string | undefined> {
    return (await this.values()).publicUrl?.trim() || undefined;
  }

  async distributionId(): Promise<string | undefined> {
    return (await this.values()).distributionId?.trim() || undefined;
  }

  async originSecrets(): Promise<readonly string[]> {
    return originSecretLines((await this.values()).originSecret);
  }

  private async values(): Promise<Values> {
    if (this.cached && this.nowMs() - this.cached.readAtMs < this.maxAgeSeconds * 1000) return this.cached.values;
    this.refreshing ??= this.read().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Every parameter in one call (at most 10 names fit); a missing one is undefined. */
  private async read(): Promise<Values> {
    const readAtMs = this.nowMs();
    const entries = (Object.entries(this.names) as Array<[keyof SettingsParameters, string | undefined]>).filter(
      (entry): entry is [keyof SettingsParameters, string] => entry[1] !== undefined,
    );
    let parameters;
    try {
      ({ Parameters: parameters } = await this.ssm.send(
        new GetParametersCommand({ Names: entries.map(([, name]) => name), WithDecryption: true }),
      ));
    } catch (error) {
      throw new DependencyError('SSM get parameters', error);
    }
    const values: Values = {};
    for (const [key, name] of entries) {
      const value = parameters?.find((parameter) => parameter.Name === name)?.Value;
      if (value !== undefined) values[key] = value;
    }
    this.cached = { values, readAtMs };
    return values;
  }
}
