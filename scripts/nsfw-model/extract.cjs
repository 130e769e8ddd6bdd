// Reads nsfwjs's MobileNetV2Mid graph model (its model.json and weight shards, shipped as UMD modules inside the npm
// package) and writes what convert.py needs: graph.json (the nodes and the weights' manifest) and weights.bin (the
// shards, concatenated in the manifest's order). Usage: node extract.cjs MODEL_DIR OUT_DIR
'use strict';
const { readdirSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const [modelDir, outDir] = process.argv.slice(2).map((path) => resolve(path));
if (!modelDir || !outDir) throw new Error('usage: node extract.cjs MODEL_DIR OUT_DIR');
const model = require(join(modelDir, 'model.min.js'));
const manifest = model.weightsManifest;
if (manifest.length !== 1) throw new Error(`expected one weight group, found ${manifest.length}`);
const shards = manifest[0].paths.map((name) => {
  const file = readdirSync(modelDir).find((entry) => entry === `${name}.min.js`);
  if (!file) throw new Error(`shard ${name} is missing`);
  return Buffer.from(require(join(modelDir, file)), 'base64');
});
const nodes = model.modelTopology.node.filter((node) => node.op !== 'Const');
writeFileSync(join(outDir, 'graph.json'), JSON.stringify({ nodes, weights: manifest[0].weights }, null, 1));
writeFileSync(join(outDir, 'weights.bin'), Buffer.concat(shards));
process.stdout.write(`${nodes.length} nodes, ${manifest[0].weights.length} weights, ${Buffer.concat(shards).length} bytes\n`);
