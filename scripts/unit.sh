#!/usr/bin/env bash
# The unit half of the test command (scripts/test.sh runs it, in the background beside the
# end-to-end tests when both run): every test built with -Werror -fsanitize=address,undefined (Debug,
# build tree build-asan) and each test binary run whole (scripts/gtest-binaries.sh), then fuzzing
# (scripts/fuzz.sh). With KDESCHED_SKIP_ASAN=1 the tests are built in the RelWithDebInfo tree
# (build) and run by ctest instead.
#   KDESCHED_CI_FUZZ=0            no fuzzing (KDESCHED_CI_FUZZ_SECONDS per target, default 20)
#   KDESCHED_CI_STAGES=DIR        writes DIR/asan ("exit N") once the sanitizer build has ended: the
#                                 end-to-end tests run its kdesched through the live paths and wait
#                                 for that file (scripts/cluster/ci.sh await_stage)
# Last line: "unit: N passed, M failed"; exit 1 when anything failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
JOBS="${JOBS:-2}"
passed=0
failed=0
rc=0
started="$(date +%s)"
phase() { printf '\n== %s == [%ss]\n' "$*" "$(($(date +%s) - started))"; }
# fail_one: a step that gave no count (a build that failed, a runner without its summary line).
fail_one() { failed=$((failed + 1)); rc=1; }

launcher=()
if command -v ccache >/dev/null 2>&1; then
  # Paths hashed relative to the checkout, as in scripts/test.sh.
  export CCACHE_BASEDIR="${ROOT}" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# The sanitizer build's tests, each binary whole (scripts/gtest-binaries.sh says why).
run_gtest_binaries() {
  local log counts brc=0
  log="$(mktemp)"
  bash scripts/gtest-binaries.sh "$1" 2>&1 | tee "${log}" || brc=$?
  counts="$(sed -n 's/^gtest binaries: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "${log}" | tail -n1)"
  rm -f "${log}"
  if [ -z "${counts}" ]; then fail_one; return; fi
  passed=$((passed + ${counts% *}))
  failed=$((failed + ${counts#* }))
  [ "${brc}" -eq 0 ] || rc=1
}

# ctest prints "N tests failed out of M"; count from its summary line.
run_ctest() {
  local log total fails crc=0
  log="$(mktemp)"
  ctest --test-dir "$1" --output-on-failure -j "${JOBS}" 2>&1 | tee "${log}" || crc=$?
  total="$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "${log}" | tail -n1)"
  fails="$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1/p' "${log}" | tail -n1)"
  rm -f "${log}"
  if [ -z "${total}" ]; then fail_one; return; fi
  passed=$((passed + total - fails))
  failed=$((failed + fails))
  [ "${crc}" -eq 0 ] || rc=1
}

if [ "${KDESCHED_SKIP_ASAN:-0}" != 1 ]; then
  phase "unit tests under -fsanitize=address,undefined (Debug, -Werror)"
  brc=0
  { cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKDESCHED_WERROR=ON -DKDESCHED_SANITIZE=ON \
    "${launcher[@]}" >/dev/null && cmake --build build-asan -j "${JOBS}"; } || brc=$?
  [ -z "${KDESCHED_CI_STAGES:-}" ] || echo "exit ${brc}" >"${KDESCHED_CI_STAGES}/asan"
  if [ "${brc}" -eq 0 ]; then
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_gtest_binaries build-asan
  else
    fail_one
  fi
else
  phase "unit tests (RelWithDebInfo)"
  if cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKDESCHED_WERROR=ON "${launcher[@]}" >/dev/null &&
    cmake --build build -j "${JOBS}"; then
    run_ctest build
  else
    fail_one
  fi
fi

if [ "${KDESCHED_CI_FUZZ:-1}" != 0 ]; then
  phase "fuzzing (libFuzzer + ASan + UBSan, ${KDESCHED_CI_FUZZ_SECONDS:-20} s per target)"
  if bash scripts/fuzz.sh --seconds "${KDESCHED_CI_FUZZ_SECONDS:-20}"; then
    passed=$((passed + 1))
  else
    fail_one
  fi
fi

echo "unit: ${passed} passed, ${failed} failed ($(($(date +%s) - started)) s)"
exit "${rc}"
