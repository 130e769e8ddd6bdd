import { standInEnvironment, startStandIns, type StandIns } from '../../local/stand-ins';

declare global {
  var __standIns: StandIns | undefined;
}

/** One set of in-memory stand-ins for the whole run; workers find them through the inherited environment. */
export default async function globalSetup(): Promise<void> {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  const standIns = await startStandIns();
  globalThis.__standIns = standIns;
  Object.assign(process.env, standInEnvironment(standIns));
  // Handlers log a JSON line per request; tests read them through a spy where they matter.
  process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
  // Metrics are CloudWatch log lines; tests that check them pass a fake.
  process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
}
