/** The SSM parameters of one deployment, each under its PARAMETER_PREFIX (`/image-upload/api-key`, ...). */
export const PARAMETERS = {
  /** The API key (SecureString), made once by the setup step; the operator rotates it. */
  apiKey: 'api-key',
  /** The flood limits (JSON), made once with the defaults by the setup step; the operator edits it. */
  floodLimits: 'flood-limits',
  /** The id codec's salt (SecureString), made once; never changed. */
  idSalt: 'id-salt',
  /** The public base URL, written by the stack. */
  publicUrl: 'public-url',
  /** The values the API accepts in the origin header (SecureString, one a line), made once by the setup step. */
  originSecret: 'origin-secret',
  /**
   * What the setup step last handed to CloudFront, and the rotations it made (SecureString, JSON): the setup step's
   * own record, which no function reads and no one edits (`docs/deployment.md`, "Rotating the origin secret").
   */
  originSecretDeployed: 'origin-secret-deployed',
  /** The distribution in front of the files, written by the stack. */
  distributionId: 'distribution-id',
} as const;

export type SettingsParameters = Record<keyof typeof PARAMETERS, string>;

/** The full names of every parameter under a prefix (`/image-upload`). */
export function parameterNames(prefix: string): SettingsParameters {
  const base = prefix.replace(/\/+$/, '');
  const names = {} as SettingsParameters;
  for (const [key, name] of Object.entries(PARAMETERS) as Array<[keyof typeof PARAMETERS, string]>)
    names[key] = `${base}/${name}`;
  return names;
}

/** The parameters the API reads: all but the distribution id, which only the sweep purges, and the setup's record. */
export function apiParameters(names: SettingsParameters): Omit<SettingsParameters, 'distributionId' | 'originSecretDeployed'> {
  return {
    apiKey: names.apiKey,
    floodLimits: names.floodLimits,
    idSalt: names.idSalt,
    publicUrl: names.publicUrl,
    originSecret: names.originSecret,
  };
}

/** The secrets of an `/origin-secret` value, one a line (blank lines and spaces around them left out). */
export function originSecretLines(value: string | undefined): string[] {
  return (value ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
