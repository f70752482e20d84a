#!/usr/bin/env bash
# The differential tester's fixed seed set for CI: seeds 1-100 of each plugin kdesched implements
# (about 3 minutes on 2 cores with a warm harness), failing on any difference that no known
# deliberate difference explains, and on any error of either side.
# Not wired into scripts/test.sh (the lead decides); run it by hand or from CI:
#
#   test/differential/ci.sh                  # kdesched: $KDESCHED or build/kdesched
#   test/differential/ci.sh --switches       # classify by kdesched's compat switches once they exist
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "${here}/run.sh" --plugin existing --start 1 --seeds "${CI_SEEDS:-100}" --budget 15 \
  --out "${OUT:-${TMPDIR:-/tmp}/kdesched-differential-ci}" --fail-on-unexplained -q "$@"
