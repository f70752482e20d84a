#!/usr/bin/env bash
# The test command (README, .ci/run): installs what is missing, builds the binaries with -Werror
# (RelWithDebInfo), runs the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (a
# -Werror Debug build) and fuzzes (scripts/unit.sh), and runs the end-to-end tests on a real
# control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) built from Go modules
# and cached outside the checkout.
#
# Three lanes, so a cold machine keeps both cores busy and the end-to-end tests (which mostly wait
# on timers) start early:
#   - the build chain (scripts/cluster/ci.sh --build-only), from the start: the control plane at
#     normal priority, then upstream's binary, the real node's binaries, the differential harness
#     and the image at the lowest;
#   - this script: kdesched's binaries, the docs check, then the end-to-end tests once the chain
#     has built the control plane (the tests that need its later stages wait for them);
#   - scripts/unit.sh, at group nice 10 once kdesched's binaries are built: the sanitizer build,
#     its unit tests and the fuzzing (the end-to-end tests run its kdesched through the live paths
#     at their end, and wait for its build). Above the chain's later stages (19): in a cold run
#     the sanitizer build then comes before the image, which only the last test needs (e0067ee's
#     cold run: the two shared the spare CPU, the ASan runs waited 659 s and the gtest binaries
#     and fuzzing overlapped incluster.sh).
# Each background lane has its own scheduler group (setsid starts one; nice alone ranks a process
# only inside its group): the group's nice value is what makes it yield. Their logs are printed
# after the end-to-end tests.
#   KDESCHED_SKIP_E2E=1   unit tests only (scripts/unit.sh in the foreground)
#   KDESCHED_SKIP_ASAN=1  the unit tests in the RelWithDebInfo build instead of the sanitizer one
#                         (in the foreground, before the end-to-end tests)
#   KDESCHED_CI_FUZZ=0    no fuzzing (scripts/fuzz.sh; KDESCHED_CI_FUZZ_SECONDS per target, default 20)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
JOBS="${JOBS:-2}"
passed=0
failed=0
started="$(date +%s)"
phase() { printf '\n== %s == [%ss]\n' "$*" "$(($(date +%s) - started))"; }

bash scripts/install-deps.sh
# ccache (installed by install-deps.sh, so looked for after it: a fresh machine's first run then
# fills the cache too) shares compiled objects between build trees and checkouts: paths are hashed
# relative to the checkout, so a fresh clone reuses what another one compiled.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${ROOT}" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

lanes="$(mktemp -d)"
go_build_pid=""
unit_pid=""
go_build_log="${lanes}/build-chain.log"
unit_log="${lanes}/unit.log"
# Both background lanes in their own process groups, so a run that stops early (a compile error)
# takes them along.
trap 'for p in ${go_build_pid} ${unit_pid}; do kill -TERM -- "-${p}" 2>/dev/null || true; done; rm -rf "${lanes}"' EXIT
if [ "${KDESCHED_SKIP_E2E:-0}" != 1 ]; then
  # The image (used by test/e2e/dockerfile.sh and incluster.sh) is the chain's last stage. The chain
  # marks each stage it passes in KDESCHED_CI_STAGES (scripts/cluster/ci.sh stage_done), and
  # lowers its own group's priority once the control plane is built.
  export KDESCHED_IMAGE_ARCHIVE="${lanes}/kdesched.oci.tar"
  export KDESCHED_CI_STAGES="${lanes}/stages"
  mkdir -p "${KDESCHED_CI_STAGES}"
  setsid bash scripts/cluster/ci.sh --build-only >"${go_build_log}" 2>&1 &
  go_build_pid=$!
fi

rc=0
phase "format (clang-format, .clang-format)"
bash scripts/format.sh --check || rc=1

# The unit tests are compiled once, in the sanitizer build: compiling them a second time cost a
# cold run about six minutes and found nothing the sanitizer run did not.
phase "build (RelWithDebInfo, -Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKDESCHED_WERROR=ON "${launcher[@]}" >/dev/null
# In the locale the image's build stage has (ccache hashes LANG and LC_*): scripts/image.sh's
# build then takes these objects from the cache.
env -u LC_ALL -u LC_CTYPE -u LC_MESSAGES LANG=C.UTF-8 \
  cmake --build build -j "${JOBS}" --target kdesched kdesched-gen kdesched-wire-compare

phase "docs (links and anchors, every flag and metric of the binary: test/docs/check.py)"
if python3 test/docs/check.py --binary build/kdesched; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  rc=1
fi

# unit_counts LOG: adds scripts/unit.sh's "unit: N passed, M failed" line; none counts as a failure.
unit_counts() {
  local counts
  counts="$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*$/\1 \2/p' "$1" | tail -n1)"
  if [ -z "${counts}" ]; then
    failed=$((failed + 1))
    return
  fi
  passed=$((passed + ${counts% *}))
  failed=$((failed + ${counts#* }))
}

if [ "${KDESCHED_SKIP_E2E:-0}" = 1 ] || [ "${KDESCHED_SKIP_ASAN:-0}" = 1 ]; then
  phase "unit tests and fuzzing (scripts/unit.sh)"
  bash scripts/unit.sh 2>&1 | tee "${unit_log}" || rc=1
  unit_counts "${unit_log}"
else
  phase "unit tests under ASan+UBSan and fuzzing: scripts/unit.sh in the background (its log after the end-to-end tests)"
  setsid bash -c 'echo 10 >/proc/self/autogroup 2>/dev/null || true; exec bash scripts/unit.sh' >"${unit_log}" 2>&1 &
  unit_pid=$!
fi

if [ "${KDESCHED_SKIP_E2E:-0}" != 1 ]; then
  phase "end-to-end on a real control plane"
  # Until the chain has built the control plane (its "cluster" stage) or ended.
  while [ ! -e "${KDESCHED_CI_STAGES}/cluster" ] && [ ! -e "${KDESCHED_CI_STAGES}/done" ] &&
    kill -0 "${go_build_pid}" 2>/dev/null; do sleep 2; done
  echo "control plane built: $(cat "${KDESCHED_CI_STAGES}/cluster" 2>/dev/null || echo "no, the chain ended early") (the step below retries a failed build in the foreground)"
  export KDESCHED_CI_BUILD_PID="${go_build_pid}" KDESCHED_CI_UNIT_PID="${unit_pid}"
  # The sanitizer build's kdesched also goes through the live paths (when scripts/unit.sh has
  # built it: its "asan" stage).
  asan_bin=""
  [ "${KDESCHED_SKIP_ASAN:-0}" = 1 ] || asan_bin="${ROOT}/build-asan/kdesched"
  if KDESCHED_BIN="${ROOT}/build/kdesched" KDESCHED_ASAN_BIN="${asan_bin}" bash scripts/cluster/ci.sh; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    rc=1
  fi
  lane_rc=0
  wait "${go_build_pid}" || lane_rc=$?
  echo
  echo "== the build chain, beside the rest (scripts/cluster/ci.sh --build-only, exit ${lane_rc})"
  sed 's/^/  /' "${go_build_log}"
fi

if [ -n "${unit_pid}" ]; then
  lane_rc=0
  wait "${unit_pid}" || lane_rc=$?
  [ "${lane_rc}" -eq 0 ] || rc=1
  echo
  echo "== scripts/unit.sh, beside the end-to-end tests (exit ${lane_rc})"
  cat "${unit_log}"
  unit_counts "${unit_log}"
fi

echo
echo "kdesched tests: ${passed} passed, ${failed} failed ($(($(date +%s) - started)) s)"
exit "${rc}"
