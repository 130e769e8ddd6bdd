import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { parameterNames } from '../../functions/adapters/parameter-names';
import { SsmSettingsStore } from '../../functions/adapters/ssm-settings-store';
import { localClients, provision } from '../../local/provision';
import { STAND_IN_REGION } from '../../local/stand-ins';
import { standInEndpoints } from '../support/test-service';

/** An SSM client on the stand-in that records the name of every command it sends. */
function countingClient(): { client: SSMClient; calls: string[]; names: string[][] } {
  const calls: string[] = [];
  const names: string[][] = [];
  const client = new SSMClient({
    // the stand-ins' credentials, from the standard variables the global setup wrote
    region: STAND_IN_REGION,
    endpoint: standInEndpoints().ssm,
  });
  client.middlewareStack.add(
    (next, context) => (args) => {
      calls.push(String(context.commandName));
      names.push([...((args.input as { Names?: string[] }).Names ?? [])]);
      return next(args);
    },
    { step: 'initialize' },
  );
  return { client, calls, names };
}

describe('the settings in SSM', () => {
  const prefix = `/settings-${Date.now()}`;
  const names = parameterNames(prefix);

  beforeAll(async () => {
    const endpoints = standInEndpoints();
    await provision({ endpoints, bucket: `settings-${Date.now()}`, table: `settings-${Date.now()}`, parameterPrefix: prefix });
    const { ssm } = localClients(endpoints);
    await ssm.send(new PutParameterCommand({ Name: names.publicUrl, Value: 'https://img.example', Type: 'String' }));
    // during a rotation: the new secret, then the one CloudFront sent before (a blank line and spaces left out)
    await ssm.send(
      new PutParameterCommand({ Name: names.originSecret, Value: ' new-secret \n\nold-secret\n', Type: 'SecureString' }),
    );
  });

  it('reads every parameter in one GetParameters call, then serves them from the cache until it is old', async () => {
    const { client, calls } = countingClient();
    const store = new SsmSettingsStore(client, names, 30);
    // what a cold start asks for, partly at once
    const [key, salt] = await Promise.all([store.apiKey(), store.idSalt(), store.floodLimits()]);
    expect(await store.publicUrl()).toBe('https://img.example');
    expect(await store.originSecrets()).toEqual(['new-secret', 'old-secret']);
    expect(await store.distributionId()).toBeUndefined(); // missing: no error, no second call
    expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(salt).toMatch(/^[0-9a-f]{64}$/);
    expect(calls).toEqual(['GetParametersCommand']);
  });

  it('reads all again once the cache is older than its age, and on every use when the age is 0', async () => {
    let nowMs = 1_000_000;
    const aging = countingClient();
    const store = new SsmSettingsStore(aging.client, names, 30, () => nowMs);
    await store.apiKey();
    nowMs += 29_999;
    await store.floodLimits();
    expect(aging.calls).toHaveLength(1);
    nowMs += 1;
    await store.floodLimits();
    expect(aging.calls).toHaveLength(2);

    const uncached = countingClient();
    const always = new SsmSettingsStore(uncached.client, names, 0);
    await always.apiKey();
    await always.apiKey();
    expect(uncached.calls).toEqual(['GetParametersCommand', 'GetParametersCommand']);
  });

  it('reads only the parameters it is given (the sweep: the distribution id), and nothing else reads as set', async () => {
    const only = countingClient();
    const store = new SsmSettingsStore(only.client, { distributionId: names.distributionId }, 30);
    expect(await store.distributionId()).toBeUndefined();
    expect(await store.apiKey()).toBeUndefined();
    await expect(store.idSalt()).rejects.toThrow(/not read here/);
    expect(only.names).toEqual([[names.distributionId]]);
  });
});
