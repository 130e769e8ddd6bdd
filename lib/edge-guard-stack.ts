import { Stack, type StackProps } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { FIREWALL_BODIES, FORBIDDEN_ACTION, ratePerViewerRule, visibilityOf } from './api-firewall';

/** The rules of AWS's IP reputation list that block (`docs/deployment.md`, "The edge firewall"). */
const IP_REPUTATION_BLOCKS = ['AWSManagedIPReputationList', 'AWSManagedReconnaissanceList'];

/** CloudFront's own region: the only one whose certificates and CLOUDFRONT-scope web ACLs a distribution takes. */
export const CLOUDFRONT_REGION = 'us-east-1';

export interface EdgeGuardProps extends StackProps {
  /** The start of the web ACL's metric names: the service stack's name and region, so that two copies share none. */
  metricPrefix: string;
  /** A certificate to make for this domain, validated by DNS in this hosted zone. */
  certificateFor?: { domainName: string; hostedZoneId: string };
  /** Requests per viewer IP in any 5 minutes of a web ACL on the distribution; undefined: no web ACL. */
  firewallRateLimit?: number;
}

/**
 * What a distribution needs from us-east-1 whatever the service's region (`docs/deployment.md`, "A custom domain" and
 * "The edge firewall"): the custom domain's certificate, and a CLOUDFRONT-scope WAF web ACL, a rate per viewer IP and
 * AWS's IP reputation list. The service stack reads both through CDK's cross-region references.
 */
export class EdgeGuardStack extends Stack {
  readonly certificate: acm.ICertificate | undefined;
  /** The web ACL's ARN, which a distribution names as its `webAclId`. */
  readonly webAclArn: string | undefined;
  /** The CloudWatch metric dimensions of the web ACL's rate rule (its metrics are in us-east-1). */
  readonly rateMetric: { WebACL: string; Rule: string } | undefined;

  constructor(scope: Construct, id: string, props: EdgeGuardProps) {
    super(scope, id, { ...props, crossRegionReferences: true });
    if (props.certificateFor) {
      const { domainName, hostedZoneId } = props.certificateFor;
      this.certificate = new acm.Certificate(this, 'Certificate', {
        domainName,
        // ACM writes its validation record in the zone, and renews the certificate by it as long as it stays
        validation: acm.CertificateValidation.fromDns(route53.HostedZone.fromHostedZoneId(this, 'Zone', hostedZoneId)),
      });
    }
    if (props.firewallRateLimit !== undefined) {
      const metric = (name: string): string => `${props.metricPrefix}-${name}`;
      const webAcl = new wafv2.CfnWebACL(this, 'EdgeFirewall', {
        scope: 'CLOUDFRONT',
        description: 'A rate per viewer IP on every path of the distribution, images included, and AWS IP reputation',
        defaultAction: { allow: {} },
        customResponseBodies: FIREWALL_BODIES,
        rules: [
          // CloudFront hands WAF the viewer's own address: no header to trust
          ratePerViewerRule(props.firewallRateLimit, visibilityOf(metric('EdgeRatePerViewer')), { aggregateKeyType: 'IP' }),
          {
            name: 'IpReputation',
            priority: 1,
            overrideAction: { none: {} },
            statement: {
              managedRuleGroupStatement: {
                vendorName: 'AWS',
                name: 'AWSManagedRulesAmazonIpReputationList',
                // the list's blocking rules answer in the API's envelope, not CloudFront's HTML error page (its DDoS
                // list only counts, and is left as it is)
                ruleActionOverrides: IP_REPUTATION_BLOCKS.map((name) => ({ name, actionToUse: FORBIDDEN_ACTION })),
              },
            },
            visibilityConfig: visibilityOf(metric('EdgeIpReputation')),
          },
        ],
        visibilityConfig: visibilityOf(metric('EdgeFirewall')),
      });
      this.webAclArn = webAcl.attrArn;
      this.rateMetric = { WebACL: metric('EdgeFirewall'), Rule: metric('EdgeRatePerViewer') };
    }
  }
}
