import { writeFileSync } from 'node:fs';
import { CLIENTS, clientConfig, KEY_PLACEHOLDER, type ClientName } from '../functions/http/client-configs';
import { readCommandLine } from './command-line';

const USAGE = `usage: npm run client-config -- ${CLIENTS.join('|')} BASE_URL [KEY] [--out FILE]`;

/** The API's own paths, which a base URL pasted from a client's settings may end with: the host's base is before them. */
const API_PATH = /\/api\/1(\/upload(-url)?)?\/*$/;

/**
 * `npm run client-config -- sharex|picgo|flameshot BASE_URL [KEY] [--out FILE]`: a ready configuration of that client
 * for the host at BASE_URL (docs/clients.md says where each goes), on standard output or, with `--out`, in FILE (npm
 * prints its own lines on standard output too, unless run with `-s`). Without KEY it carries the placeholder YOUR_KEY,
 * and says so on standard error. Exit codes: 0 done, 1 failed, 2 usage.
 */
function main(argv: readonly string[]): number {
  const reading = readCommandLine(USAGE, argv, { out: { type: 'string' } }, 3);
  if (!('read' in reading)) {
    (reading.exit === 0 ? process.stdout : process.stderr).write(reading.text);
    return reading.exit;
  }
  const parsed = reading.read;
  const [client, baseUrl, key] = parsed.positionals;
  if (!client || !CLIENTS.includes(client as ClientName) || !baseUrl) {
    const problem = !client
      ? 'no client given'
      : !CLIENTS.includes(client as ClientName)
        ? `no client ${client}: one of ${CLIENTS.join(', ')}`
        : 'no BASE_URL given';
    process.stderr.write(`${problem}\n${USAGE}\n`);
    return 2;
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    process.stderr.write(`BASE_URL must be a URL, such as https://img.example.com: got ${baseUrl}\n`);
    return 2;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    process.stderr.write(`BASE_URL must be http(s): got ${baseUrl}\n`);
    return 2;
  }
  if (url.search || url.hash) {
    process.stderr.write(`BASE_URL must have no query or fragment: got ${baseUrl}\n`);
    return 2;
  }
  const path = url.pathname.replace(/\/+$/, '');
  const base = url.origin + path.replace(API_PATH, '');
  if (API_PATH.test(path)) process.stderr.write(`BASE_URL taken as ${base} (the host's base, without the API's path)\n`);
  if (!key) process.stderr.write(`no KEY given: replace ${KEY_PLACEHOLDER} in it with the API key\n`);
  const config = clientConfig(client as ClientName, base, key || KEY_PLACEHOLDER);
  if (parsed.values.out === undefined) process.stdout.write(config);
  else {
    try {
      writeFileSync(parsed.values.out, config, { mode: client === 'flameshot' ? 0o755 : 0o644 });
    } catch (error) {
      process.stderr.write(`cannot write ${parsed.values.out}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
    process.stderr.write(`wrote ${parsed.values.out}\n`);
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
