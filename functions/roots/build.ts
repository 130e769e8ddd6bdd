import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoCounterStore } from '../adapters/dynamo-counter-store';
import { SafeUrlFetcher } from '../adapters/safe-url-fetcher';
import { isPublicUrl, loadConfig, type Config } from '../config';
import {
  FETCH_FAILURE_RULE,
  FloodGuard,
  parseFloodLimits,
  REPORT_RULE,
  UPLOAD_URL_RULE,
  URL_FETCH_RULE,
  URL_FETCHES_AT_ONCE_RULE,
  URL_MEGABYTE_RULE,
  type FloodLimits,
  type GuardRule,
} from '../core/flood';
import type { FloodWindow } from '../core/ports';
import type { Metrics } from '../core/metrics';
import type { ImageProcessor, RandomSource, SettingsStore } from '../core/ports';
import { cryptoRandom } from '../adapters/crypto-random';
import { IdCodecs } from '../core/image/id-codec';
import { ImageAccess } from '../core/lifecycle/image-access';
import { ImageReports } from '../core/moderation/reports';
import { StagedUploads } from '../core/upload/staged-uploads';
import { UploadGate } from '../core/moderation/moderation';
import { RefusalCounter } from '../core/daily-stats';
import { UploadService, type UploadServiceDeps } from '../core/upload/upload-service';
import { loadNsfwClassifier } from '../imaging/nsfw-classifier';
import { SharpImageProcessor, type ImagingSettings } from '../imaging/sharp-image-processor';
import { apiParameters } from '../adapters/parameter-names';
import { buildStores, clock, type Env, type StoreCallLimits } from './stores';

export type { Env } from './stores';

/** What a handler may give in place of the defaults of building the services. */
export interface BuildOptions {
  /** Where random values come from; default: the operating system's CSPRNG. */
  random?: RandomSource;
  /** What makes the renditions; default: the configuration's (`imageProcessor`). The bench weighs moderation with it. */
  imageProcessor?: (config: Readonly<Config>) => Promise<ImageProcessor>;
  /**
   * How long store calls may take; default: `STORE_CALL_LIMITS`. Only the tests that run tens of invocations at once
   * in one process set their own (`docs/reliability.md`, "Concurrency").
   */
  storeCallLimits?: Readonly<StoreCallLimits>;
}

export interface Services {
  config: Readonly<Config>;
  publicUrl: string;
  service: UploadService;
  access: ImageAccess;
  reports: ImageReports;
  settings: SettingsStore;
  refusals: RefusalCounter;
  /** The origin of the two-step upload's URLs (the upload page's CSP). */
  stagingOrigin: () => Promise<string>;
}

/** Everything the API needs, built once per cold start; a missing or bad setting fails here, loudly. */
export async function buildServices(env: Env, logger: Logger, metrics: Metrics, options: BuildOptions = {}): Promise<Services> {
  const random = options.random ?? cryptoRandom;
  const config = loadConfig(env);
  const { db, settings, images, objects, duplicates, staged, ledger, moderation, pictureBlocks, stats, reports } = buildStores(
    config,
    env,
    metrics,
    apiParameters(config.parameters),
    options.storeCallLimits,
  );
  const publicUrl = await publicUrlOf(config, settings);
  const counters = new DynamoCounterStore(db, config.tableName);
  const codecs = new IdCodecs(() => settings.idSalt(), config.idPadding);
  const service = new UploadService({
    rules: {
      publicUrl,
      timeZone: config.timeZone,
      maxUploadBytes: config.maxUploadBytes,
      maxUrlUploadBytes: config.maxUrlUploadBytes,
      naming: config.naming,
      forcedExpirationSeconds: config.forcedExpirationSeconds,
      duplicates: config.duplicates,
      idScheme: config.idScheme,
    },
    settings,
    images,
    objects,
    processor: await (options.imageProcessor ?? imageProcessor)(config),
    fetcher: new SafeUrlFetcher({ allowHosts: config.urlFetchAllowHosts }),
    ...floodGuards(config, counters, settings, logger),
    duplicates,
    gate: new UploadGate(moderation, moderation, pictureBlocks, clock, config.moderationCacheSeconds * 1000, config.nsfw),
    staged: new StagedUploads({
      settings,
      staged,
      ledger,
      issuance: perHour(counters, config.uploadUrlsPerHour, UPLOAD_URL_RULE),
      random,
      clock,
      logger,
      maxStagedBytes: config.maxStagedUploadBytes,
    }),
    codecs,
    clock,
    random,
    logger,
    metrics,
  });
  const access = new ImageAccess({ images, objects, duplicates, clock, logger, codecs, publicUrl });
  const refusals = new RefusalCounter(stats, clock, logger, config.statsFlushSeconds * 1000);
  const guard = perHour(counters, config.reportsPerHour, REPORT_RULE);
  const reporting = new ImageReports({ reports, images, codecs, guard, stats, clock, logger });
  const stagingOrigin = (): Promise<string> => staged.uploadOrigin();
  return { config, publicUrl, service, access, reports: reporting, settings, refusals, stagingOrigin };
}

/** The service's public URL, without a trailing slash: PUBLIC_URL, or its parameter; neither is a bad setting. */
async function publicUrlOf(config: Readonly<Config>, settings: SettingsStore): Promise<string> {
  const publicUrl = (config.publicUrl ?? (await settings.publicUrl()))?.replace(/\/+$/, '');
  if (!publicUrl || !isPublicUrl(publicUrl))
    throw new Error(`no public URL: set PUBLIC_URL or the ${config.parameters.publicUrl} parameter`);
  return publicUrl;
}

/**
 * The client's upload slots (the flood limits, from their parameter), and, for URL sources, its fetches and megabytes
 * fetched an hour and the fetches that may fail.
 */
function floodGuards(
  config: Readonly<Config>,
  counters: DynamoCounterStore,
  settings: SettingsStore,
  logger: Logger,
): Pick<UploadServiceDeps, 'flood' | 'fetchFailures' | 'urlFetches' | 'urlMegabytes' | 'urlFetchesAtOnce'> {
  return {
    flood: new FloodGuard(counters, floodLimitsReader(settings, logger)),
    fetchFailures: perHour(counters, config.urlFetchFailuresPerHour, FETCH_FAILURE_RULE),
    urlFetches: perHour(counters, config.urlFetchesPerHour, URL_FETCH_RULE),
    urlMegabytes: perHour(counters, config.urlFetchMegabytesPerHour, URL_MEGABYTE_RULE),
    urlFetchesAtOnce: new FloodGuard(
      counters,
      () => Promise.resolve(onlyWindow('minute', config.urlFetchesAtOnce)),
      URL_FETCHES_AT_ONCE_RULE,
    ),
  };
}

/** A guard of `perHour` of something per client and hour (0: no limit). */
function perHour(counters: DynamoCounterStore, perHourLimit: number, rule: GuardRule): FloodGuard {
  return new FloodGuard(counters, () => Promise.resolve(onlyWindow('hour', perHourLimit)), rule);
}

/** Limits of one window, the others off. */
function onlyWindow(window: FloodWindow, limit: number): FloodLimits {
  return { minute: 0, hour: 0, day: 0, week: 0, month: 0, [window]: limit };
}

/** The imaging, with the NSFW classifier loaded unless its policy is `off` (also the bench's, `scripts/bench/`). */
export async function imageProcessor(config: Readonly<Config>): Promise<SharpImageProcessor> {
  const classifier = config.nsfw.policy === 'off' ? undefined : await loadNsfwClassifier();
  return new SharpImageProcessor(imagingSettings(config), classifier);
}

/** The imaging limits and sizes of a configuration. */
export function imagingSettings(config: Readonly<Config>): ImagingSettings {
  return {
    maxPixels: config.maxPixels,
    maxHeicPixels: config.maxHeicPixels,
    maxFrames: config.maxFrames,
    timeLimitSeconds: config.imagingTimeLimitSeconds,
    thumbSize: config.thumbSize,
    mediumWidth: config.mediumWidth,
    keepMetadata: config.keepMetadata,
  };
}

/** Flood limits from their parameter; a bad parameter is logged once per change and its bad parts get the defaults. */
function floodLimitsReader(settings: SettingsStore, logger: Logger): () => Promise<FloodLimits> {
  let last: { text: string | undefined; limits: FloodLimits } | undefined;
  return async () => {
    const text = await settings.floodLimits();
    if (last && last.text === text) return last.limits;
    const { limits, problems } = parseFloodLimits(text);
    if (problems.length > 0) logger.error('flood-limits parameter has problems; defaults used for them', { problems, limits });
    last = { text, limits };
    return limits;
  };
}
