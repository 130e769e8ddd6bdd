import {
  DeleteParameterCommand,
  GetParameterCommand,
  GetParametersByPathCommand,
  GetParametersCommand,
  ParameterAlreadyExists,
  ParameterNotFound,
  PutParameterCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSsmServer, type SsmServer } from '../../local/ssm-server';
/** The access key id this suite's server takes (its own: it runs without a signature gate). */
const ACCESS_KEY_ID = 'SSM-SERVER-TEST';

function client(url: string, accessKeyId: string = ACCESS_KEY_ID): SSMClient {
  return new SSMClient({ region: 'us-east-1', endpoint: url, credentials: { accessKeyId, secretAccessKey: 'x' } });
}

describe('the SSM Parameter Store stand-in, through the real SDK', () => {
  let server: SsmServer;
  let dir: string;
  let ssm: SSMClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ssm-'));
    server = await startSsmServer({ accessKeyId: ACCESS_KEY_ID, file: join(dir, 'parameters.json') });
    ssm = client(server.url);
  });

  afterAll(async () => {
    ssm.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts, refuses to put again without Overwrite, overwrites with a new version and reads versions', async () => {
    expect((await ssm.send(new PutParameterCommand({ Name: '/app/a', Value: 'one', Type: 'String' }))).Version).toBe(1);
    await expect(ssm.send(new PutParameterCommand({ Name: '/app/a', Value: 'two', Type: 'String' }))).rejects.toBeInstanceOf(
      ParameterAlreadyExists,
    );
    expect((await ssm.send(new PutParameterCommand({ Name: '/app/a', Value: 'two', Overwrite: true }))).Version).toBe(2);
    const latest = await ssm.send(new GetParameterCommand({ Name: '/app/a' }));
    expect(latest.Parameter).toMatchObject({ Name: '/app/a', Value: 'two', Version: 2, Type: 'String' });
    expect(latest.Parameter?.LastModifiedDate).toBeInstanceOf(Date);
    expect((await ssm.send(new GetParameterCommand({ Name: '/app/a:1' }))).Parameter?.Value).toBe('one');
  });

  it('hides a SecureString value unless decryption is asked for', async () => {
    await ssm.send(new PutParameterCommand({ Name: '/app/secret', Value: 's3cr3t', Type: 'SecureString' }));
    expect((await ssm.send(new GetParameterCommand({ Name: '/app/secret' }))).Parameter?.Value).not.toBe('s3cr3t');
    expect((await ssm.send(new GetParameterCommand({ Name: '/app/secret', WithDecryption: true }))).Parameter?.Value).toBe(
      's3cr3t',
    );
  });

  it('answers ParameterNotFound, lists invalid names, reads by path and deletes', async () => {
    await expect(ssm.send(new GetParameterCommand({ Name: '/app/none' }))).rejects.toBeInstanceOf(ParameterNotFound);
    const many = await ssm.send(new GetParametersCommand({ Names: ['/app/a', '/app/none'] }));
    expect(many.Parameters?.map((parameter) => parameter.Name)).toEqual(['/app/a']);
    expect(many.InvalidParameters).toEqual(['/app/none']);
    await ssm.send(new PutParameterCommand({ Name: '/app/deep/b', Value: 'b', Type: 'String' }));
    const shallow = await ssm.send(new GetParametersByPathCommand({ Path: '/app' }));
    expect(shallow.Parameters?.map((parameter) => parameter.Name)).toEqual(['/app/a', '/app/secret']);
    const deep = await ssm.send(new GetParametersByPathCommand({ Path: '/app/', Recursive: true }));
    expect(deep.Parameters?.map((parameter) => parameter.Name)).toContain('/app/deep/b');
    await ssm.send(new DeleteParameterCommand({ Name: '/app/deep/b' }));
    await expect(ssm.send(new DeleteParameterCommand({ Name: '/app/deep/b' }))).rejects.toBeInstanceOf(ParameterNotFound);
  });

  it('refuses credentials it does not know', async () => {
    const stranger = client(server.url, 'AKIASTRANGER');
    await expect(stranger.send(new GetParameterCommand({ Name: '/app/a' }))).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
    });
    stranger.destroy();
  });

  it('keeps its parameters in its file across a restart', async () => {
    const again = await startSsmServer({ accessKeyId: ACCESS_KEY_ID, file: join(dir, 'parameters.json') });
    const reader = client(again.url);
    expect((await reader.send(new GetParameterCommand({ Name: '/app/a' }))).Parameter).toMatchObject({
      Value: 'two',
      Version: 2,
    });
    reader.destroy();
    await again.close();
  });
});
