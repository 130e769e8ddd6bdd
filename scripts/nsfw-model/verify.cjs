// Checks the converted model against nsfwjs's own, run by TensorFlow.js, on the same pixels: each photo of a folder
// (and a few of noise) at 224x224, both models' five scores, and the largest difference. Also prints the scores, so
// a run on safe photos shows how far they are from being flagged. Usage:
//   node verify.cjs NSFWJS_MODEL_DIR MODEL.onnx REF_DIR PHOTO_FOLDER
// REF_DIR is a folder where @tensorflow/tfjs and onnxruntime-node are installed (build.sh makes one).
'use strict';
const { createRequire } = require('node:module');
const { readdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const sharp = require('sharp');

const CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'];

async function main() {
  const [modelDir, onnxFile, refDir, photoDir] = process.argv.slice(2).map((path) => resolve(path));
  const requireRef = createRequire(join(refDir, 'package.json'));
  const tf = requireRef('@tensorflow/tfjs');
  const ort = requireRef('onnxruntime-node');
  const modelJson = require(join(modelDir, 'model.min.js'));
  const weights = Buffer.concat(
    modelJson.weightsManifest[0].paths.map((name) => Buffer.from(require(join(modelDir, `${name}.min.js`)), 'base64')),
  );
  const reference = await tf.loadGraphModel(
    tf.io.fromMemory({
      modelTopology: modelJson.modelTopology,
      weightSpecs: modelJson.weightsManifest[0].weights,
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.length),
    }),
  );
  const session = await ort.InferenceSession.create(onnxFile);
  const inputs = [];
  for (const name of readdirSync(photoDir).sort()) {
    const pixels = await sharp(join(photoDir, name))
      .removeAlpha()
      .toColourspace('srgb')
      .resize(224, 224, { fit: 'fill' })
      .raw()
      .toBuffer();
    inputs.push({ name, pixels: pixels.length === 224 * 224 * 3 ? pixels : undefined });
  }
  for (let seed = 1; seed <= 3; seed += 1) {
    const pixels = Buffer.alloc(224 * 224 * 3);
    let state = seed;
    for (let i = 0; i < pixels.length; i += 1) pixels[i] = (state = (state * 1103515245 + 12345) >>> 0) >>> 24;
    inputs.push({ name: `noise ${seed}`, pixels });
  }
  let worst = 0;
  for (const { name, pixels } of inputs) {
    if (!pixels) continue;
    const expected = tf.tidy(() =>
      reference
        .predict(
          tf.tensor4d(
            Float32Array.from(pixels, (value) => value / 255),
            [1, 224, 224, 3],
          ),
        )
        .dataSync(),
    );
    const { scores } = await session.run({ pixels: new ort.Tensor('uint8', pixels, [1, 224, 224, 3]) });
    const difference = Math.max(...CLASSES.map((_, index) => Math.abs(scores.data[index] - expected[index])));
    worst = Math.max(worst, difference);
    const shown = CLASSES.map((label, index) => `${label} ${scores.data[index].toFixed(3)}`).join(', ');
    process.stdout.write(`${name}: ${shown}; differs from tfjs by ${difference.toExponential(1)}\n`);
  }
  process.stdout.write(`largest difference from tfjs: ${worst.toExponential(2)}\n`);
  if (!(worst < 1e-4)) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
