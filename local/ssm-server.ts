import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readUpTo } from '../functions/adapters/bounded-read';

/**
 * A small SSM Parameter Store that speaks the real JSON 1.1 wire protocol (`X-Amz-Target: AmazonSSM.<Op>`), so the
 * AWS SDK and CLI talk to it as to AWS. Covers GetParameter (incl. `name:version`), GetParameters,
 * GetParametersByPath, PutParameter and DeleteParameter. Parameters persist in a JSON file when one is given.
 */
export interface SsmServer {
  url: string;
  close(): Promise<void>;
}

export interface SsmServerOptions {
  /** JSON file the parameters persist in; in memory when absent. */
  file?: string;
  /** The only access key id accepted in the SigV4 Authorization header (the signature is its gate's to check). */
  accessKeyId: string;
  port?: number;
  /** A socket to listen on instead of a port of 127.0.0.1 (behind a signature gate: `signature-gate.ts`). */
  socketPath?: string;
}

type ParameterType = 'String' | 'StringList' | 'SecureString';

interface StoredVersion {
  value: string;
  type: ParameterType;
  lastModifiedDate: number;
}

interface StoredParameter {
  versions: StoredVersion[];
}

class SsmFault extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 1_000_000;
const MAX_VALUE_CHARS = 8192;
const NAME_PATTERN = /^\/?[A-Za-z0-9_.\-/]{1,2048}$/;

export async function startSsmServer(options: SsmServerOptions): Promise<SsmServer> {
  const parameters = new Map<string, StoredParameter>(load(options.file));
  const save = (): void => {
    if (!options.file) return;
    const temporary = `${options.file}.tmp`;
    writeFileSync(temporary, JSON.stringify(Object.fromEntries(parameters), null, 2), { mode: 0o600 });
    renameSync(temporary, options.file);
  };

  const view = (name: string, version: StoredVersion, number: number, decrypt: boolean): Record<string, unknown> => ({
    Name: name,
    Type: version.type,
    Value:
      version.type === 'SecureString' && !decrypt ? Buffer.from(`local-kms:${version.value}`).toString('base64') : version.value,
    Version: number,
    LastModifiedDate: version.lastModifiedDate / 1000,
    ARN: `arn:aws:ssm:us-east-1:000000000000:parameter${name.startsWith('/') ? '' : '/'}${name}`,
    DataType: 'text',
  });

  const find = (selector: string, decrypt: boolean): Record<string, unknown> | undefined => {
    const [name = '', versionText] = selector.split(':');
    const stored = parameters.get(name);
    if (!stored) return undefined;
    const number = versionText === undefined ? stored.versions.length : Number(versionText);
    const version = stored.versions[number - 1];
    return version ? view(name, version, number, decrypt) : undefined;
  };

  const operations: Record<string, (input: Record<string, unknown>) => Record<string, unknown>> = {
    GetParameter(input) {
      const found = find(text(input, 'Name'), input['WithDecryption'] === true);
      if (!found) throw new SsmFault('ParameterNotFound', `Parameter ${text(input, 'Name')} not found.`);
      return { Parameter: found };
    },
    GetParameters(input) {
      const names = input['Names'];
      if (!Array.isArray(names) || names.length === 0 || names.length > 10)
        throw new SsmFault('ValidationException', 'Names must hold 1 to 10 names');
      const found: Record<string, unknown>[] = [];
      const invalid: string[] = [];
      for (const name of names.map(String)) {
        const parameter = find(name, input['WithDecryption'] === true);
        if (parameter) found.push(parameter);
        else invalid.push(name);
      }
      return { Parameters: found, InvalidParameters: invalid };
    },
    GetParametersByPath(input) {
      const path = text(input, 'Path').replace(/\/?$/, '/');
      const recursive = input['Recursive'] === true;
      const found = [...parameters.keys()]
        .filter((name) => name.startsWith(path) && (recursive || !name.slice(path.length).includes('/')))
        .sort()
        .map((name) => find(name, input['WithDecryption'] === true))
        .filter((parameter): parameter is Record<string, unknown> => parameter !== undefined);
      return { Parameters: found };
    },
    PutParameter(input) {
      const name = text(input, 'Name');
      const value = text(input, 'Value');
      if (!NAME_PATTERN.test(name)) throw new SsmFault('ValidationException', `Invalid parameter name ${name}`);
      if (value.length === 0 || value.length > MAX_VALUE_CHARS)
        throw new SsmFault('ValidationException', 'Value must hold 1 to 8192 characters');
      const existing = parameters.get(name);
      if (existing && input['Overwrite'] !== true) {
        throw new SsmFault(
          'ParameterAlreadyExists',
          'The parameter already exists. To overwrite this value, set the overwrite option in the request to true.',
        );
      }
      const type = (input['Type'] ?? existing?.versions.at(-1)?.type ?? 'String') as ParameterType;
      if (!['String', 'StringList', 'SecureString'].includes(type))
        throw new SsmFault('ValidationException', `Invalid type ${type}`);
      const stored = existing ?? { versions: [] };
      stored.versions.push({ value, type, lastModifiedDate: Date.now() });
      parameters.set(name, stored);
      save();
      return { Version: stored.versions.length, Tier: 'Standard' };
    },
    DeleteParameter(input) {
      const name = text(input, 'Name');
      if (!parameters.delete(name)) throw new SsmFault('ParameterNotFound', `Parameter ${name} not found.`);
      save();
      return {};
    },
  };

  const server = createServer((request, response) => {
    void handle(request, response);
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = (status: number, body: Record<string, unknown>): void => {
      response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1', 'x-amzn-RequestId': crypto.randomUUID() });
      response.end(JSON.stringify(body));
    };
    try {
      const target = String(request.headers['x-amz-target'] ?? '');
      const authorization = String(request.headers['authorization'] ?? '');
      if (!authorization.includes(`Credential=${options.accessKeyId}/`)) {
        throw new SsmFault('UnrecognizedClientException', 'The security token included in the request is invalid.');
      }
      const operation =
        request.method === 'POST' && target.startsWith('AmazonSSM.') ? operations[target.slice('AmazonSSM.'.length)] : undefined;
      if (!operation) throw new SsmFault('InvalidAction', `Unsupported operation ${target}`);
      const body = await readUpTo(request, MAX_BODY_BYTES);
      if (body === undefined) throw new SsmFault('ValidationException', 'Request too large');
      const input: unknown = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
      if (typeof input !== 'object' || input === null) throw new SsmFault('SerializationException', 'Body must be a JSON object');
      reply(200, operation(input as Record<string, unknown>));
    } catch (error) {
      if (error instanceof SsmFault) reply(400, { __type: error.type, message: error.message });
      else if (error instanceof SyntaxError) reply(400, { __type: 'SerializationException', message: 'Malformed JSON' });
      else reply(500, { __type: 'InternalServerError', message: 'Internal error' });
    }
  }

  const { socketPath } = options;
  if (socketPath !== undefined) await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  else await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: typeof address === 'string' || address === null ? `unix:${socketPath}` : `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function text(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  if (typeof value !== 'string') throw new SsmFault('ValidationException', `${name} is required`);
  return value;
}

function load(file: string | undefined): [string, StoredParameter][] {
  if (!file || !existsSync(file)) return [];
  return Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, StoredParameter>);
}
