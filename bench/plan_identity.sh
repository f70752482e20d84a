#!/usr/bin/env bash
# bench/plan_identity.sh KDESCHED OUTDIR: every plan kdesched makes on the bundled inputs, for a
# refactor that must not change a byte. Run it with the binary before and after, then
# `diff -r BEFORE AFTER`.
#
# Inputs: each examples/*/ with its policy (examples/mixed under every policies/*.yaml), each
# test/testdata/*/ snapshot with its policy (or, without one, every policies/*.yaml), and the
# generated S2 and S3 snapshots (BENCH_IDENTITY_SIZES, "S2 S3") under every policies/*.yaml. Per
# input: the table, the JSON, and `--explain` (table and JSON) for every pod of a small snapshot
# or every 97th pod of S2 and 997th of S3. The plan time is fixed (--now), so ages do not move.
#
# Generated snapshots are cached in BENCH_IDENTITY_WORK (/tmp/kdesched-identity); kdesched-gen is
# taken from beside KDESCHED.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 KDESCHED OUTDIR" >&2; exit 2; }
BIN="$(readlink -f "$1")"
OUT="$2"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${BENCH_IDENTITY_WORK:-/tmp/kdesched-identity}"
SIZES="${BENCH_IDENTITY_SIZES:-S2 S3}"
NOW="2026-12-01T00:00:00Z"
mkdir -p "${OUT}" "${WORK}"

# pods SNAPSHOT STEP: "namespace/name" of every STEP-th pod of the snapshot.
pods() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
# A snapshot may be several JSON documents one after another (a list, then metrics-server's).
text, dec, at, items = open(sys.argv[1]).read(), json.JSONDecoder(), 0, []
while True:
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text):
        break
    doc, at = dec.raw_decode(text, at)
    items += doc["items"] if isinstance(doc, dict) and "items" in doc else [doc]
pods = [i for i in items if isinstance(i, dict) and i.get("kind") == "Pod"]
for p in pods[:: int(sys.argv[2])]:
    m = p["metadata"]
    print(m.get("namespace", "default") + "/" + m["name"])
EOF
}

# plan NAME SNAPSHOT POLICY STEP [EXTRA...]: the four outputs, exit codes included.
plan() {
  local name="$1" snap="$2" policy="$3" step="$4"; shift 4
  local args=(plan --snapshot "${snap}" --policy-config-file "${policy}" --now "${NOW}" "$@")
  local explain=() p rc
  for fmt in table json; do
    rc=0; "${BIN}" "${args[@]}" -o "${fmt}" >"${OUT}/${name}.${fmt}" 2>/dev/null || rc=$?
    echo "exit ${rc}" >>"${OUT}/${name}.${fmt}"
  done
  while read -r p; do explain+=(--explain "${p}"); done < <(pods "${snap}" "${step}")
  for fmt in table json; do
    rc=0; "${BIN}" "${args[@]}" "${explain[@]}" -o "${fmt}" >"${OUT}/${name}.explain.${fmt}" 2>/dev/null || rc=$?
    echo "exit ${rc}" >>"${OUT}/${name}.explain.${fmt}"
  done
}

for dir in "${ROOT}"/examples/*/; do
  ex="$(basename "${dir}")"
  if [ -f "${dir}policy.yaml" ]; then
    extra=()
    [ -f "${dir}prometheus-result.json" ] && extra=(--prometheus-result "${dir}prometheus-result.json")
    plan "example-${ex}" "${dir}snapshot.json" "${dir}policy.yaml" 1 "${extra[@]+"${extra[@]}"}"
  else
    for pol in "${ROOT}"/policies/*.yaml; do
      plan "example-${ex}-$(basename "${pol}" .yaml)" "${dir}snapshot.json" "${pol}" 1
    done
  fi
done

for dir in "${ROOT}"/test/testdata/*/; do
  [ -f "${dir}snapshot.json" ] || continue
  td="$(basename "${dir}")"
  if [ -f "${dir}policy.yaml" ]; then
    plan "testdata-${td}" "${dir}snapshot.json" "${dir}policy.yaml" 1
  else
    for pol in "${ROOT}"/policies/*.yaml; do
      plan "testdata-${td}-$(basename "${pol}" .yaml)" "${dir}snapshot.json" "${pol}" 1
    done
  fi
done

gen_args() {
  case "$1" in
    S2) echo "--nodes 1000 --pods 30000 --namespaces 300 --violations 150 --idle-share 0.005" ;;
    S3) echo "--nodes 5000 --pods 150000 --namespaces 3000 --violations 750 --idle-share 0.005" ;;
    *) echo "unknown size $1" >&2; exit 2 ;;
  esac
}
for size in ${SIZES}; do
  snap="${WORK}/${size}.json"
  # shellcheck disable=SC2046
  [ -s "${snap}" ] || "$(dirname "${BIN}")/kdesched-gen" $(gen_args "${size}") -o "${snap}" 2>/dev/null
  for pol in "${ROOT}"/policies/*.yaml; do
    step=97; [ "${size}" = S3 ] && step=997  # the explainer looks up each asked pod by name
    plan "${size}-$(basename "${pol}" .yaml)" "${snap}" "${pol}" "${step}"
  done
done
echo "plans written to ${OUT}: $(ls "${OUT}" | wc -l) files"
