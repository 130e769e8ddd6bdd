import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as route53 from 'aws-cdk-lib/aws-route53';
import { CloudFrontTarget } from 'aws-cdk-lib/aws-route53-targets';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { SettingsParameters } from '../functions/adapters/parameter-names';
import { IMAGES_PREFIX } from '../functions/core/image/links';
import { ORIGIN_VERIFY_HEADER, VIEWER_IMAGE_HEADERS } from '../functions/http/edge-contract';
import type { EdgeGuardStack } from './edge-guard-stack';
import type { Construct } from 'constructs';
import { PrefixOrigin } from './images-origin';
import { acknowledge } from './nag-suppressions';
import type { DeploymentSettings } from './settings';
import { StackPart } from './stack-part';
import { viewerRequestCode } from './viewer-request';

/**
 * CloudFront, the one public base URL: `/images/*` from the bucket (origin access control, long edge caching, hours
 * in browsers), everything else to the API with the secret origin header and the viewer-request function; and the
 * two parameters the functions read it by (the public URL, the distribution id).
 */
/** `-c priceClass` as CloudFront names it. */
const PRICE_CLASSES = {
  All: cloudfront.PriceClass.PRICE_CLASS_ALL,
  '200': cloudfront.PriceClass.PRICE_CLASS_200,
  '100': cloudfront.PriceClass.PRICE_CLASS_100,
} as const;

export interface EdgeProps {
  settings: DeploymentSettings;
  api: apigateway.RestApi;
  bucket: s3.IBucket;
  /** The value CloudFront sends in the origin header. */
  originSecret: string;
  names: SettingsParameters;
  /** The certificate and web ACL made in us-east-1, when asked for. */
  guard?: Pick<EdgeGuardStack, 'certificate' | 'webAclArn'>;
}

export class Edge extends StackPart {
  readonly distribution: cloudfront.Distribution;
  readonly baseUrl: string;

  constructor(scope: Construct, id: string, sources: EdgeProps) {
    super(scope, id);
    const { settings } = sources;
    const stack = Stack.of(this);
    // CloudFront's names are the account's, whatever the region: each made of the stack's name and region
    const cloudFrontName = (what: string): string => `${settings.stackName}-${stack.region}-${what}`;
    const { securityHeaders, imageHeaders } = headerPolicies(this.scope, cloudFrontName);
    const apiOrigin = new origins.RestApiOrigin(sources.api, {
      customHeaders: { [ORIGIN_VERIFY_HEADER]: sources.originSecret },
    });
    // Answers requests too large for the function's event, and writes the client's IP for the API (overwriting
    // whatever a client sent in that header). In the stack's own scope: CDK names a CloudFront function after its
    // construct path, and a new name would replace the deployed one.
    const viewerRequest = new cloudfront.Function(stack, 'ViewerAddress', {
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      comment: 'Answers 413 to bodies the API cannot take; writes the viewer IP into the request',
      code: cloudfront.FunctionCode.fromInline(viewerRequestCode()),
    });
    const toApi: cloudfront.BehaviorOptions = {
      origin: apiOrigin,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      // everything the viewer sent but Host: API Gateway routes by its own
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      functionAssociations: [{ function: viewerRequest, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      responseHeadersPolicy: securityHeaders,
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
    };
    const { domain } = settings;
    const certificate = domain?.certificateArn
      ? acm.Certificate.fromCertificateArn(this.scope, 'Certificate', domain.certificateArn)
      : sources.guard?.certificate;
    if (domain && !certificate) throw new Error(`no certificate for ${domain.name}`);
    this.distribution = new cloudfront.Distribution(this.scope, 'Distribution', {
      comment: 'Image upload service',
      defaultBehavior: toApi,
      additionalBehaviors: {
        // uploads are never redirected: plain HTTP is refused rather than turned into a GET
        '/api/*': { ...toApi, viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY },
        [`/${IMAGES_PREFIX}*`]: {
          origin: new PrefixOrigin(sources.bucket, IMAGES_PREFIX, cloudFrontName('images')),
          allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
          responseHeadersPolicy: imageHeaders,
          viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        },
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: PRICE_CLASSES[settings.priceClass],
      ...(domain && certificate
        ? {
            domainNames: [domain.name],
            certificate,
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      ...(sources.guard?.webAclArn === undefined ? {} : { webAclId: sources.guard.webAclArn }),
    });
    if (domain?.hostedZoneId !== undefined) this.pointDomainHere(domain.name, domain.hostedZoneId);
    this.acknowledgeFindings(domain !== undefined, sources.guard?.webAclArn !== undefined);
    this.baseUrl = `https://${domain?.name ?? this.distribution.distributionDomainName}`;
    // Read by the function at cold start: its URL cannot be in its environment (CloudFront depends on the function).
    new ssm.StringParameter(this.scope, 'PublicUrl', { parameterName: sources.names.publicUrl, stringValue: this.baseUrl });
    new ssm.StringParameter(this.scope, 'DistributionIdParameter', {
      parameterName: sources.names.distributionId,
      stringValue: this.distribution.distributionId,
    });
  }

  /** The domain's IPv4 and IPv6 alias records in its hosted zone, to the distribution (alias queries cost nothing). */
  private pointDomainHere(domainName: string, hostedZoneId: string): void {
    const aliasTarget = {
      dnsName: this.distribution.distributionDomainName,
      hostedZoneId: CloudFrontTarget.getHostedZoneId(this),
    };
    for (const [id, type] of [
      ['DomainRecord', 'A'],
      ['DomainRecordIpv6', 'AAAA'],
    ] as const)
      new route53.CfnRecordSet(this.scope, id, { hostedZoneId, name: `${domainName}.`, type, aliasTarget });
  }

  private acknowledgeFindings(ownDomain: boolean, edgeFirewall: boolean): void {
    acknowledge(this.distribution, 'CFR1', "An image host serves everyone; geo restriction is the operator's choice.");
    if (!edgeFirewall)
      acknowledge(this.distribution, 'CFR2', 'The edge firewall is optional (cost): -c edgeFirewall=true (docs/deployment.md).');
    acknowledge(
      this.distribution,
      'CFR3',
      'Viewer logs of every image fetch cost storage; uploads and pages are logged by API Gateway access logs and the function.',
    );
    if (!ownDomain)
      acknowledge(
        this.distribution,
        'CFR4',
        "The default *.cloudfront.net certificate allows TLS 1.0 by CloudFront's rule; a custom domain (-c domainName) enforces TLS 1.2.",
      );
  }
}

/** The security headers of every answer; the files' add a browser lifetime of hours (the edge keeps them a year). */
function headerPolicies(
  scope: Construct,
  nameOf: (what: string) => string,
): {
  securityHeaders: cloudfront.ResponseHeadersPolicy;
  imageHeaders: cloudfront.ResponseHeadersPolicy;
} {
  const security = {
    contentTypeOptions: { override: true },
    strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
    referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: false },
  };
  return {
    securityHeaders: new cloudfront.ResponseHeadersPolicy(scope, 'SecurityHeaders', {
      responseHeadersPolicyName: nameOf('security-headers'),
      securityHeadersBehavior: security,
    }),
    imageHeaders: new cloudfront.ResponseHeadersPolicy(scope, 'ImageHeaders', {
      responseHeadersPolicyName: nameOf('image-headers'),
      securityHeadersBehavior: {
        ...security,
        contentSecurityPolicy: { contentSecurityPolicy: VIEWER_IMAGE_HEADERS['Content-Security-Policy'], override: true },
      },
      customHeadersBehavior: {
        customHeaders: [{ header: 'Cache-Control', value: VIEWER_IMAGE_HEADERS['Cache-Control'], override: true }],
      },
    }),
  };
}
