import { imagingSettings } from '../../functions/api/build';
import { loadConfig } from '../../functions/config';
import { SharpImageProcessor } from '../../functions/imaging/sharp-image-processor';
import type { BenchFixture } from './fixtures';
import { median } from './median';

export interface ModerationCostRow {
  input: string;
  withP50: number;
  withoutP50: number;
  /** The median of the pairs' ratios (with / without), each pair run side by side. */
  ratio: number;
}

/**
 * What moderation adds to the imaging of an upload: the same job with the perceptual hashes and without them,
 * interleaved (`docs/moderation.md`, "Cost"). The imaging is most of an upload's time, so the ratio bounds what the
 * hashes add to the whole upload.
 */
export async function measureModerationCost(fixtures: readonly BenchFixture[], iterations: number): Promise<ModerationCostRow[]> {
  const settings = imagingSettings(
    loadConfig({ BUCKET_NAME: 'bench', TABLE_NAME: 'bench', PUBLIC_URL: 'https://bench.example' }),
  );
  const withHashes = new SharpImageProcessor(settings);
  const without = new SharpImageProcessor({ ...settings, withoutPerceptual: true });
  const rows: ModerationCostRow[] = [];
  for (const fixture of fixtures) {
    const timings = { with: [] as number[], without: [] as number[] };
    for (let i = 0; i < iterations + 3; i += 1) {
      const order = i % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
      for (const which of order) {
        const processor = which === 'with' ? withHashes : without;
        const start = performance.now();
        await processor.process(fixture.bytes, { targetWidth: undefined });
        if (i >= 3) timings[which].push(performance.now() - start);
      }
    }
    rows.push({
      input: fixture.name,
      withP50: median(timings.with),
      withoutP50: median(timings.without),
      ratio: median(timings.with.map((ms, index) => ms / (timings.without[index] ?? ms))),
    });
  }
  return rows;
}
