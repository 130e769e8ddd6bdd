import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Accepts one cdk-nag AwsSolutions rule for a construct and everything in it, with the reason written down. */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });
}

/** Accepts one cdk-nag Serverless rule (the pack run beside AwsSolutions) for a construct, with the reason. */
export function acknowledgeServerless(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `Serverless::Serverless-${rule}`, reason });
}

/** Why no function and no stage traces with X-Ray (`docs/deployment.md`, "Checks"). */
export const NO_TRACING =
  'No X-Ray: the functions measure each store call as a metric and log one line a request (docs/performance.md); traces would cost per request and add a dependency to the cold start.';

/** Acknowledges tracing for functions (and, with `stage`, an API stage). */
export function acknowledgeNoTracing(scopes: readonly IConstruct[]): void {
  for (const scope of scopes) acknowledgeServerless(scope, 'LambdaTracing', NO_TRACING);
}
