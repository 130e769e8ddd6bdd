import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { ERROR_STATUS, envelopeJson } from '../functions/http/error-envelope';
import { BINARY_MEDIA_TYPES, maxBodyBytes, requestTooLargeMessage } from '../functions/http/edge-contract';
import { ApiFirewall } from './api-firewall';
import type { Construct } from 'constructs';
import { acknowledge, acknowledgeServerless, NO_TRACING } from './nag-suppressions';
import type { DeploymentSettings } from './settings';
import { StackPart } from './stack-part';

const STAGE = 'v1';

/**
 * One JSON line per request. The resource path, never the path: paths hold delete tokens. `errorType` is the
 * gateway's own error, if any (THROTTLED feeds the throttle alarm).
 */
const ACCESS_LOG_FORMAT = apigateway.AccessLogFormat.custom(
  JSON.stringify({
    requestId: apigateway.AccessLogField.contextRequestId(),
    ip: apigateway.AccessLogField.contextIdentitySourceIp(),
    requestTime: apigateway.AccessLogField.contextRequestTime(),
    httpMethod: apigateway.AccessLogField.contextHttpMethod(),
    resourcePath: apigateway.AccessLogField.contextResourcePath(),
    status: apigateway.AccessLogField.contextStatus(),
    protocol: apigateway.AccessLogField.contextProtocol(),
    responseLength: apigateway.AccessLogField.contextResponseLength(),
    errorType: apigateway.AccessLogField.contextErrorResponseType(),
    integrationLatency: apigateway.AccessLogField.contextIntegrationLatency(),
  }),
);

const UNAVAILABLE = 'Service unavailable, try again';

/**
 * What the gateway answers without the function, in the contract's envelope and with the function's codes
 * (`ERROR_STATUS`): its status where it has its own, the code of the error kind it stands for.
 */
const GATEWAY_RESPONSES: Array<{
  type: apigateway.ResponseType;
  status?: number;
  kind: keyof typeof ERROR_STATUS;
  message: string;
}> = [
  // past API Gateway's own 10 MB, if it takes a gateway response there (most requests that large are answered at the
  // edge by the viewer-request function, with the same message)
  {
    type: apigateway.ResponseType.REQUEST_TOO_LARGE,
    kind: 'FileTooBig',
    message: requestTooLargeMessage(maxBodyBytes(BINARY_MEDIA_TYPES[0])),
  },
  // the stage's throttle, and the account's: a 429 the client may retry after a second
  { type: apigateway.ResponseType.THROTTLED, kind: 'Flooding', message: 'Too many requests, try again' },
  // Lambda refused to run the function (throttled past its concurrency), or could not be reached
  { type: apigateway.ResponseType.INTEGRATION_FAILURE, kind: 'DependencyFailed', message: UNAVAILABLE },
  { type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, kind: 'NotFound', message: 'Not found' },
  { type: apigateway.ResponseType.INTEGRATION_TIMEOUT, status: 504, kind: 'DependencyFailed', message: UNAVAILABLE },
  { type: apigateway.ResponseType.DEFAULT_5XX, kind: 'DependencyFailed', message: UNAVAILABLE },
];

export interface GatewayProps {
  settings: DeploymentSettings;
  apiFunction: lambda.IFunction;
  /** The value CloudFront sends in the origin header, and the one it sent before a rotation (the firewall's). */
  originSecrets: { current: string; previous: string };
}

/** API Gateway: one root proxy to the function, throttled, logged, its own answers in the envelope, and the firewall. */
export class Gateway extends StackPart {
  readonly api: apigateway.RestApi;
  readonly accessLogs: logs.LogGroup;

  readonly firewall: ApiFirewall | undefined;

  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id);
    const { settings, apiFunction, originSecrets } = props;
    this.accessLogs = this.logGroup('GatewayAccessLogs');
    this.api = new apigateway.RestApi(this.scope, 'Gateway', {
      // the stack's name: the 5xx alarm counts this API's answers by its name
      restApiName: settings.stackName,
      description: 'Image upload API v1 (reached through CloudFront only)',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      deployOptions: {
        stageName: STAGE,
        throttlingRateLimit: settings.throttleRateLimit,
        throttlingBurstLimit: settings.throttleBurstLimit,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // errors only, and never data traces: those would log request bodies and queries, keys included
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
      // API Gateway logs with one role per account and region (AWS::ApiGateway::Account): setting it replaces the role
      // any other API of the account logs with, and it stays after a destroy (docs/deployment.md)
      cloudWatchRole: settings.gatewayAccountRole,
    });
    // CDK's own output of the stage's URL: the stack names it once, as DirectApiUrl, which docs/deployment.md lists
    this.api.node.tryRemoveChild('Endpoint');
    // API Gateway makes its execution log group itself, on the first error, without a retention; made here first.
    const executionLogs = this.logGroup('GatewayExecutionLogs', `API-Gateway-Execution-Logs_${this.api.restApiId}/${STAGE}`);
    this.api.deploymentStage.node.addDependency(executionLogs);
    this.acknowledgeFindings(settings.firewall);
    this.firewall = settings.firewall
      ? new ApiFirewall(this.scope, 'ApiFirewall', {
          stage: this.api.deploymentStage,
          metricPrefix: settings.stackName,
          originSecrets,
          ratePerFiveMinutes: settings.firewallRateLimit,
        })
      : undefined;
    const integration = new apigateway.LambdaIntegration(apiFunction, { proxy: true });
    // One root proxy: every method and path reaches the function, whose router is the only route table.
    this.api.root.addMethod('ANY', integration);
    this.api.root.addResource('{proxy+}').addMethod('ANY', integration);
    for (const { type, kind, message, ...given } of GATEWAY_RESPONSES) {
      const status = given.status ?? ERROR_STATUS[kind].status;
      this.api.addGatewayResponse(`Gateway${status}${type.responseType}`, {
        type,
        statusCode: String(status),
        templates: { 'application/json': envelopeJson(status, ERROR_STATUS[kind].code, message) },
        responseHeaders: {
          'X-Content-Type-Options': "'nosniff'",
          'Cache-Control': "'no-store'",
          // a throttled or refused request may be sent again a second later
          ...(status === 429 || status === 503 ? { 'Retry-After': "'1'" } : {}),
        },
      });
    }
  }

  private acknowledgeFindings(firewall: boolean): void {
    acknowledge(
      this.api,
      'APIG2',
      "Proxy integration: the function validates every parameter and body (multipart, urlencoded, base64) and answers the contract's errors; a gateway model cannot describe multipart bodies.",
    );
    acknowledge(
      this.api,
      'APIG4',
      "The Chevereto API authenticates with its own key (`key` or `X-API-Key`), checked by the function against SSM; pages are public by design. Requests must also carry the distribution's secret origin header.",
    );
    acknowledge(this.api, 'COG4', 'No user pools: guest uploads with one API key (see APIG4).');
    acknowledgeServerless(this.api, 'APIGWXrayEnabled', NO_TRACING);
    acknowledge(
      this.api,
      'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AmazonAPIGatewayPushToCloudWatchLogs is the policy AWS documents for the account-level role API Gateway logs with.',
    );
    if (!firewall)
      acknowledge(
        this.api,
        'APIG3',
        "The operator turned the firewall off (-c firewall=false): the function still refuses requests without the distribution's origin secret, and enforces flood limits per client IP.",
      );
  }
}
