import { contextKeyOf, SETTINGS, type SettingName } from '../functions/settings-table';

/** CDK context keys of the function's settings (all but those the stack sets), and the environment variable of each. */
export const CONTEXT_SETTINGS: ReadonlyArray<{ key: string; name: SettingName }> = (Object.keys(SETTINGS) as SettingName[])
  .filter((name) => !('setByStack' in SETTINGS[name]))
  .map((name) => ({ key: contextKeyOf(name), name }));

/** The context keys of deployment choices that are not function settings, and what each does (Markdown). */
export const DEPLOYMENT_CONTEXT = {
  stackName:
    'the CloudFormation stack (default `ImageUpload`): another name deploys an independent copy, its parameter prefix, API, metrics and CloudFront names derived from it ([deployment.md](deployment.md#more-than-one-copy))',
  originSecretRotation:
    'a new value (any text, e.g. the date) rotates the secret CloudFront sends to the API, without downtime ([deployment.md](deployment.md#rotating-the-origin-secret)); the same value again, or none, rotates nothing',
  keepDeletedDays:
    'days a deleted or expired file is kept as a noncurrent version of the bucket, restorable (default 30; a takedown keeps nothing)',
  domainName:
    'a custom domain, with `hostedZoneId` (the stack makes its certificate and DNS records) or `certificateArn` ([deployment.md](deployment.md#a-custom-domain))',
  hostedZoneId:
    'the Route 53 hosted zone of `domainName`: a DNS-validated certificate in us-east-1 (a stack of its own there, unless `certificateArn` is given) and alias records to the distribution',
  certificateArn: 'an ACM certificate of `domainName` in us-east-1, of your own (instead of the one `hostedZoneId` makes)',
  memorySize: 'function memory, MB (default 1769: one vCPU)',
  accountConcurrency:
    "your account's Lambda concurrency quota (default 10, a new account's); the API may run it less one (the sweep's)",
  reservedConcurrency:
    "the API function's reserved concurrency (default: none); at most `accountConcurrency` less 100, which Lambda keeps unreserved (so none on a new account's 10)",
  throttleRateLimit:
    'stage throttling, requests a second (default: 2 per request the API function can run at once: 18 on a new account)',
  throttleBurstLimit: 'stage throttling, burst (default: 1 per request the API function can run at once: 9 on a new account)',
  removalPolicy:
    '`retain` (default) keeps bucket and table on destroy (not re-attached by a redeploy: `docs/deployment.md`); `destroy` removes them',
  firewall: '`true` (default): the WAF web ACL on the API; `false`: none',
  firewallRateLimit: 'requests per viewer IP in any 5 minutes (default 3000; `0`: no rate rule)',
  edgeFirewall:
    "`true`: a WAF web ACL in front of the distribution (CloudFront scope, in a stack of its own in us-east-1): a rate per viewer IP on every path, images included, and AWS's IP reputation list; default `false` ([deployment.md](deployment.md#the-edge-firewall): about $7 a month)",
  edgeFirewallRateLimit: 'requests per viewer IP in any 5 minutes the edge firewall lets through, images included (default 1000)',
  priceClass:
    "the distribution's edge locations: `All` (default: every location, the fastest everywhere), `200` (not South America or Australia), `100` (North America and Europe only: the cheapest egress; [deployment.md](deployment.md#what-it-costs))",
  alarmEmail: 'an address the alarms are e-mailed to (it must confirm the subscription)',
  alarmTopicArn:
    "an SNS topic of your own that gets the alarms (instead of the stack's); synth warns when neither this nor `alarmEmail` is set",
  gatewayAccountRole:
    "`true` (default): the stack sets the account's API Gateway logging role (account-wide, kept on destroy); `false`: the account has one already",
} as const;

export type DeploymentContextKey = keyof typeof DEPLOYMENT_CONTEXT;

/** The stack's name when none is given: deployed stacks keep their logical ids, parameters and metrics. */
export const DEFAULT_STACK_NAME = 'ImageUpload';

/** The parameter prefix a copy gets unless `parameterPrefix` is set: its name in kebab case (`/image-upload`). */
export function parameterPrefixOf(stackName: string): string {
  const kebab = stackName
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/-+/g, '-')
    .toLowerCase();
  return `/${kebab}`;
}

/** Deployment choices that are not function settings. */
export interface DeploymentSettings {
  /** The stack's name: names that must differ between copies in one account are made from it. */
  stackName: string;
  /** A value that differs from the last deploy's rotates the origin secret; empty: no rotation asked. */
  originSecretRotation: string;
  /** Days a removed file's noncurrent version is kept in the bucket, for a restore. */
  keepDeletedDays: number;
  /** The function's environment, from context (unset keys keep the function's defaults). */
  functionEnv: Record<string, string>;
  parameterPrefix: string;
  memorySizeMb: number;
  reservedConcurrency: number | undefined;
  /** The Lambda concurrency of the account (its quota: 10 on a new account), which every function shares. */
  accountConcurrency: number;
  /** Requests the API function can run at once: its reserved concurrency, or the account's less one for the sweep. */
  apiConcurrency: number;
  throttleRateLimit: number;
  throttleBurstLimit: number;
  /** A custom domain, and how its certificate and DNS come: made by the stack in a hosted zone, or given. */
  domain: CustomDomain | undefined;
  /** Requests per viewer IP in any 5 minutes of a WAF web ACL on the distribution; undefined: no such web ACL. */
  edgeFirewallRateLimit: number | undefined;
  /** `destroy` removes the bucket and table with the stack; `retain` (default) keeps them. */
  removal: 'retain' | 'destroy';
  /** A WAF web ACL on the API's stage (default on): only requests through the distribution, a rate per viewer IP. */
  firewall: boolean;
  /** Requests per viewer IP in any 5 minutes the firewall lets through; 0: no rate rule. */
  firewallRateLimit: number;
  /** CloudFront's price class: which edge locations serve (`All`, `200`, `100`). */
  priceClass: 'All' | '200' | '100';
  /** Where alarms are e-mailed (a subscription the address must confirm); undefined: the SNS topic only. */
  alarmEmail: string | undefined;
  /** An SNS topic of the operator's own that gets the alarms (instead of one of the stack's). */
  alarmTopicArn: string | undefined;
  /**
   * Whether the stack sets the account's API Gateway logging role (`AWS::ApiGateway::Account`, one per account and
   * region, shared by every REST API there); false: the account already has one, which the stack leaves alone.
   */
  gatewayAccountRole: boolean;
}

/**
 * A custom domain: with `hostedZoneId` the stack makes its alias records in that zone, and its certificate (in
 * us-east-1) unless `certificateArn` names one of the operator's.
 */
export interface CustomDomain {
  name: string;
  hostedZoneId: string | undefined;
  certificateArn: string | undefined;
}

/** Whether the settings need resources in us-east-1, CloudFront's region: a certificate made, or the edge firewall. */
export function needsUsEast1(settings: Pick<DeploymentSettings, 'domain' | 'edgeFirewallRateLimit'>): boolean {
  const makesCertificate = settings.domain !== undefined && settings.domain.certificateArn === undefined;
  return makesCertificate || settings.edgeFirewallRateLimit !== undefined;
}

/** The account concurrency Lambda keeps unreserved: a function may reserve at most the quota less this. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;

/** Requests a second the API's stage lets through, per request it can run at once (a request takes 0.5 s or less). */
export const THROTTLE_RATE_PER_CONCURRENCY = 2;
