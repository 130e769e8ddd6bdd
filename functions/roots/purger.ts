import type { Logger } from '@aws-lambda-powertools/logger';
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { CloudFrontPurger } from '../adapters/cloudfront-purger';
import { loadConfig } from '../config';
import type { Metrics } from '../core/metrics';
import type { CachePurger, Clock, SettingsStore } from '../core/ports';
import { Sweeper } from '../core/lifecycle/sweeper';
import { buildStores, clientOptions, clock, MEASURE, measureCalls, STORE_CALL_LIMITS, type Env } from './stores';

/**
 * The CDN purger, apart from the other stores: only the sweep and the operator's tools purge (a delete link's purge
 * is the sweep's, batched), so the API function's bundle carries no CloudFront client to load at every cold start
 * (`docs/performance.md`, "Cold start").
 */
export function buildPurger(settings: Pick<SettingsStore, 'distributionId'>, metrics: Metrics): CachePurger {
  const cloudfront = new CloudFrontClient(clientOptions(STORE_CALL_LIMITS.small));
  cloudfront.middlewareStack.add(measureCalls('CloudFront', metrics), MEASURE);
  return new CloudFrontPurger(cloudfront, () => settings.distributionId());
}

/**
 * The sweep needs the stores only: no imaging, so its bundle carries no sharp; and of the settings only the
 * distribution it purges (its role may read no other parameter: no key, no salt).
 */
export function buildSweeper(env: Env, logger: Logger, metrics: Metrics, sweepClock: Clock = clock): Sweeper {
  const config = loadConfig(env);
  const { images, objects, duplicates, settings, stats, staged } = buildStores(config, env, metrics, {
    distributionId: config.parameters.distributionId,
  });
  const purger = buildPurger(settings, metrics);
  const keepDeletedMs = config.keepDeletedDays * 86_400_000;
  return new Sweeper({ images, objects, duplicates, purger, stats, staged, clock: sweepClock, logger, metrics, keepDeletedMs });
}
