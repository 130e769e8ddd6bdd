#!/usr/bin/env bash
# Node's own Linux build of a version for an architecture, published on the npm registry as node-linux-<arch>, fetched
# once into node_modules/.cache; prints the folder of its `node`. Usage: scripts/node-build.sh VERSION x64|arm64
# (npm run test:node24 runs the suites on it; test/support/arm64.ts runs the API bundle on arm64's under qemu).
set -euo pipefail
cd "$(dirname "$0")/.."
version="$1"
arch="$2"
dir="node_modules/.cache/node-$version-linux-$arch"
if [ ! -x "$dir/bin/node" ]; then
  # unpacked beside it, then moved into place whole: an interrupted fetch leaves no half of it behind
  partial="$dir.partial"
  rm -rf "$partial"
  mkdir -p "$partial"
  tarball="$(npm pack "node-linux-$arch@$version" --pack-destination "$partial" --silent)"
  tar -xzf "$partial/$tarball" -C "$partial" --strip-components=1
  rm "$partial/$tarball"
  rm -rf "$dir"
  mv "$partial" "$dir"
fi
echo "$PWD/$dir/bin"
