import { createHash } from 'node:crypto';
import { Names, RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';

/** How long every log group of the stack keeps its lines. */
export const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/**
 * A part of the stack (the storage, the setup step, the functions, the gateway, the edge): a construct with its own
 * props and grants, as CDK's L2s are, whose resources keep the logical ids they had when the parts made them in the
 * stack's own scope, so that a deployed stack updates in place (`logicalIdWithoutParts`, which the stack uses).
 */
export abstract class StackPart extends Construct {
  /** A log group of the part: kept a month, removed with the stack. */
  protected logGroup(id: string, logGroupName?: string): logs.LogGroup {
    return logGroupIn(this, id, logGroupName);
  }

  /** The ARN of an SSM parameter of the stack's account and region. */
  protected parameterArn(name: string): string {
    return parameterArnOf(this, name);
  }

  /** The logical id CloudFormation knows a construct's resource by (cdk-nag names findings with it). */
  protected logicalIdOf(construct: IConstruct): string {
    return Stack.of(this).getLogicalId(construct.node.defaultChild as CfnElement);
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

/**
 * CDK's unique id of a construct path (`makeUniqueId` in aws-cdk-lib: the path's ids without `Default`, less `Resource`
 * and repeats, then 8 hex of the md5 of the path), which logical ids and some generated names are made of.
 */
function uniqueIdOf(ids: readonly string[]): string {
  const path = ids.filter((id) => id !== 'Default');
  const alphanumeric = (id: string): string => id.replace(/[^A-Za-z0-9]/g, '');
  const [only] = path;
  if (path.length === 1 && only !== undefined && alphanumeric(only).length <= 255) return alphanumeric(only);
  const hash = createHash('md5').update(path.join('/')).digest('hex').slice(0, 8).toUpperCase();
  // an id that the one kept before it ends with is left out (`Gateway/Gateway...`)
  const kept: string[] = [];
  for (const id of path) if (kept.length === 0 || !(kept.at(-1) ?? '').endsWith(id)) kept.push(id);
  const human = kept
    .filter((id) => id !== 'Resource')
    .map(alphanumeric)
    .join('')
    .slice(0, 240);
  return human + hash;
}

/** The ids of a construct's path from `from` down, the stack parts left out. */
function pathWithoutParts(construct: IConstruct, from: IConstruct): string[] {
  const scopes = construct.node.scopes;
  return scopes
    .slice(scopes.indexOf(from) + 1)
    .filter((scope) => !(scope instanceof StackPart))
    .map((scope) => scope.node.id);
}

/**
 * The logical id CDK gives an element, with the stack parts left out of its path: the id the element had when it was
 * made in the stack's own scope. Some of CDK's constructs name a child after another construct's unique id (a
 * function's permission for an API, `ApiPermission.StackGatewayABCD1234.ANY..`): that id too is the one without parts.
 * `test/infra/logical-ids.test.ts` holds every id to the ids of before.
 */
export function logicalIdWithoutParts(stack: Stack, element: CfnElement): string {
  const moved = partUniqueIds(stack);
  const path = pathWithoutParts(element, stack).map((id) =>
    moved.reduce((renamed, [withParts, without]) => renamed.split(withParts).join(without), id),
  );
  return uniqueIdOf(path);
}

/** A construct's unique id and the one it would have without the parts, once per construct (a path never changes). */
const movedIds = new WeakMap<IConstruct, [string, string] | undefined>();

function movedIdOf(construct: IConstruct): [string, string] | undefined {
  if (movedIds.has(construct)) return movedIds.get(construct);
  const inPart = construct.node.scopes.some((scope) => scope instanceof StackPart) && !(construct instanceof StackPart);
  const ids: [string, string] | undefined = inPart
    ? [Names.uniqueId(construct), uniqueIdOf(pathWithoutParts(construct, construct.node.root))]
    : undefined;
  const moved = ids && ids[0] !== ids[1] ? ids : undefined;
  movedIds.set(construct, moved);
  return moved;
}

/** Each unique id of a construct in a part, with the one it would have without the parts (where they differ). */
function partUniqueIds(stack: Stack): Array<[string, string]> {
  return stack.node.findAll().flatMap((construct) => {
    const moved = movedIdOf(construct);
    return moved ? [moved] : [];
  });
}

/**
 * What `Names.uniqueId` answers for the construct `ids` would be under `scope` were the parts left out (the path from
 * the app down): for a name CDK generates from a path, kept as it was before the parts (a distribution's origin ids).
 */
export function uniqueIdWithoutParts(scope: IConstruct, ...ids: string[]): string {
  return uniqueIdOf([...pathWithoutParts(scope, scope.node.root), ...ids]);
}
