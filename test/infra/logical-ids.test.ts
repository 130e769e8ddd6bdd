import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from 'aws-cdk-lib';
import { buildApp } from '../../lib/app';

/**
 * Every resource of a deployed stack keeps its logical id through a change of the code's shape (a resource whose id
 * changed would be replaced: a new bucket and table would start empty beside the kept ones). The ids, with their
 * types, of the stack as it was before its parts became constructs of their own (`lib/stack-part.ts`), for the ways
 * operators deploy it, are in `test/fixtures/logical-ids.json`; each synth must give exactly those.
 */
const EXPECTED = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'logical-ids.json'), 'utf8')) as Record<
  string,
  Record<string, Record<string, string>>
>;
const IRELAND: Environment = { account: '123456789012', region: 'eu-west-1' };
const VARIANTS: Record<string, Record<string, string>> = {
  default: {},
  'removalPolicy=destroy firewall=false': { removalPolicy: 'destroy', firewall: 'false' },
  'stackName=Staging gatewayAccountRole=false alarmEmail': {
    stackName: 'Staging',
    gatewayAccountRole: 'false',
    alarmEmail: 'ops@example.com',
  },
  'domainName certificateArn hostedZoneId': {
    domainName: 'img.example.com',
    certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c',
    hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  },
  'domainName hostedZoneId edgeFirewall (eu-west-1)': {
    domainName: 'img.example.com',
    hostedZoneId: 'Z0123456789ABCDEFGHIJ',
    edgeFirewall: 'true',
  },
};

describe('the logical ids of a deployed stack', () => {
  it('has an expectation for every variant, and only those', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(VARIANTS).sort());
  });

  it.each(Object.entries(VARIANTS))('stay what they were: %s', (name, context) => {
    const { app } = buildApp(
      { context: { 'aws:cdk:bundling-stacks': [], ...context } },
      name.includes('edgeFirewall') ? IRELAND : {},
    );
    const ids = Object.fromEntries(
      app
        .synth()
        .stacks.map((stack) => [
          stack.stackName,
          Object.fromEntries(
            Object.entries((stack.template as { Resources: Record<string, { Type: string }> }).Resources).map(
              ([id, resource]) => [id, resource.Type],
            ),
          ),
        ]),
    );
    expect(ids).toEqual(EXPECTED[name]);
  });

  // `cdk.json` sets the feature flags that change nothing a deployed stack holds (`docs/decisions.md`, "Feature flags")
  const FLAGS = (
    JSON.parse(readFileSync(join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }
  ).context;

  it.each(Object.entries(VARIANTS))("makes the same templates with cdk.json's feature flags as without: %s", (name, context) => {
    const templates = (flags: Record<string, unknown>) =>
      buildApp({ context: { 'aws:cdk:bundling-stacks': [], ...flags, ...context } }, name.includes('edgeFirewall') ? IRELAND : {})
        .app.synth()
        .stacks.map((stack) => [stack.stackName, stack.template as unknown]);
    expect(Object.keys(FLAGS).filter((key) => key.startsWith('@aws-cdk')).length).toBeGreaterThan(50);
    expect(templates(FLAGS)).toEqual(templates({}));
  });
});
