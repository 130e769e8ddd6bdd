import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Bundles a function's entry with esbuild as the stack bundles the API function (`API_BUNDLING`): its node modules
 * left out (sharp, onnxruntime, the HEIC and BMP decoders, loaded from node_modules), and the NSFW model beside the
 * bundle, where the classifier looks for it. For the benches that load the bundle as Lambda would.
 */
export async function bundleApi(entry: string, outfile: string, options: { sourcemap?: boolean; minify?: boolean } = {}) {
  const { build } = await import('esbuild');
  const { API_BUNDLING, FUNCTIONS } = await import('../../lib/service-functions');
  const { NSFW_MODEL_FILE } = await import('../../functions/imaging/nsfw-classifier');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: API_BUNDLING.nodeModules ?? [],
    sourcemap: options.sourcemap ?? false,
    minify: options.minify ?? false,
    logLevel: 'warning',
  });
  mkdirSync(join(dirname(outfile), 'models'), { recursive: true });
  copyFileSync(join(FUNCTIONS, 'imaging', 'models', NSFW_MODEL_FILE), join(dirname(outfile), 'models', NSFW_MODEL_FILE));
}
