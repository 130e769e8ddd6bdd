import { ConfigError } from '../functions/config';
import type { FloodLimits } from '../functions/core/flood';
import { FLOOD_WINDOWS } from '../functions/core/ports';
import { uploadUrl } from '../functions/core/image/links';
import { startLocalService, type LocalService } from './local-service';
import type { SettingSource } from './provision';

/** Where a value came from, as the banner says it; `stored` values stay for later starts (`docs/local.md`). */
const SOURCES: Record<'apiKey' | 'floodLimits', Record<SettingSource, string>> = {
  apiKey: {
    environment: 'from API_KEY, kept for later starts',
    stored: 'kept in the data folder; API_KEY=new makes a new one',
    default: 'new',
  },
  floodLimits: {
    environment: 'from FLOOD_LIMITS, kept for later starts',
    stored: 'kept in the data folder; FLOOD_LIMITS=default goes back to the defaults',
    default: 'the defaults',
  },
};

/** `50 a minute, 500 an hour, ...`; a window turned off (0) is left out. */
function floodText(limits: FloodLimits): string {
  const on = FLOOD_WINDOWS.filter((window) => limits[window] > 0);
  if (on.length === 0) return 'none';
  return on.map((window) => `${limits[window]} ${window === 'hour' ? 'an' : 'a'} ${window}`).join(', ');
}

/** What `npm start` prints once it serves: where, with which key and limits (and whence), where its data is. */
function banner(service: LocalService): string {
  const { settings } = service;
  const curl = `curl -F "source=@photo.jpg" -F "key=${service.apiKey}" "${uploadUrl(service.publicUrl)}?format=json"`;
  // said when the public URL is not this address (a proxy, a tunnel); localhost is 127.0.0.1
  const origin = (url: string): string => new URL(url).origin.replace('//localhost:', '//127.0.0.1:');
  const listening = origin(service.url) === origin(service.publicUrl) ? [] : [`  Listening:  ${service.url}`];
  return [
    '',
    `Image upload service running at ${service.publicUrl}`,
    ...listening,
    `  API key:    ${service.apiKey} (${SOURCES.apiKey[settings.apiKeySource]})`,
    `  Flood:      ${floodText(settings.floodLimits)} per client (${SOURCES.floodLimits[settings.floodLimitsSource]})`,
    service.externalStores
      ? `  Stores:     S3 ${service.externalStores.s3}, DynamoDB ${service.externalStores.dynamodb}, SSM ${service.externalStores.ssm}`
      : `  Data:       ${service.dataDir} (stand-in endpoints in endpoints.json)`,
    `  Upload:     ${curl}`,
    `  Or:         ${service.publicUrl}/ (the upload page, in a browser; the API and apps: /apps)`,
    '',
  ].join('\n');
}

/** `npm start`: the service on this machine, with its stores in DATA_DIR. */
async function main(): Promise<void> {
  const service = await startLocalService({ env: process.env });
  process.stdout.write(`${banner(service)}\n`);
  // Opt-in: one line of process memory every MEMORY_REPORT_SECONDS, for `npm run load`.
  const reportSeconds = Number(process.env['MEMORY_REPORT_SECONDS'] || 0);
  if (reportSeconds > 0) {
    setInterval(() => {
      const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
      const mib = (bytes: number): string => (bytes / 1048576).toFixed(1);
      process.stdout.write(
        `memory rss=${mib(rss)} heapUsed=${mib(heapUsed)} external=${mib(external)} arrayBuffers=${mib(arrayBuffers)}\n`,
      );
    }, reportSeconds * 1000).unref();
  }
  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    void service.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  // a setting's mistake is said in its own words; anything else is a bug, with where it happened
  const told =
    error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`${told}\n`);
  process.exit(1);
});
