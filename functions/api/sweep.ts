import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import type { SweepResult, Sweeper } from '../core/sweeper';
import { buildSweeper, type Env } from './stores';

export type SweepHandler = (event?: unknown, context?: Context) => Promise<SweepResult>;

/** The scheduled sweep over its own environment; the local server runs one on a timer. */
export function createSweepHandler(env: Env = process.env): SweepHandler {
  const logger = new Logger({ serviceName: 'image-upload-sweep' });
  let sweeper: Sweeper | undefined;
  return async (_event, context) => {
    if (context) logger.addContext(context);
    sweeper ??= buildSweeper(env, logger);
    return sweeper.sweep();
  };
}

/** The Lambda entry point of the schedule (EventBridge, every few minutes). */
export const handler: SweepHandler = createSweepHandler();
