import { randomBytes } from 'node:crypto';
import {
  GetParameterCommand,
  ParameterAlreadyExists,
  ParameterNotFound,
  PutParameterCommand,
  type SSMClient,
} from '@aws-sdk/client-ssm';
import { DEFAULT_FLOOD_LIMITS } from '../core/flood';
import type { SettingsParameters } from './parameter-names';

/** The parameters a deployment makes once and the operator owns from then on. */
export type OwnedParameter = 'apiKey' | 'idSalt' | 'floodLimits' | 'originSecret';

/**
 * A random API key: 32 base64url characters (192 bits), drawn again when it would begin with `-` or `_`, so that it
 * can be typed after a command's other arguments (`npm run upload -- photo.jpg URL KEY`) without being read as an
 * option.
 */
export function newApiKey(): string {
  for (;;) {
    const key = randomBytes(24).toString('base64url');
    if (/^[A-Za-z0-9]/.test(key)) return key;
  }
}

/** How each owned parameter is first made: the key, the salt and the origin secret random, the limits the defaults. */
export const FIRST_VALUES: Record<OwnedParameter, { type: 'String' | 'SecureString'; make: () => string }> = {
  apiKey: { type: 'SecureString', make: newApiKey },
  idSalt: { type: 'SecureString', make: () => randomBytes(32).toString('hex') },
  floodLimits: { type: 'String', make: () => JSON.stringify(DEFAULT_FLOOD_LIMITS) },
  originSecret: { type: 'SecureString', make: () => randomBytes(32).toString('hex') },
};

/**
 * The operator's parameters, made the same way by the stack's setup step in AWS and by `npm start` on its stand-ins:
 * a missing one gets its first value, an existing one is never changed (a key rotated or limits edited in the console
 * stay), but for a value the operator gives on purpose.
 */
export class OperatorParameters {
  constructor(
    private readonly ssm: SSMClient,
    private readonly names: SettingsParameters,
  ) {}

  /** The parameter's value, made with its first value when it is missing (by this call or another at once). */
  async ensure(which: OwnedParameter): Promise<string> {
    const name = this.names[which];
    const existing = await this.readName(name);
    if (existing !== undefined) return existing;
    const { type, make } = FIRST_VALUES[which];
    try {
      await this.ssm.send(new PutParameterCommand({ Name: name, Value: make(), Type: type, Overwrite: false }));
    } catch (error) {
      if (!(error instanceof ParameterAlreadyExists)) throw error;
    }
    const created = await this.readName(name);
    if (created === undefined) throw new Error(`parameter ${name} could not be created`);
    return created;
  }

  /** Writes a value the operator gave (`API_KEY`, `FLOOD_LIMITS` of a local start) over the stored one. */
  async put(which: OwnedParameter, value: string): Promise<void> {
    const { type } = FIRST_VALUES[which];
    await this.ssm.send(new PutParameterCommand({ Name: this.names[which], Value: value, Type: type, Overwrite: true }));
  }

  /** The parameter's value; undefined when it is missing. */
  async read(which: OwnedParameter): Promise<string | undefined> {
    return this.readName(this.names[which]);
  }

  private async readName(name: string): Promise<string | undefined> {
    try {
      return (await this.ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter?.Value;
    } catch (error) {
      if (error instanceof ParameterNotFound) return undefined;
      throw error;
    }
  }
}
