import { imagingSettings } from '../../functions/api/build';
import { loadConfig } from '../../functions/config';
import { SharpImageProcessor } from '../../functions/imaging/sharp-image-processor';

/** The imaging job with the settings a default deployment runs (the function's own defaults). */
export function defaultProcessor(): SharpImageProcessor {
  const config = loadConfig({ BUCKET_NAME: 'bench', TABLE_NAME: 'bench', PUBLIC_URL: 'https://bench.example' });
  return new SharpImageProcessor(imagingSettings(config));
}
