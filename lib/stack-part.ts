import { RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';

/** How long every log group of the stack keeps its lines. */
export const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/**
 * A part of the stack (the storage, the setup step, the functions, the gateway, the edge): a construct with its own
 * props and grants, as CDK's L2s are, that makes its resources in the stack's own scope (`scope`), with construct ids
 * unique in the stack: their paths, and so their logical ids, are those they had before the stack had parts, by CDK's
 * own naming, and a deployed stack updates in place (`test/infra/logical-ids.test.ts` holds every id to those).
 */
export abstract class StackPart extends Construct {
  /** Where the part makes its resources: the stack itself. */
  protected readonly scope: Stack;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.scope = Stack.of(this);
  }

  /** A log group of the part: kept a month, removed with the stack. */
  protected logGroup(id: string, logGroupName?: string): logs.LogGroup {
    return logGroupIn(this.scope, id, logGroupName);
  }

  /** The ARN of an SSM parameter of the stack's account and region. */
  protected parameterArn(name: string): string {
    return parameterArnOf(this, name);
  }

  /** The logical id CloudFormation knows a construct's resource by (cdk-nag names findings with it). */
  protected logicalIdOf(construct: IConstruct): string {
    return this.scope.getLogicalId(construct.node.defaultChild as CfnElement);
  }
}

/** A log group in a scope: kept a month, removed with the stack. */
export function logGroupIn(scope: Construct, id: string, logGroupName?: string): logs.LogGroup {
  return new logs.LogGroup(scope, id, {
    retention: LOG_RETENTION,
    removalPolicy: RemovalPolicy.DESTROY,
    ...(logGroupName === undefined ? {} : { logGroupName }),
  });
}

/** The ARN of an SSM parameter of a scope's account and region. */
export function parameterArnOf(scope: IConstruct, name: string): string {
  return Stack.of(scope).formatArn({ service: 'ssm', resource: 'parameter', resourceName: name.replace(/^\//, '') });
}
