import { imageProcessor, imagingSettings } from '../../functions/roots/build';
import { loadConfig, type Config } from '../../functions/config';
import { SharpImageProcessor } from '../../functions/imaging/sharp-image-processor';

/** The function's own defaults, as a deployment without settings of its own runs them (but for `settings`). */
export function defaultConfig(settings: Record<string, string> = {}): ReturnType<typeof loadConfig> {
  return loadConfig({ BUCKET_NAME: 'bench', TABLE_NAME: 'bench', PUBLIC_URL: 'https://bench.example', ...settings });
}

/**
 * The imaging job as a default deployment runs it: its settings, and the NSFW classifier (`NSFW_POLICY` flag), unless
 * `settings` say otherwise.
 */
export function defaultProcessor(settings: Record<string, string> = {}): Promise<SharpImageProcessor> {
  return imageProcessor(defaultConfig(settings));
}

/** The imaging of a configuration without any moderation: no NSFW classifier, no perceptual hashes. */
export function unmoderatedProcessor(config: Readonly<Config>): SharpImageProcessor {
  return new SharpImageProcessor({ ...imagingSettings(config), withoutPerceptual: true });
}

/** One imaging job to its end: the renditions, and the classifier's score, which may come after them. */
export async function imagingJob(processor: SharpImageProcessor, input: Uint8Array): Promise<void> {
  await (
    await processor.process(input, { targetWidth: undefined })
  ).nsfwScoring;
}
