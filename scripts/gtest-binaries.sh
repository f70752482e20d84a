#!/usr/bin/env bash
# Runs every GoogleTest binary of a build tree (the ones its ctest lists) whole, one process for
# all of a binary's tests, JOBS (2) at a time, and prints the failing binaries' output. scripts/test.sh
# uses it for the sanitizer build: there a process costs 0.3-0.5 s to start (a 120 MB Debug+ASan
# binary), so ctest's one process per test took 320 s for 1809 tests and this takes about 30.
# A test still fails on its own (gtest reports each); a crash ends the rest of its binary, which
# then counts as one more failure.
#   scripts/gtest-binaries.sh BUILD_DIR
# Last line: "gtest binaries: N passed, M failed"; exit 1 when anything failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$(cd "${1:?usage: scripts/gtest-binaries.sh BUILD_DIR}" && pwd)"
jobs="${JOBS:-2}"
limit="${KDESCHED_GTEST_TIMEOUT:-1200}"
out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT

mapfile -t bins < <(ctest --test-dir "${dir}" --show-only=json-v1 |
  python3 -c 'import json, sys; print("\n".join(sorted({t["command"][0] for t in json.load(sys.stdin)["tests"]})))')
if [ "${#bins[@]}" -eq 0 ] || [ -z "${bins[0]}" ]; then
  echo "gtest-binaries: ctest lists no tests in ${dir}" >&2
  echo "gtest binaries: 0 passed, 1 failed"
  exit 1
fi

# What ctest would set (CMakeLists.txt, gtest_discover_tests ENVIRONMENT), then run from the build
# tree as ctest does.
export LSAN_OPTIONS="suppressions=${ROOT}/test/unit/lsan.supp${LSAN_OPTIONS:+:${LSAN_OPTIONS}}"
cd "${dir}"
printf '%s\n' "${bins[@]}" | xargs -P "${jobs}" -I{} bash -c '
  b="$(basename "$1")"; s="$(date +%s)"
  rc=0; timeout "$2" "$1" --gtest_brief=1 >"$3/${b}.log" 2>&1 || rc=$?
  echo "${rc}" >"$3/${b}.rc"
  echo "  ${b}: exit ${rc} in $(($(date +%s) - s)) s"' _ {} "${limit}" "${out}"

passed=0
failed=0
rc=0
for bin in "${bins[@]}"; do
  b="$(basename "${bin}")"
  brc="$(cat "${out}/${b}.rc" 2>/dev/null || echo 1)"
  p="$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "${out}/${b}.log" | tail -n1)"
  f="$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below.*/\1/p' "${out}/${b}.log" | tail -n1)"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "${brc}" != 0 ]; then
    rc=1
    [ -n "${f}" ] || failed=$((failed + 1)) # a crash, a sanitizer report at exit or the time limit
    echo "== ${b}: exit ${brc}$([ "${brc}" = 124 ] && echo " (over ${limit} s)")"
    cat "${out}/${b}.log"
  fi
done
echo "gtest binaries: ${passed} passed, ${failed} failed"
exit "${rc}"
