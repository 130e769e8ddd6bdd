import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Accepts one cdk-nag AwsSolutions rule for a construct and everything in it, with the reason written down. */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });
}
