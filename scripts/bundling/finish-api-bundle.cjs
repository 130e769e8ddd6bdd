// The API asset's last bundling step (afterBundling in lib/service-functions.ts), run by `cdk synth` once esbuild
// made the bundle and npm installed its node modules. Node rather than shell commands, so that a deploy bundles alike
// on Linux, macOS and Windows. Usage: node finish-api-bundle.cjs OUTPUT_DIR MODEL_FILE ONNXRUNTIME_BINARIES_DIR
const { copyFileSync, existsSync, mkdirSync, rmSync } = require('node:fs');
const { basename, join } = require('node:path');

const [outputDir, modelFile, binariesDir] = process.argv.slice(2);
if (!outputDir || !modelFile || !binariesDir) {
  process.stderr.write('usage: node finish-api-bundle.cjs OUTPUT_DIR MODEL_FILE ONNXRUNTIME_BINARIES_DIR\n');
  process.exit(2);
}

// npm before the one of Node 20.12 ignores npm_config_libc and installs this machine's sharp binary instead of
// Lambda's: the function would fail at its first upload, so the synth fails here
const missing = ['sharp-linux-arm64', 'sharp-libvips-linux-arm64'].filter(
  (name) => !existsSync(join(outputDir, 'node_modules', '@img', name, 'package.json')),
);
if (missing.length > 0) {
  process.stderr.write(
    `the API bundle lacks ${missing.map((name) => `@img/${name}`).join(' and ')} (sharp's binary for Lambda's ` +
      `Linux arm64): bundle with Node >= 20.12, whose npm installs another platform's packages as asked\n`,
  );
  process.exit(1);
}

// the NSFW model beside index.js, where functions/imaging/nsfw-classifier.ts looks for it
mkdirSync(join(outputDir, 'models'), { recursive: true });
copyFileSync(modelFile, join(outputDir, 'models', basename(modelFile)));
// onnxruntime's binaries of other platforms (about 265 MB): the function keeps linux/arm64's
for (const platform of ['darwin', 'win32', join('linux', 'x64')])
  rmSync(join(outputDir, binariesDir, platform), { recursive: true, force: true });
