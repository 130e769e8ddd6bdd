import { fromRoot } from './side-modules';

/**
 * Makes one side's stores of the one-core rig (`cpu-rig.ts`) in moto_server, with the checkout's own `local/provision`,
 * and prints its API key as JSON. A process of its own, ended before the side's worker starts: provisioning loads the
 * local stand-ins' modules (s3rver, dynalite), which a Lambda never holds and which would weigh on every collection of
 * the worker's heap.
 */
async function main(): Promise<void> {
  const root = process.env['BENCH_ROOT'] ?? '';
  const { provision, externalClients } = await fromRoot<{
    provision: (options: object) => Promise<{ apiKey: string }>;
    externalClients: () => unknown;
  }>(root, 'local/provision');
  const names = JSON.parse(process.env['BENCH_NAMES'] ?? '{}') as { bucket: string; table: string; parameterPrefix: string };
  const endpoint = process.env['AWS_ENDPOINT_URL'] ?? '';
  const { apiKey } = await provision({
    endpoints: { s3: endpoint, dynamodb: endpoint, ssm: endpoint },
    clients: externalClients(),
    ...names,
    floodLimits: '{"minute":100000,"hour":100000,"day":100000,"week":100000,"month":100000}',
  });
  process.stdout.write(`${JSON.stringify({ apiKey })}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
    process.exit(1);
  },
);
