import type { Node } from 'constructs';
import { ContextError, functionSettings, unknownKeys } from './function-context';
import {
  LAMBDA_UNRESERVED_MINIMUM,
  THROTTLE_RATE_PER_CONCURRENCY,
  DEFAULT_STACK_NAME,
  parameterPrefixOf,
  type CustomDomain,
  type DeploymentContextKey,
  type DeploymentSettings,
} from './settings';

/**
 * The deployment's settings read from CDK context (`cdk.json` or `-c key=value`), each checked as it is read: the
 * declarations of what they are, `settings.ts`.
 */

/**
 * The stack's name from context, checked: CloudFormation's rule, and short enough for the names derived from it
 * (an origin access control's name, `NAME-REGION-images`, has at most 64 characters).
 */
export function readStackName(node: Node): string {
  const value = contextReader(node).text('stackName') ?? DEFAULT_STACK_NAME;
  if (!/^[A-Za-z][A-Za-z0-9-]{0,39}$/.test(value))
    throw new Error('context stackName must be a letter then up to 39 letters, digits or hyphens');
  // names that differ only in case or hyphens share a parameter prefix: none may share the default copy's
  if (value !== DEFAULT_STACK_NAME && parameterPrefixOf(value) === parameterPrefixOf(DEFAULT_STACK_NAME))
    throw new Error(`context stackName ${value} would share ${DEFAULT_STACK_NAME}'s parameters: choose another name`);
  return value;
}

/** Reads CDK context values: text, a bounded whole number, a choice of two; a bad value throws, naming its key. */
function contextReader(node: Node) {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new Error(`context ${key} must be a string, number or boolean`);
  };
  const number = (key: DeploymentContextKey, fallback: number, min: number, max: number): number => {
    const value = Number(text(key) ?? fallback);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new Error(`context ${key} must be a whole number from ${min} to ${max}`);
    return value;
  };
  const flag = (key: DeploymentContextKey, fallback: boolean): boolean => {
    const value = text(key) ?? String(fallback);
    if (value !== 'true' && value !== 'false') throw new Error(`context ${key} must be true or false`);
    return value === 'true';
  };
  const matching = (key: DeploymentContextKey, pattern: RegExp, what: string): string | undefined => {
    const value = text(key);
    if (value !== undefined && !pattern.test(value)) throw new Error(`context ${key} must be ${what}`);
    return value;
  };
  return { text, number, flag, matching };
}

/**
 * How many requests the API function can run at once, and the stage throttle that follows it: past it, the gateway's
 * 429 rather than Lambda's throttle (a 503). Upper bounds are sanity checks only: the account's own quotas (raised on
 * request) bind first (docs/scale.md).
 */
function concurrencySettings(read: ReturnType<typeof contextReader>) {
  const reservedConcurrency =
    read.text('reservedConcurrency') === undefined ? undefined : read.number('reservedConcurrency', 0, 1, 100_000);
  const accountConcurrency = read.number('accountConcurrency', 10, 2, 1_000_000);
  // Lambda keeps 100 of the account's concurrency unreserved, and refuses at create a reservation that takes more
  if (reservedConcurrency !== undefined && reservedConcurrency > accountConcurrency - LAMBDA_UNRESERVED_MINIMUM)
    throw new Error(
      accountConcurrency <= LAMBDA_UNRESERVED_MINIMUM
        ? `context reservedConcurrency needs an accountConcurrency above ${LAMBDA_UNRESERVED_MINIMUM}: Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} of it unreserved (leave reservedConcurrency unset, or raise the quota)`
        : `context reservedConcurrency must be at most ${accountConcurrency - LAMBDA_UNRESERVED_MINIMUM}: Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} of accountConcurrency unreserved`,
    );
  // the sweep runs most of the time (a run every 5 minutes takes up to 4): one of the account's is its own
  const apiConcurrency = reservedConcurrency ?? accountConcurrency - 1;
  return {
    reservedConcurrency,
    accountConcurrency,
    apiConcurrency,
    throttleRateLimit: read.number('throttleRateLimit', apiConcurrency * THROTTLE_RATE_PER_CONCURRENCY, 1, 1_000_000),
    throttleBurstLimit: read.number('throttleBurstLimit', apiConcurrency, 1, 500_000),
  };
}

/**
 * The custom domain from context, checked: a name ACM can certify (at most 64 characters), and a hosted zone or a
 * certificate of the operator's to serve it with (a hosted zone alone makes the certificate).
 */
function customDomain(read: ReturnType<typeof contextReader>): CustomDomain | undefined {
  // any case (DNS ignores it), punycode labels and top-level domains (xn--...) included
  const name = read
    .matching(
      'domainName',
      /^(?=.{4,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/,
      'a host name such as img.example.com',
    )
    ?.toLowerCase();
  const hostedZoneId = read.matching(
    'hostedZoneId',
    /^Z[A-Z0-9]{1,31}$/,
    'a Route 53 hosted zone id, e.g. Z0123456789ABCDEFGHIJ',
  );
  const certificateArn = read.matching(
    'certificateArn',
    /^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[\w-]+$/,
    'the ARN of an ACM certificate in us-east-1 (CloudFront takes no other region)',
  );
  if (name === undefined) {
    if (hostedZoneId !== undefined || certificateArn !== undefined)
      throw new Error('context hostedZoneId and certificateArn need domainName');
    return undefined;
  }
  if (hostedZoneId === undefined && certificateArn === undefined)
    throw new Error('context domainName needs hostedZoneId (the stack makes the certificate) or certificateArn');
  // ACM certifies names of 64 characters at most: a longer one needs a certificate of your own (a wildcard, say)
  if (certificateArn === undefined && name.length > 64)
    throw new Error('context domainName over 64 characters needs certificateArn: ACM certifies names of 64 at most');
  return { name, hostedZoneId, certificateArn };
}

/** The edge firewall's rate from context, or undefined when it is off (a rate without it is a mistake). */
function edgeFirewallOf(read: ReturnType<typeof contextReader>): number | undefined {
  if (read.flag('edgeFirewall', false)) return read.number('edgeFirewallRateLimit', 1000, 10, 2_000_000_000);
  if (read.text('edgeFirewallRateLimit') !== undefined) throw new Error('context edgeFirewallRateLimit needs edgeFirewall=true');
  return undefined;
}

/** The price class a context value names; a mistake fails the synth. */
function priceClassOf(text: string | undefined): DeploymentSettings['priceClass'] {
  const value = text ?? 'All';
  if (value !== 'All' && value !== '200' && value !== '100')
    throw new Error(`context priceClass must be All, 200 or 100, got ${value}`);
  return value;
}

/**
 * Reads the settings from CDK context (`cdk.json` or `-c key=value`) and checks them with the very function the
 * Lambda runs at cold start, so a bad value fails `cdk synth` instead of the first upload.
 */
export function readDeploymentSettings(node: Node): DeploymentSettings {
  const read = contextReader(node);
  const problems: string[] = [...unknownKeys(node)];
  /** A value read, or its fallback when it is wrong: its problem (or problems) kept, to be told with all the others. */
  const checked = <T>(reading: () => T, fallback: T): T => {
    try {
      return reading();
    } catch (error) {
      if (error instanceof ContextError) problems.push(...error.problems);
      else if (error instanceof Error) problems.push(error.message);
      else throw error;
      return fallback;
    }
  };
  const stackName = checked(() => readStackName(node), DEFAULT_STACK_NAME);
  const removal = checked(() => {
    const value = read.text('removalPolicy') ?? 'retain';
    if (value !== 'retain' && value !== 'destroy') throw new Error('context removalPolicy must be retain or destroy');
    return value;
  }, 'retain' as const);
  const firewallRateLimit = checked(() => {
    const value = read.number('firewallRateLimit', 3000, 0, 2_000_000_000);
    if (value > 0 && value < 10) throw new Error('context firewallRateLimit must be 0 (off) or at least 10');
    return value;
  }, 3000);
  const settings: DeploymentSettings = {
    stackName,
    originSecretRotation: checked(
      () => read.matching('originSecretRotation', /^[\w.:-]{1,64}$/, 'up to 64 letters, digits or . _ : -') ?? '',
      '',
    ),
    ...checked(() => functionSettings(read.text, stackName), { functionEnv: {}, parameterPrefix: '' }),
    memorySizeMb: checked(() => read.number('memorySize', 1769, 512, 10240), 1769),
    keepDeletedDays: checked(() => read.number('keepDeletedDays', 30, 1, 365), 30),
    // (a fallback is never used: a problem fails the synth below, with the others)
    ...checked(() => concurrencySettings(read), {
      reservedConcurrency: undefined,
      accountConcurrency: 10,
      apiConcurrency: 9,
      throttleRateLimit: 9,
      throttleBurstLimit: 9,
    }),
    domain: checked(() => customDomain(read), undefined),
    removal,
    firewall: checked(() => read.flag('firewall', true), true),
    firewallRateLimit,
    edgeFirewallRateLimit: checked(() => edgeFirewallOf(read), undefined),
    priceClass: checked(() => priceClassOf(read.text('priceClass')), 'All'),
    alarmEmail: checked(() => read.matching('alarmEmail', /^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'an e-mail address'), undefined),
    alarmTopicArn: checked(
      () => read.matching('alarmTopicArn', /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/, 'the ARN of an SNS topic'),
      undefined,
    ),
    gatewayAccountRole: checked(() => read.flag('gatewayAccountRole', true), true),
  };
  if (problems.length > 0) throw new ContextError(problems);
  return settings;
}
