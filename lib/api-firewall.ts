import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../functions/http/edge-contract';
import { envelopeJson } from '../functions/http/error-envelope';

export interface ApiFirewallProps {
  /**
   * The start of its metric names, which CloudWatch's WAF metrics are named by (`WebACL` and `Rule` dimensions): the
   * stack's name, so that two copies in a region share none.
   */
  metricPrefix: string;
  stage: apigateway.Stage;
  /** The value CloudFront sends in the origin header, and the one it sent before a rotation (the same without one). */
  originSecrets: { current: string; previous: string };
  /** Requests per viewer IP in any 5 minutes before the firewall answers 429; 0: no such rule. */
  ratePerFiveMinutes: number;
}

/** The window of WAF's rate-based rule, in seconds. */
const RATE_WINDOW_SECONDS = 300;

export const visibilityOf = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  metricName,
  sampledRequestsEnabled: false,
});

/**
 * The bodies a firewall answers with, in the API's envelope (`docs/api.md`, section 6): a web ACL's
 * `customResponseBodies`. A client such as ShareX shows an HTML page or a challenge as an unreadable error: every
 * refusal of a firewall of the stack is one of these.
 */
export const FIREWALL_BODIES: Record<string, wafv2.CfnWebACL.CustomResponseBodyProperty> = {
  tooManyRequests: { contentType: 'APPLICATION_JSON', content: envelopeJson(429, 130, 'Too many requests, try again later') },
  forbidden: { contentType: 'APPLICATION_JSON', content: envelopeJson(403, 403, 'Forbidden') },
};

/** A refusal of a firewall: 403 in the envelope (`FIREWALL_BODIES`). */
export const FORBIDDEN_ACTION: wafv2.CfnWebACL.RuleActionProperty = {
  block: { customResponse: { responseCode: 403, customResponseBodyKey: 'forbidden' } },
};

/**
 * A rule that answers 429 (`Retry-After: 300`, the envelope of FIREWALL_BODIES) to a viewer past `limit`
 * requests in any 5 minutes, the viewer told apart by `key`; the first rule of its web ACL.
 */
export function ratePerViewerRule(
  limit: number,
  visibilityConfig: wafv2.CfnWebACL.VisibilityConfigProperty,
  key: Omit<wafv2.CfnWebACL.RateBasedStatementProperty, 'limit' | 'evaluationWindowSec'>,
): wafv2.CfnWebACL.RuleProperty {
  return {
    name: 'RatePerViewer',
    priority: 0,
    action: {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: 'tooManyRequests',
          responseHeaders: [{ name: 'retry-after', value: String(RATE_WINDOW_SECONDS) }],
        },
      },
    },
    statement: { rateBasedStatement: { limit, evaluationWindowSec: RATE_WINDOW_SECONDS, ...key } },
    visibilityConfig,
  };
}

/**
 * A regional WAF web ACL on the API's stage: only requests that carry the distribution's origin secret reach the
 * function (a direct call to the execute-api address gets 403 from WAF, which is evaluated before anything of API
 * Gateway's), and, as a first line before the function's flood limits, one viewer IP gets at most
 * `ratePerFiveMinutes` requests through in any 5 minutes (429). Refusals answer in the contract's envelope.
 */
export class ApiFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  /** The CloudWatch metric dimensions of its rate rule's blocks. */
  readonly rateMetric: { WebACL: string; Rule: string } | undefined;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    const carries = (secret: string): wafv2.CfnWebACL.StatementProperty => ({
      byteMatchStatement: {
        fieldToMatch: { singleHeader: { Name: ORIGIN_VERIFY_HEADER } },
        positionalConstraint: 'EXACTLY',
        searchString: secret,
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    });
    // either secret: while a rotation's deploy reaches CloudFront's edges, some send the old one and some the new
    const fromDistribution: wafv2.CfnWebACL.StatementProperty = {
      orStatement: { statements: [carries(props.originSecrets.current), carries(props.originSecrets.previous)] },
    };
    const rules: wafv2.CfnWebACL.RuleProperty[] = [];
    const visibility = (name: string) => visibilityOf(`${props.metricPrefix}-${name}`);
    if (props.ratePerFiveMinutes > 0) {
      rules.push(
        ratePerViewerRule(props.ratePerFiveMinutes, visibility('RatePerViewer'), {
          // the viewer's IP as the distribution's viewer-request function wrote it; counted only for requests that
          // came through the distribution (the others are refused anyway)
          aggregateKeyType: 'FORWARDED_IP',
          forwardedIpConfig: { headerName: VIEWER_ADDRESS_HEADER, fallbackBehavior: 'NO_MATCH' },
          scopeDownStatement: fromDistribution,
        }),
      );
    }
    rules.push({
      name: 'FromTheDistribution',
      priority: 1,
      action: { allow: {} },
      statement: fromDistribution,
      visibilityConfig: visibility('FromTheDistribution'),
    });
    this.rateMetric =
      props.ratePerFiveMinutes > 0
        ? { WebACL: `${props.metricPrefix}-ApiFirewall`, Rule: `${props.metricPrefix}-RatePerViewer` }
        : undefined;
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: 'Only requests through the distribution reach the API, with a rate limit per viewer IP',
      defaultAction: FORBIDDEN_ACTION,
      customResponseBodies: FIREWALL_BODIES,
      rules,
      visibilityConfig: visibility('ApiFirewall'),
    });
    new wafv2.CfnWebACLAssociation(this, 'OnStage', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
