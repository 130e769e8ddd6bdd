import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../lib/app';
import { cfnLintAvailable, cfnLintErrors } from '../support/cfn-lint';

/** The service in Ireland, as an operator's profile would place it. */
const IRELAND: Environment = { account: '123456789012', region: 'eu-west-1' };
const DOMAIN = { domainName: 'img.example.com', hostedZoneId: 'Z0123456789ABCDEFGHIJ' };
const OWN_CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c';

/** The app without bundling, its stacks' templates, and the region each stack is in. */
function synth(context: Record<string, string>, environment: Environment = IRELAND) {
  const built = buildApp({ context: { 'aws:cdk:bundling-stacks': [], ...context } }, environment);
  return {
    ...built,
    service: Template.fromStack(built.stack),
    guard: built.edgeGuard ? Template.fromStack(built.edgeGuard) : undefined,
  };
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
const resourcesOf = (template: Template | undefined): Resources => (template?.toJSON()['Resources'] ?? {}) as Resources;
const distributionConfig = (template: Template): Record<string, unknown> => {
  const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution')) as Array<{
    Properties: { DistributionConfig: Record<string, unknown> };
  }>;
  return distribution?.Properties.DistributionConfig ?? {};
};

describe('a custom domain made by the stack (-c domainName -c hostedZoneId)', () => {
  const { app, edgeGuard, service, guard } = synth(DOMAIN);

  it('makes its certificate in us-east-1, validated by DNS in the hosted zone, whatever the service region', () => {
    expect(edgeGuard?.region).toBe('us-east-1');
    expect(edgeGuard?.stackName).toBe('ImageUpload-eu-west-1-EdgeGuard');
    guard?.resourceCountIs('AWS::CertificateManager::Certificate', 1);
    guard?.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: 'img.example.com',
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: 'img.example.com', HostedZoneId: 'Z0123456789ABCDEFGHIJ' }],
    });
    service.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    guard?.resourceCountIs('AWS::WAFv2::WebACL', 0);
  });

  it('serves the domain with that certificate and TLS 1.2 at least, and points its A and AAAA records at the distribution', () => {
    const config = distributionConfig(service);
    expect(config['Aliases']).toEqual(['img.example.com']);
    const certificate = config['ViewerCertificate'] as { AcmCertificateArn: unknown; MinimumProtocolVersion: string };
    expect(certificate.MinimumProtocolVersion).toBe('TLSv1.2_2021');
    // read from us-east-1 through CDK's cross-region reference: the reader's attribute named after the certificate
    expect(JSON.stringify(certificate.AcmCertificateArn)).toMatch(/ExportsReader.*RefCertificate/);
    const records = Object.values(service.findResources('AWS::Route53::RecordSet')) as Resources[string][];
    expect(records.map((record) => record.Properties['Type']).sort()).toEqual(['A', 'AAAA']);
    for (const record of records)
      expect(record.Properties).toMatchObject({
        HostedZoneId: 'Z0123456789ABCDEFGHIJ',
        Name: 'img.example.com.',
        AliasTarget: { DNSName: { 'Fn::GetAtt': [expect.stringMatching(/^Distribution/), 'DomainName'] } },
      });
    service.hasResourceProperties('AWS::SSM::Parameter', { Name: '/image-upload/public-url', Value: 'https://img.example.com' });
  });

  it('passes cdk-nag in both stacks (synth throws on an unacknowledged finding)', () => {
    expect(() => app.synth()).not.toThrow();
  });

  (cfnLintAvailable() ? it : it.skip)('gives cfn-lint no error in either template', () => {
    const folder = mkdtempSync(join(tmpdir(), 'edge-guard-'));
    try {
      for (const [name, template] of Object.entries({ service, guard })) {
        const file = join(folder, `${name}.json`);
        writeFileSync(file, JSON.stringify(template?.toJSON()));
        expect(cfnLintErrors(file)).toEqual({ errors: [], errorBit: 0 });
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('a custom domain with a certificate of your own', () => {
  it('needs no stack in us-east-1: records in the hosted zone when given, nothing of DNS without one', () => {
    const withZone = synth({ ...DOMAIN, certificateArn: OWN_CERTIFICATE }, {});
    expect(withZone.edgeGuard).toBeUndefined();
    const certificate = distributionConfig(withZone.service)['ViewerCertificate'] as Record<string, unknown>;
    expect(certificate['AcmCertificateArn']).toBe(OWN_CERTIFICATE);
    withZone.service.resourceCountIs('AWS::Route53::RecordSet', 2);
    const withoutZone = synth({ domainName: DOMAIN.domainName, certificateArn: OWN_CERTIFICATE }, {});
    expect(withoutZone.edgeGuard).toBeUndefined();
    withoutZone.service.resourceCountIs('AWS::Route53::RecordSet', 0);
    expect(distributionConfig(withoutZone.service)['Aliases']).toEqual(['img.example.com']);
  });
});

describe('the edge firewall (-c edgeFirewall=true)', () => {
  const { service, guard, app } = synth({ edgeFirewall: 'true', stackName: 'Staging' });
  const webAcls = Object.values(resourcesOf(guard)).filter((resource) => resource.Type === 'AWS::WAFv2::WebACL');

  it('puts a CloudFront-scope web ACL in us-east-1 in front of the distribution', () => {
    expect(webAcls).toHaveLength(1);
    expect(webAcls[0]?.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(JSON.stringify(distributionConfig(service)['WebACLId'])).toMatch(/ExportsReader.*EdgeFirewallArn/);
    // no certificate asked for: none made, and the distribution keeps its cloudfront.net name
    guard?.resourceCountIs('AWS::CertificateManager::Certificate', 0);
    expect(distributionConfig(service)['Aliases']).toBeUndefined();
    expect(() => app.synth()).not.toThrow();
  });

  it("limits each viewer IP on every path, images included (429 in the envelope), and applies AWS's IP reputation list", () => {
    const properties = webAcls[0]?.Properties as {
      Rules: Array<Record<string, unknown>>;
      CustomResponseBodies: Record<string, { Content: string }>;
    };
    const [rate, reputation] = properties.Rules;
    expect(rate).toMatchObject({
      Name: 'RatePerViewer',
      Statement: { RateBasedStatement: { Limit: 1000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
      Action: { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'tooManyRequests' } } },
    });
    // every request the distribution gets: no scope-down statement leaves the images out
    expect(JSON.stringify(rate)).not.toContain('ScopeDownStatement');
    expect(JSON.parse(properties.CustomResponseBodies['tooManyRequests']?.Content ?? '{}')).toMatchObject({
      status_code: 429,
      error: { code: 130 },
    });
    expect(reputation).toMatchObject({
      OverrideAction: { None: {} },
      Statement: { ManagedRuleGroupStatement: { VendorName: 'AWS', Name: 'AWSManagedRulesAmazonIpReputationList' } },
    });
    // its refusals in the envelope too, never CloudFront's HTML page (ShareX shows that as an unreadable error)
    const forbidden = { Block: { CustomResponse: { ResponseCode: 403, CustomResponseBodyKey: 'forbidden' } } };
    expect(reputation).toMatchObject({
      Statement: {
        ManagedRuleGroupStatement: {
          RuleActionOverrides: [
            { Name: 'AWSManagedIPReputationList', ActionToUse: forbidden },
            { Name: 'AWSManagedReconnaissanceList', ActionToUse: forbidden },
          ],
        },
      },
    });
    expect(JSON.parse(properties.CustomResponseBodies['forbidden']?.Content ?? '{}')).toMatchObject({
      status_code: 403,
      error: { code: 403 },
    });
  });

  it("names the stack and the metrics after the copy's stack name, and takes a rate of its own", () => {
    expect(guard?.toJSON()).toBeDefined();
    const metricNames = JSON.stringify(webAcls[0]?.Properties).match(/"MetricName":"[^"]+"/g) ?? [];
    expect(metricNames).toHaveLength(3);
    for (const name of metricNames) expect(name).toMatch(/"MetricName":"Staging-eu-west-1-Edge/);
    const limited = synth({ edgeFirewall: 'true', edgeFirewallRateLimit: '300' }).guard;
    limited?.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: Match.arrayWith([Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 300 }) } })]),
    });
  });

  it('works with the service in us-east-1 itself', () => {
    const here = synth({ ...DOMAIN, edgeFirewall: 'true' }, { account: '123456789012', region: 'us-east-1' });
    expect(here.edgeGuard?.region).toBe('us-east-1');
    expect(() => here.app.synth()).not.toThrow();
  });
});

describe('domain names as operators write them', () => {
  it('takes any case (served in lower case), punycode, and a long name with a certificate of its own', () => {
    const served = (context: Record<string, string>) =>
      distributionConfig(synth({ ...context, certificateArn: OWN_CERTIFICATE }, {}).service)['Aliases'];
    expect(served({ domainName: 'Img.Example.COM' })).toEqual(['img.example.com']);
    expect(served({ domainName: 'img.xn--p1ai' })).toEqual(['img.xn--p1ai']);
    const long = `${'a'.repeat(60)}.example.com`;
    expect(served({ domainName: long })).toEqual([long]);
  });
});

describe('two copies of one stack name in two regions', () => {
  it('make two stacks in us-east-1, each named and measured by its region', () => {
    const guards = ['eu-west-1', 'us-west-2'].map(
      (region) => synth({ edgeFirewall: 'true' }, { account: '123456789012', region }).edgeGuard,
    );
    expect(guards.map((guard) => guard?.stackName)).toEqual([
      'ImageUpload-eu-west-1-EdgeGuard',
      'ImageUpload-us-west-2-EdgeGuard',
    ]);
    expect(guards.map((guard) => guard?.region)).toEqual(['us-east-1', 'us-east-1']);
  });
});

describe('edge settings that AWS would refuse, refused at synth', () => {
  it.each([
    [{ domainName: 'img.example.com' }, /domainName needs hostedZoneId .* or certificateArn/],
    [{ hostedZoneId: DOMAIN.hostedZoneId }, /hostedZoneId and certificateArn need domainName/],
    [{ ...DOMAIN, hostedZoneId: 'example.com' }, /hostedZoneId must be a Route 53 hosted zone id/],
    [{ ...DOMAIN, domainName: 'img_example.com' }, /domainName must be a host name/],
    [{ ...DOMAIN, domainName: 'img.example.c0m' }, /domainName must be a host name/],
    [{ ...DOMAIN, domainName: `${'a'.repeat(60)}.example.com` }, /over 64 characters needs certificateArn/],
    [
      { domainName: DOMAIN.domainName, certificateArn: OWN_CERTIFICATE.replace('us-east-1', 'eu-west-1') },
      /certificateArn must be the ARN of an ACM certificate in us-east-1/,
    ],
    [{ edgeFirewallRateLimit: '500' }, /edgeFirewallRateLimit needs edgeFirewall=true/],
    [{ edgeFirewall: 'true', edgeFirewallRateLimit: '5' }, /edgeFirewallRateLimit must be a whole number from 10/],
  ])('%j', (context, message) => {
    expect(() => synth(context)).toThrow(message);
  });

  it('asks for a region when a stack in us-east-1 must be made beside a service whose region is not known', () => {
    expect(() => synth(DOMAIN, {})).toThrow(/give the service its region/);
    expect(() => synth({ edgeFirewall: 'true' }, { account: '123456789012' })).toThrow(/give the service its region/);
  });
});
