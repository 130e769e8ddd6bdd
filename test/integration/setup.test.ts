import { GetParameterCommand, PutParameterCommand } from '@aws-sdk/client-ssm';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { sha256Hex } from '../../functions/core/hashes';
import { handler } from '../../functions/setup/handler';
import { localClients } from '../../local/provision';
import { standInEndpoints } from '../support/test-service';

function event(
  type: 'Create' | 'Update' | 'Delete',
  prefix: string,
  properties: Record<string, string> = {},
  old: Record<string, string> = {},
): CloudFormationCustomResourceEvent {
  return {
    RequestType: type,
    ServiceToken: 'token',
    ResponseURL: 'https://example.invalid',
    StackId: 'stack',
    RequestId: 'request',
    LogicalResourceId: 'Setup',
    ResourceType: 'Custom::Setup',
    ResourceProperties: { ServiceToken: 'token', ParameterPrefix: prefix, ...properties },
    ...(type === 'Create'
      ? {}
      : { PhysicalResourceId: `${prefix}/setup`, OldResourceProperties: { ParameterPrefix: prefix, ...old } }),
  } as CloudFormationCustomResourceEvent;
}

describe('the stack setup step (custom resource), against the SSM stand-in', () => {
  const { ssm } = localClients(standInEndpoints());
  const read = async (name: string): Promise<{ value: string | undefined; type: string | undefined }> => {
    const parameter = (await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter;
    return { value: parameter?.Value, type: parameter?.Type };
  };

  it('creates the key, the id salt and the origin secret as random SecureStrings, returning only the origin secret, with NoEcho', async () => {
    const prefix = `/setup-${Date.now()}`;
    const result = await handler(event('Create', prefix));
    const key = await read(`${prefix}/api-key`);
    const salt = await read(`${prefix}/id-salt`);
    const origin = await read(`${prefix}/origin-secret`);
    expect([key.type, salt.type, origin.type]).toEqual(['SecureString', 'SecureString', 'SecureString']);
    expect(key.value).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(salt.value).toMatch(/^[0-9a-f]{64}$/);
    const secret = origin.value ?? '';
    expect(result).toEqual({
      PhysicalResourceId: `${prefix}/setup`,
      Data: { OriginSecret: secret, PreviousOriginSecret: secret, OriginSecretSha256: sha256Hex(secret) },
      NoEcho: true,
    });
    expect(JSON.stringify(result)).not.toContain(String(key.value));
  });

  it('creates the flood limits with the defaults, as a plain String the operator edits in the console', async () => {
    const prefix = `/setup-flood-${Date.now()}`;
    await handler(event('Create', prefix));
    expect(await read(`${prefix}/flood-limits`)).toEqual({
      value: JSON.stringify({ minute: 50, hour: 500, day: 1000, week: 5000, month: 10000 }),
      type: 'String',
    });
  });

  it('never overwrites: a rotated key and edited flood limits survive a deploy, and delete leaves everything', async () => {
    const prefix = `/setup-keep-${Date.now()}`;
    await handler(event('Create', prefix));
    const salt = await read(`${prefix}/id-salt`);
    await ssm.send(
      new PutParameterCommand({ Name: `${prefix}/api-key`, Value: 'rotated-by-operator', Type: 'SecureString', Overwrite: true }),
    );
    const edited = JSON.stringify({ minute: 3, hour: 0, day: 0, week: 0, month: 0 });
    await ssm.send(new PutParameterCommand({ Name: `${prefix}/flood-limits`, Value: edited, Type: 'String', Overwrite: true }));
    await handler(event('Update', prefix));
    expect((await read(`${prefix}/api-key`)).value).toBe('rotated-by-operator');
    expect((await read(`${prefix}/flood-limits`)).value).toBe(edited);
    expect(await read(`${prefix}/id-salt`)).toEqual(salt);
    await handler(event('Delete', prefix));
    expect((await read(`${prefix}/api-key`)).value).toBe('rotated-by-operator');
    expect((await read(`${prefix}/flood-limits`)).value).toBe(edited);
  });

  it('rotates the origin secret for a word not used before: both accepted until the settle step drops the old', async () => {
    const prefix = `/setup-rotate-${Date.now()}`;
    await handler(event('Create', prefix));
    const first = (await read(`${prefix}/origin-secret`)).value ?? '';
    // a deploy without a rotation rotates nothing
    await handler(event('Update', prefix, {}, {}));
    expect((await read(`${prefix}/origin-secret`)).value).toBe(first);

    const rotated = await handler(event('Update', prefix, { OriginSecretRotation: '2026-11' }, {}));
    const [next, old] = ((await read(`${prefix}/origin-secret`)).value ?? '').split('\n');
    expect([old, next === first, next]).toEqual([first, false, expect.stringMatching(/^[0-9a-f]{64}$/)]);
    expect(rotated.Data).toEqual({ OriginSecret: next, PreviousOriginSecret: first, OriginSecretSha256: sha256Hex(next ?? '') });
    // the same word again (a later deploy with the same context) changes nothing
    const again = await handler(
      event('Update', prefix, { OriginSecretRotation: '2026-11' }, { OriginSecretRotation: '2026-11' }),
    );
    expect(again.Data).toEqual(rotated.Data);

    const settle = { SettleOriginSecret: 'true', OriginSecretRotation: '2026-11' };
    expect(await handler(event('Update', prefix, settle, { SettleOriginSecret: 'true' }))).toEqual({
      PhysicalResourceId: `${prefix}/origin-secret-settled`,
    });
    expect((await read(`${prefix}/origin-secret`)).value).toBe(next);
    // settled, the next deploy gives CloudFront the new secret as both
    const after = await handler(event('Update', prefix, {}, { OriginSecretRotation: '2026-11' }));
    expect(after.Data).toMatchObject({ OriginSecret: next, PreviousOriginSecret: next });
    await handler(event('Delete', prefix, settle));
    expect((await read(`${prefix}/origin-secret`)).value).toBe(next);
    // its record is its own: a SecureString no function reads
    expect((await read(`${prefix}/origin-secret-deployed`)).type).toBe('SecureString');
  });

  it('rotates from the secret CloudFront was given, whatever a hand edit wrote, and never again for a rollback', async () => {
    const prefix = `/setup-edited-${Date.now()}`;
    const created = await handler(event('Create', prefix));
    const deployed = created.Data?.OriginSecret ?? '';
    await ssm.send(
      new PutParameterCommand({
        Name: `${prefix}/origin-secret`,
        Value: 'edited-by-hand',
        Type: 'SecureString',
        Overwrite: true,
      }),
    );
    // a plain deploy keeps handing CloudFront the deployed secret; the firewall takes the edited value too
    const plain = await handler(event('Update', prefix, {}, {}));
    expect(plain.Data).toMatchObject({ OriginSecret: deployed, PreviousOriginSecret: 'edited-by-hand' });
    const rotated = await handler(event('Update', prefix, { OriginSecretRotation: 'first' }, {}));
    expect(rotated.Data?.PreviousOriginSecret).toBe(deployed);
    expect((await read(`${prefix}/origin-secret`)).value).toBe(`${rotated.Data?.OriginSecret}\n${deployed}`);
    // the deploy fails and rolls back: CloudFormation sends the old properties, and then the new ones again
    const rolledBack = await handler(event('Update', prefix, {}, { OriginSecretRotation: 'first' }));
    expect(rolledBack.Data).toMatchObject({ OriginSecret: deployed, PreviousOriginSecret: rotated.Data?.OriginSecret });
    const retried = await handler(event('Update', prefix, { OriginSecretRotation: 'first' }, {}));
    expect(retried.Data?.OriginSecret).toBe(deployed);
    // a word used before, after another, rotates nothing either
    await handler(event('Update', prefix, { OriginSecretRotation: 'second' }, { OriginSecretRotation: 'first' }));
    const back = await handler(event('Update', prefix, { OriginSecretRotation: 'first' }, { OriginSecretRotation: 'second' }));
    expect(back.Data?.OriginSecret).not.toBe(undefined);
    expect((await read(`${prefix}/origin-secret`)).value?.split('\n')).toHaveLength(2);
  });
});
