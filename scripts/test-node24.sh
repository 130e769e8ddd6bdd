#!/usr/bin/env bash
# The jest suites on Node.js 24, the functions' runtime on Lambda (nodejs24.x), while the project itself runs on the
# machine's Node (20 or newer). Node 24 comes as Node's own Linux build from the npm registry (scripts/node-build.sh).
# Arguments go to jest (a path runs one suite).
set -euo pipefail
cd "$(dirname "$0")/.."
version="${NODE24_VERSION:-24.21.0}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) arch="x64" ;;
  Linux-aarch64) arch="arm64" ;;
  *)
    echo "test:node24 runs on Linux (x86_64 or aarch64) only" >&2
    exit 1
    ;;
esac
bin="$(scripts/node-build.sh "$version" "$arch")"
export PATH="$bin:$PATH"
echo "jest on $(node --version)"
exec node node_modules/.bin/jest "$@"
