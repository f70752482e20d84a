#!/usr/bin/env bash
# Runs the differential tester on demand: kdesched plan against upstream descheduler v0.36's real
# plugin code on seeded random clusters (see test/differential/README.md).
#
#   test/differential/run.sh --seeds 500 --plugin RemovePodsViolatingNodeAffinity [--start 1]
#   test/differential/run.sh --seeds 100 --plugin existing --switches --out /tmp/diff
#   test/differential/run.sh --replay test/differential/cases
#
# Every other argument goes to run.py (--help lists them). The harness is built (or found in the
# cache) by build-harness.sh; kdesched is $KDESCHED or build/kdesched (override with --kdesched).
# Both the harness build and the run hold a build slot (/work/bin/buildslot when present).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
slot=()
if [ -x /work/bin/buildslot ] && [ -z "${KDESCHED_IN_SLOT:-}" ]; then slot=(/work/bin/buildslot env KDESCHED_IN_SLOT=1); fi

harness="$("${here}/build-harness.sh" --print-bin)"
[ -x "${harness}" ] || "${slot[@]}" "${here}/build-harness.sh" >&2
args=("$@")
case " $* " in
  *" --kdesched "*) ;;
  *) kd="${KDESCHED:-${root}/build/kdesched}"
     [ -x "${kd}" ] || { echo "run.sh: no kdesched at ${kd} (build it, or pass --kdesched / set KDESCHED)" >&2; exit 2; }
     args+=(--kdesched "${kd}") ;;
esac
exec "${slot[@]}" python3 "${here}/run.py" --harness "${harness}" "${args[@]}"
