import { standInEnvironment, startStandIns } from '../../local/stand-ins';
import { startLatencyProxy, type StoreCall } from './latency-proxy';

/**
 * The bench's stores, in a process of their own so that their work (s3rver writing files, dynalite's LevelDB) does
 * not take the main thread of the process that runs the handler: the stand-ins, each behind a latency proxy. Driven by
 * messages from its parent: `{ latencyMs }` sets the latency, `'calls'` answers the calls recorded since the last ask.
 */
async function main(): Promise<void> {
  const standIns = await startStandIns();
  const calls: StoreCall[] = [];
  let latencyMs = 0;
  const [s3, dynamodb, ssm] = await Promise.all([
    startLatencyProxy('S3', standIns.sockets.s3, () => latencyMs, calls),
    startLatencyProxy('DynamoDB', standIns.sockets.dynamodb, () => latencyMs, calls),
    startLatencyProxy('SSM', standIns.sockets.ssm, () => latencyMs, calls),
  ]);
  process.on('message', (message: { latencyMs?: number; calls?: boolean }) => {
    if (message.latencyMs !== undefined) latencyMs = message.latencyMs;
    if (message.calls) process.send?.({ calls: calls.splice(0) });
  });
  process.send?.({
    ready: {
      direct: { s3: standIns.s3, dynamodb: standIns.dynamodb, ssm: standIns.ssm, credentials: standIns.credentials },
      proxied: standInEnvironment({ s3: s3.url, dynamodb: dynamodb.url, ssm: ssm.url, credentials: standIns.credentials }),
    },
  });
}

void main();
