import { ConfigError } from '../functions/config';
import { uploadUrl } from '../functions/core/links';
import { startLocalService } from './local-service';

/** `npm start`: the service on this machine, with its stores in DATA_DIR. */
async function main(): Promise<void> {
  const service = await startLocalService({ env: process.env });
  const curl = `curl -F "source=@photo.jpg" -F "key=${service.apiKey}" "${uploadUrl(service.publicUrl)}?format=json"`;
  process.stdout.write(
    [
      '',
      `Image upload service running at ${service.publicUrl}`,
      `  API key:    ${service.apiKey}`,
      service.externalStores
        ? `  Stores:     S3 ${service.externalStores.s3}, DynamoDB ${service.externalStores.dynamodb}, SSM ${service.externalStores.ssm}`
        : `  Data:       ${service.dataDir} (stand-in endpoints in endpoints.json)`,
      `  Upload:     ${curl}`,
      '',
    ].join('\n') + '\n',
  );
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
