import { imagingSettings } from '../../functions/roots/build';
import { loadNsfwClassifier } from '../../functions/imaging/nsfw-classifier';
import { SharpImageProcessor } from '../../functions/imaging/sharp-image-processor';
import type { BenchFixture } from './fixtures';
import { median } from './median';
import { defaultConfig, imagingJob, unmoderatedProcessor } from './processor';

export interface ModerationCostRow {
  input: string;
  /** The imaging with the perceptual hashes and the classifier (a default deployment's), its p50. */
  bothP50: number;
  /** With the hashes only (`NSFW_POLICY` off). */
  hashesP50: number;
  /** With neither. */
  neitherP50: number;
  /** The medians of the runs' ratios, each run of the three side by side: both / neither, hashes only / neither. */
  bothRatio: number;
  hashesRatio: number;
}

const WARMUP = 3;

/**
 * What moderation adds to the imaging of an upload: the same job with the perceptual hashes and the NSFW classifier,
 * with the hashes only, and with neither, interleaved in a rotating order (`docs/moderation.md`, "Cost"), each job
 * ending with the score. The upload puts the renditions while the model runs, so this bounds what the classifier adds;
 * the whole upload's own comparison is in `handler.ts`.
 */
export async function measureModerationCost(fixtures: readonly BenchFixture[], iterations: number): Promise<ModerationCostRow[]> {
  const config = defaultConfig();
  const settings = imagingSettings(config);
  const processors = {
    both: new SharpImageProcessor(settings, await loadNsfwClassifier()),
    hashes: new SharpImageProcessor(settings),
    neither: unmoderatedProcessor(config),
  };
  const kinds = ['both', 'hashes', 'neither'] as const;
  const rows: ModerationCostRow[] = [];
  for (const fixture of fixtures) {
    const timings = { both: [] as number[], hashes: [] as number[], neither: [] as number[] };
    for (let i = 0; i < iterations + WARMUP; i += 1) {
      for (let turn = 0; turn < kinds.length; turn += 1) {
        const which = kinds[(i + turn) % kinds.length] ?? 'both';
        const start = performance.now();
        await imagingJob(processors[which], fixture.bytes);
        if (i >= WARMUP) timings[which].push(performance.now() - start);
      }
    }
    const ratioTo = (ms: number[]): number => median(ms.map((value, index) => value / (timings.neither[index] ?? value)));
    rows.push({
      input: fixture.name,
      bothP50: median(timings.both),
      hashesP50: median(timings.hashes),
      neitherP50: median(timings.neither),
      bothRatio: ratioTo(timings.both),
      hashesRatio: ratioTo(timings.hashes),
    });
  }
  return rows;
}
