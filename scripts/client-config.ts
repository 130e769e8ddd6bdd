import { CLIENTS, clientConfig, KEY_PLACEHOLDER, type ClientName } from '../functions/http/client-configs';

/**
 * `npm run client-config -- sharex|picgo|flameshot BASE_URL [KEY]`: prints a ready configuration of that client for
 * the host at BASE_URL (docs/clients.md says where each goes). Without KEY it carries the placeholder YOUR_KEY, and
 * says so on standard error.
 */
function main(argv: readonly string[]): number {
  const [client, baseUrl, key] = argv;
  if (!client || !CLIENTS.includes(client as ClientName) || !baseUrl) {
    process.stderr.write(`usage: npm run client-config -- ${CLIENTS.join('|')} BASE_URL [KEY]\n`);
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
  if (!key) process.stderr.write(`no KEY given: replace ${KEY_PLACEHOLDER} in it with the API key\n`);
  process.stdout.write(clientConfig(client as ClientName, url.origin + url.pathname.replace(/\/+$/, ''), key || KEY_PLACEHOLDER));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
