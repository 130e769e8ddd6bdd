#!/usr/bin/env bash
# Rebuilds functions/imaging/models/nsfw-mobilenet-v2-mid.onnx from nsfwjs's published weights, and checks it against
# nsfwjs's own model run by TensorFlow.js (docs/moderation.md, "The NSFW classifier"). Build-time only: the function
# loads the committed model and needs none of these tools. Needs the npm registry (nsfwjs, @tensorflow/tfjs,
# onnxruntime-node) and Python's onnx package (`pip install onnx==1.23.1`).
# Usage: scripts/nsfw-model/build.sh [PHOTO_FOLDER]   (photos to compare the two models on; noise is always used)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/functions/imaging/models/nsfw-mobilenet-v2-mid.onnx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

NSFWJS=4.4.0
npm pack --silent --pack-destination "$work" "nsfwjs@$NSFWJS" >/dev/null
tar xzf "$work/nsfwjs-$NSFWJS.tgz" -C "$work"
models="$work/package/dist/models/mobilenet_v2_mid"
node "$here/extract.cjs" "$models" "$work"
python3 -c 'import onnx' 2>/dev/null || { echo "Python's onnx package is needed: pip install onnx==1.23.1" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
python3 "$here/convert.py" "$work" "$out"

# the reference: nsfwjs's model as TensorFlow.js runs it, and onnxruntime as the function does
mkdir -p "$work/ref" "$work/photos"
echo '{"private":true}' > "$work/ref/package.json"
ONNXRUNTIME_NODE_INSTALL=skip npm install --silent --no-audit --no-fund --prefix "$work/ref" \
  @tensorflow/tfjs@4.22.0 onnxruntime-node@1.30.0
node "$here/verify.cjs" "$models" "$out" "$work/ref" "${1:-$work/photos}"
