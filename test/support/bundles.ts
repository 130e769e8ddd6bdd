import { cpSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** onnxruntime's binaries, of which the bundle keeps only Lambda's (linux/arm64). */
const ONNXRUNTIME_BINARIES = join('node_modules', 'onnxruntime-node', 'bin', 'napi-v6');

/**
 * A copy of a synthesized function asset that runs on this machine: the bundle as `cdk synth` wrote it, with sharp's
 * and onnxruntime's Linux arm64 binaries (which only run on Lambda's Graviton) joined by this machine's own, from the
 * project's install. Nothing else is changed, so the copy loads exactly the code and modules Lambda would.
 */
export function runnableCopy(asset: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'asset-'));
  cpSync(asset, copy, { recursive: true });
  const images = join(copy, 'node_modules', '@img');
  if (existsSync(images)) {
    for (const name of readdirSync(join(ROOT, 'node_modules', '@img'))) {
      if (!existsSync(join(images, name)))
        cpSync(join(ROOT, 'node_modules', '@img', name), join(images, name), { recursive: true });
    }
  }
  const onnxruntime = join(copy, ONNXRUNTIME_BINARIES);
  if (existsSync(onnxruntime)) {
    const own = join(process.platform, process.arch);
    if (!existsSync(join(onnxruntime, own)))
      cpSync(join(ROOT, ONNXRUNTIME_BINARIES, own), join(onnxruntime, own), { recursive: true });
  }
  return copy;
}
