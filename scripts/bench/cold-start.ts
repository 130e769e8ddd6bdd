import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NSFW_MODEL_FILE } from '../../functions/imaging/nsfw-classifier';
import { bundleApi } from './api-bundle';
import { median, medianOfRatios } from './median';

const ROOT = join(__dirname, '..', '..');
const MODEL = join(ROOT, 'functions', 'imaging', 'models', NSFW_MODEL_FILE);

/** What a fresh process spends loading: sharp alone, or sharp and then the classifier (onnxruntime and the model). */
const PROGRAMS = {
  sharp: `const t = performance.now(); require('sharp'); process.stdout.write(String(performance.now() - t));`,
  classifier: `const t = performance.now(); require('sharp'); const ort = require('onnxruntime-node');
    ort.InferenceSession.create(require('node:fs').readFileSync(${JSON.stringify(MODEL)}), { enableCpuMemArena: false })
      .then(() => process.stdout.write(String(performance.now() - t)));`,
} as const;

/**
 * Two programs (each prints the milliseconds it measured) run by fresh Node processes, alternately, `runs` times each,
 * after one pair that warms the file cache; their times.
 */
function alternately<K extends string>(programs: Record<K, string>, runs: number): Record<K, number[]> {
  const names = Object.keys(programs) as K[];
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < runs + 1; i += 1) {
    for (const name of i % 2 === 0 ? names : [...names].reverse()) {
      const out = execFileSync(process.execPath, ['-e', programs[name]], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { PATH: process.env['PATH'] ?? '', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      });
      if (i > 0) times[name].push(Number(out));
    }
  }
  return times;
}

export interface ColdStartRow {
  sharpP50: number;
  withClassifierP50: number;
}

/**
 * The NSFW classifier's cost at cold start (`docs/moderation.md`, "Cost"): fresh processes, alternately loading sharp
 * (what the imaging loads anyway) and sharp with onnxruntime and the model, as `loadNsfwClassifier` does.
 */
export function measureClassifierColdStart(runs: number): ColdStartRow {
  const times = alternately(PROGRAMS, runs);
  return { sharpP50: median(times.sharp), withClassifierP50: median(times.classifier) };
}

export interface BundleColdStartRow {
  apiP50: number;
  minimalP50: number;
  /** The median of the ratios of each load of the API's bundle to the minimal one's beside it. */
  ratio: number;
  apiBytes: number;
  minimalBytes: number;
}

/** What a function that only makes the same SDK clients and loads sharp would bundle: the floor of a cold start. */
const MINIMAL_ENTRY = `
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SSMClient } from '@aws-sdk/client-ssm';
import sharp from 'sharp';
const clients = [new S3Client({}), DynamoDBDocumentClient.from(new DynamoDBClient({})), new SSMClient({})];
export const handler = async (): Promise<unknown> => [clients, sharp];
`;

/**
 * The API function's cold start against a minimal bundle's (`docs/performance.md`, "Cold start"): both bundled by
 * esbuild with the stack's options for the API (its externals, source maps and minification, `API_BUNDLING`), each
 * loaded by a fresh Node process as Lambda's runtime loads the handler's module (the API function applies no source
 * maps), alternately, `runs` times each. The time is the `require` of the bundle, Node's own start left out.
 */
export async function measureBundleColdStart(runs: number): Promise<BundleColdStartRow> {
  const { API_BUNDLING, FUNCTIONS } = await import('../../lib/service-functions');
  const dir = join(ROOT, 'node_modules', '.cache', 'bench-cold');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'minimal.ts'), MINIMAL_ENTRY);
  const bundles = { api: join(dir, 'api', 'index.js'), minimal: join(dir, 'minimal', 'index.js') };
  for (const [which, entry] of [
    ['api', join(FUNCTIONS, 'roots', 'handler.ts')],
    ['minimal', join(dir, 'minimal.ts')],
  ] as const) {
    await bundleApi(entry, bundles[which], { sourcemap: Boolean(API_BUNDLING.sourceMap), minify: API_BUNDLING.minify ?? false });
  }
  const loading = (file: string): string =>
    `const t = performance.now(); require(${JSON.stringify(file)}); process.stdout.write(String(performance.now() - t));`;
  const times = alternately({ api: loading(bundles.api), minimal: loading(bundles.minimal) }, runs);
  return {
    apiP50: median(times.api),
    minimalP50: median(times.minimal),
    ratio: medianOfRatios(times.api, times.minimal),
    apiBytes: statSync(bundles.api).size,
    minimalBytes: statSync(bundles.minimal).size,
  };
}
