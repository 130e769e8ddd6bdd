#!/usr/bin/env bash
# The type check and the lint of `npm test`, side by side (each about as long as the other, and each mostly one core):
# both run to the end, so both report, and the script fails if either did.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run -s typecheck &
typecheck=$!
npm run -s lint &
lint=$!
failed=0
wait "$typecheck" || failed=1
wait "$lint" || failed=1
exit "$failed"
