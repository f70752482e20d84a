#!/usr/bin/env bash
# Builds the libFuzzer targets (clang++, -fsanitize=fuzzer,address,undefined; build tree
# build-fuzz/) and runs each one for a bounded time.
#   scripts/fuzz.sh [--seconds N] [target...]   N seconds per target (default 60); all targets by default
#   scripts/fuzz.sh --list                      the target names
#   FUZZ_JOBS=1                                  targets fuzzed at once (default 2)
# Seeds: test/fuzz/seeds/<target>/, test/fuzz/regressions/<target>/ and the repository's example
# snapshots and policies; what a run discovers is kept in build-fuzz/corpus/<target>/ for the next.
# Exits 1 on any finding (crash, sanitizer report, leak, timeout, out-of-memory) and prints the
# input's path; such an input belongs in test/fuzz/regressions/<target>/ with its fix.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

all_targets=(snapshot_json snapshot_yaml yaml_json policy quantity label_selector kubeconfig list_page watch_event
             protobuf_list protobuf_watch)
seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#--seconds=}"; shift ;;
    --list) printf '%s\n' "${all_targets[@]}"; exit 0 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ "${#targets[@]}" -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" ${t} "* ]] || { echo "fuzz: unknown target ${t} (--list)" >&2; exit 2; }
done

# Inputs are bounded so that a finding is about the code, not the input's size.
max_len() {
  case "$1" in
    quantity) echo 64 ;;
    label_selector) echo 512 ;;
    kubeconfig) echo 4096 ;;
    yaml_json | policy) echo 8192 ;;
    snapshot_yaml | watch_event) echo 16384 ;;
    *) echo 32768 ;;
  esac
}

# test/fuzz/dict/<name>.dict: tokens the mutator splices in (keys, operators, suffixes).
dict_of() {
  case "$1" in
    snapshot_json | snapshot_yaml | list_page | watch_event) echo kube ;;
    yaml_json | policy | kubeconfig) echo yaml ;;
    label_selector) echo selector ;;
    quantity) echo quantity ;;
    protobuf_list | protobuf_watch) echo protobuf ;;
  esac
}

# Repository data a target starts from, besides its committed seeds.
repo_seeds() {
  case "$1" in
    snapshot_json) ls examples/*/snapshot.json test/testdata/*/snapshot.json ;;
    snapshot_yaml) ls test/testdata/*/snapshot.yaml ;;
    yaml_json) ls policies/*.yaml test/testdata/*/*.yaml ;;
    policy) ls policies/*.yaml examples/*/policy.yaml test/testdata/*/policy.yaml ;;
  esac 2>/dev/null || true
}

command -v clang++ >/dev/null 2>&1 || { echo "fuzz: clang++ is missing (scripts/install-deps.sh)" >&2; exit 2; }
slot=()
[ -x /work/bin/buildslot ] && slot=(/work/bin/buildslot)
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-${ROOT}}" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
BUILD="${KDESCHED_FUZZ_BUILD:-build-fuzz}"

# -O1 without NDEBUG: fast enough to fuzz, and assert() still fires.
start=${SECONDS}
"${slot[@]}" cmake -S . -B "${BUILD}" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DKDESCHED_FUZZ=ON -DKDESCHED_TESTS=OFF "${launcher[@]}" >/dev/null
"${slot[@]}" cmake --build "${BUILD}" -j "${JOBS:-2}" --target "${targets[@]/#/fuzz_}"
echo "fuzz: built in $((SECONDS - start)) s"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# One target: fuzz it, then write its summary line (and the findings' paths) to ${BUILD}/result_<t>.
run_target() {
  local t="$1" corpus="${BUILD}/corpus/$1" seeds="${BUILD}/seeds/$1" out="${BUILD}/findings/$1"
  local log="${BUILD}/fuzz_$1.log" stamp="${BUILD}/.fuzz-start-$1" rc=0
  rm -rf "${seeds}"
  mkdir -p "${corpus}" "${seeds}" "${out}"
  for f in $(repo_seeds "${t}"); do cp "${f}" "${seeds}/$(echo "${f}" | tr / _)"; done
  local dirs=("${corpus}" "${seeds}")
  for d in "test/fuzz/seeds/${t}" "test/fuzz/regressions/${t}"; do [ -d "${d}" ] && dirs+=("${d}"); done
  # libFuzzer ends without running destructors: the kubeconfig target's scratch directory would
  # outlive the run in /tmp, so it goes to a per-target TMPDIR that is emptied afterwards.
  local tmp
  tmp="$(cd "${BUILD}" && pwd)/tmp/${t}"
  mkdir -p "${tmp}"
  touch "${stamp}"
  TMPDIR="${tmp}" "${slot[@]}" "${BUILD}/fuzz_${t}" -max_total_time="${seconds}" -max_len="$(max_len "${t}")" -timeout=10 \
    -rss_limit_mb=2048 -dict="test/fuzz/dict/$(dict_of "${t}").dict" -print_final_stats=1 \
    -artifact_prefix="${out}/" "${dirs[@]}" >"${log}" 2>&1 || rc=$?
  rm -rf "${tmp}"
  local execs corp new
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "${log}" | tail -n1)"
  corp="$(find "${corpus}" -type f | wc -l)"
  new="$(find "${out}" -type f -newer "${stamp}" ! -name 'slow-unit-*' | sort | tr '\n' ' ')"
  if [ "${rc}" -ne 0 ] || [ -n "${new}" ]; then
    printf '%-15s %10s execs %6s corpus  FINDING (exit %s, log %s): %s\n' "${t}" "${execs:-?}" "${corp}" "${rc}" \
      "${log}" "${new:-no input saved}" >"${BUILD}/result_${t}"
  else
    printf '%-15s %10s execs %6s corpus  no findings\n' "${t}" "${execs:-?}" "${corp}" >"${BUILD}/result_${t}"
  fi
}

# Targets run ${FUZZ_JOBS} at a time (default 2: one per core of the CI machine).
for t in "${targets[@]}"; do
  rm -f "${BUILD}/result_${t}"
  echo "fuzz: ${t} for ${seconds} s (log ${BUILD}/fuzz_${t}.log)"
  run_target "${t}" &
  while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-2}" ]; do wait -n || true; done
done
wait
findings=0
for t in "${targets[@]}"; do
  if ! [ -f "${BUILD}/result_${t}" ] || grep -q FINDING "${BUILD}/result_${t}"; then
    findings=$((findings + 1))
    tail -n 30 "${BUILD}/fuzz_${t}.log" >&2 || true
  fi
done
echo
for t in "${targets[@]}"; do cat "${BUILD}/result_${t}" 2>/dev/null || echo "${t}: no result (the run was cut short)"; done
echo "fuzz: ${#targets[@]} target(s), ${findings} with findings, $((SECONDS - start)) s in all"
[ "${findings}" -eq 0 ]
