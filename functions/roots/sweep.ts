import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { EmfMetrics } from '../adapters/emf-metrics';
import { METRIC_SERVICE, type Metrics } from '../core/metrics';
import type { Clock } from '../core/ports';
import { DEFAULT_SWEEP_OPTIONS, type SweepResult, type Sweeper } from '../core/lifecycle/sweeper';
import { buildSweeper } from './purger';
import type { Env } from './stores';

export type SweepHandler = (event?: unknown, context?: Context) => Promise<SweepResult>;

const SERVICE_NAME = METRIC_SERVICE.sweep;
/** Left of the function's time when a run stops taking new records: the last page, its purge, the metrics. */
const FINISHING_MS = 60_000;

/**
 * The scheduled sweep over its own environment; the local server runs one on a timer. Tests give it a clock ahead of
 * the real one (the stores' request signatures must keep the real time: S3 refuses a clock 15 minutes off).
 */
export function createSweepHandler(
  env: Env = process.env,
  metrics: Metrics = new EmfMetrics(SERVICE_NAME, env),
  clock?: Clock,
  logger: Logger = new Logger({ serviceName: SERVICE_NAME }),
): SweepHandler {
  let sweeper: Sweeper | undefined;
  return async (_event, context) => {
    if (context) logger.addContext(context);
    sweeper ??= buildSweeper(env, logger, metrics, clock);
    const budgetMs = context
      ? Math.max(10_000, context.getRemainingTimeInMillis() - FINISHING_MS)
      : DEFAULT_SWEEP_OPTIONS.budgetMs;
    try {
      return await sweeper.sweep({ ...DEFAULT_SWEEP_OPTIONS, budgetMs });
    } finally {
      metrics.flush();
    }
  };
}

/** The Lambda entry point of the schedule (EventBridge, every few minutes). */
export const handler: SweepHandler = createSweepHandler();
