import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { NSFW_MODEL_FILE } from '../../functions/imaging/nsfw-classifier';
import { median } from './median';

const MODEL = join(__dirname, '..', '..', 'functions', 'imaging', 'models', NSFW_MODEL_FILE);

/** What a fresh process spends loading: sharp alone, or sharp and then the classifier (onnxruntime and the model). */
const PROGRAMS = {
  sharp: `const t = performance.now(); require('sharp'); process.stdout.write(String(performance.now() - t));`,
  classifier: `const t = performance.now(); require('sharp'); const ort = require('onnxruntime-node');
    ort.InferenceSession.create(require('node:fs').readFileSync(${JSON.stringify(MODEL)}), { enableCpuMemArena: false })
      .then(() => process.stdout.write(String(performance.now() - t)));`,
} as const;

export interface ColdStartRow {
  sharpP50: number;
  withClassifierP50: number;
}

/**
 * The NSFW classifier's cost at cold start (`docs/moderation.md`, "Cost"): fresh processes, alternately loading sharp
 * (what the imaging loads anyway) and sharp with onnxruntime and the model, as `loadNsfwClassifier` does.
 */
export function measureClassifierColdStart(runs: number): ColdStartRow {
  const times = { sharp: [] as number[], classifier: [] as number[] };
  for (let i = 0; i < runs; i += 1) {
    for (const which of i % 2 === 0 ? (['sharp', 'classifier'] as const) : (['classifier', 'sharp'] as const)) {
      const out = execFileSync(process.execPath, ['-e', PROGRAMS[which]], { cwd: join(__dirname, '..', '..'), encoding: 'utf8' });
      times[which].push(Number(out));
    }
  }
  return { sharpP50: median(times.sharp), withClassifierP50: median(times.classifier) };
}
