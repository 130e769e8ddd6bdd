import {
  AttachRolePolicyCommand,
  CreateAccessKeyCommand,
  CreateRoleCommand,
  CreateUserCommand,
  IAMClient,
  PutRolePolicyCommand,
  PutUserPolicyCommand,
} from '@aws-sdk/client-iam';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';

/** moto's account: every ARN the twin resolves is in it. */
export const TWIN_ACCOUNT = '123456789012';
export const TWIN_REGION = 'us-east-1';

export type Resource = { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> };
export type TemplateJson = { Resources: Record<string, Resource> };

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface PolicyDocument {
  Version?: string;
  Statement: Array<{ Effect: string; Action: string | string[]; Resource: unknown }>;
}

const PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': TWIN_REGION,
  'AWS::AccountId': TWIN_ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
};

/**
 * A CloudFormation value of the template, with `Ref` and `Fn::GetAtt` taken from the twin's own resources (`physical`,
 * by logical id or `LogicalId.Attribute`) and the pseudo parameters of moto's account; arrays and objects resolved
 * whole. A reference the twin does not know throws: a policy is never resolved only in part.
 */
export function resolveValue(value: unknown, physical: Record<string, string>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, physical));
  const token = value as Record<string, unknown>;
  const ref = token['Ref'];
  if (typeof ref === 'string') {
    const found = physical[ref] ?? PSEUDO[ref];
    if (found !== undefined) return found;
  }
  const getAtt = token['Fn::GetAtt'] as [string, string] | undefined;
  if (getAtt) {
    const found = physical[getAtt.join('.')];
    if (found !== undefined) return found;
  }
  const join = token['Fn::Join'] as [string, unknown[]] | undefined;
  if (join) return join[1].map((part) => resolveString(part, physical)).join(join[0]);
  if (ref !== undefined || getAtt !== undefined || Object.keys(token).some((key) => key.startsWith('Fn::')))
    throw new Error(`the twin does not know ${JSON.stringify(value)}`);
  return Object.fromEntries(Object.entries(token).map(([key, item]) => [key, resolveValue(item, physical)]));
}

export function resolveString(value: unknown, physical: Record<string, string>): string {
  const resolved = resolveValue(value, physical);
  if (typeof resolved !== 'string') throw new Error(`not a string: ${JSON.stringify(value)}`);
  return resolved;
}

/** The logical id of the role a function of the template runs as. */
export function roleOf(template: TemplateJson, functionLogicalId: string): string {
  const role = template.Resources[functionLogicalId]?.Properties['Role'] as { 'Fn::GetAtt'?: [string, string] } | undefined;
  const roleId = role?.['Fn::GetAtt']?.[0];
  if (!roleId) throw new Error(`no role for ${functionLogicalId}`);
  return roleId;
}

/** The identity policies the template gives a role, each resolved: its own policies and those naming it. */
export function policiesOf(
  template: TemplateJson,
  roleLogicalId: string,
  physical: Record<string, string>,
): { inline: Record<string, PolicyDocument>; managed: string[] } {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleLogicalId} is not a role`);
  const inline: Record<string, PolicyDocument> = {};
  for (const policy of (role.Properties['Policies'] as Array<{ PolicyName: string; PolicyDocument: unknown }>) ?? [])
    inline[policy.PolicyName] = resolveValue(policy.PolicyDocument, physical) as PolicyDocument;
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = (resource.Properties['Roles'] as Array<{ Ref?: string }>) ?? [];
    if (roles.some((ref) => ref.Ref === roleLogicalId))
      inline[id] = resolveValue(resource.Properties['PolicyDocument'], physical) as PolicyDocument;
  }
  const managed = ((role.Properties['ManagedPolicyArns'] as unknown[]) ?? []).map((arn) => resolveString(arn, physical));
  return { inline, managed };
}

/**
 * IAM in moto, set up before it is enforced: an operator with every right (the tests' own reads and the admin CLI),
 * and a role per function with exactly the policies given, whose session credentials the function runs with, as
 * Lambda gives a function its execution role's.
 */
export class TwinIam {
  private readonly iam: IAMClient;
  private readonly sts: STSClient;

  constructor(private readonly endpoint: string) {
    const unsigned = { region: TWIN_REGION, endpoint, credentials: { accessKeyId: 'setup', secretAccessKey: 'setup' } };
    this.iam = new IAMClient(unsigned);
    this.sts = new STSClient(unsigned);
  }

  async operator(): Promise<Credentials> {
    await this.iam.send(new CreateUserCommand({ UserName: 'operator' }));
    const everything: PolicyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] };
    await this.iam.send(
      new PutUserPolicyCommand({ UserName: 'operator', PolicyName: 'everything', PolicyDocument: JSON.stringify(everything) }),
    );
    const key = (await this.iam.send(new CreateAccessKeyCommand({ UserName: 'operator' }))).AccessKey;
    return { accessKeyId: key?.AccessKeyId ?? '', secretAccessKey: key?.SecretAccessKey ?? '' };
  }

  /** A role of these policies, and a session of it. */
  async session(roleName: string, policies: { inline: Record<string, PolicyDocument>; managed: string[] }): Promise<Credentials> {
    const trust = {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
    };
    const role = await this.iam.send(
      new CreateRoleCommand({ RoleName: roleName.slice(0, 64), AssumeRolePolicyDocument: JSON.stringify(trust) }),
    );
    for (const [name, document] of Object.entries(policies.inline))
      await this.iam.send(
        new PutRolePolicyCommand({ RoleName: role.Role?.RoleName, PolicyName: name, PolicyDocument: JSON.stringify(document) }),
      );
    for (const arn of policies.managed)
      await this.iam.send(new AttachRolePolicyCommand({ RoleName: role.Role?.RoleName, PolicyArn: arn }));
    const assumed = await this.sts.send(
      new AssumeRoleCommand({ RoleArn: role.Role?.Arn, RoleSessionName: roleName.slice(0, 64) }),
    );
    const credentials = assumed.Credentials;
    return {
      accessKeyId: credentials?.AccessKeyId ?? '',
      secretAccessKey: credentials?.SecretAccessKey ?? '',
      sessionToken: credentials?.SessionToken ?? '',
    };
  }

  destroy(): void {
    this.iam.destroy();
    this.sts.destroy();
  }
}

/** A copy of the policies without one action (the statements that then grant nothing left out). */
export function withoutAction(
  policies: { inline: Record<string, PolicyDocument>; managed: string[] },
  action: string,
): { inline: Record<string, PolicyDocument>; managed: string[] } {
  let dropped = false;
  const inline = Object.fromEntries(
    Object.entries(policies.inline).map(([name, document]) => {
      const Statement = document.Statement.flatMap((statement) => {
        const actions = ([] as string[]).concat(statement.Action);
        const kept = actions.filter((one) => one !== action);
        if (kept.length !== actions.length) dropped = true;
        return kept.length === 0 ? [] : [{ ...statement, Action: kept }];
      });
      return [name, { ...document, Statement }];
    }),
  );
  for (const [name, document] of Object.entries(inline)) if (document.Statement.length === 0) delete inline[name];
  if (!dropped) throw new Error(`no policy grants ${action}`);
  return { inline, managed: policies.managed };
}
