#!/usr/bin/env bash
# Formats every C++ file of the project with clang-format (Debian's, style in .clang-format).
#   scripts/format.sh           rewrite files in place
#   scripts/format.sh --check   list unformatted files and exit 1 if there are any (CI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null 2>&1 || { echo "format: clang-format is missing (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files -co --exclude-standard -- 'cmd/*.cpp' 'cmd/*.h' 'pkg/*.cpp' 'pkg/*.h' \
  'test/*.cpp' 'test/*.h' 'bench/*.cpp' 'bench/*.h' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ "${#bad[@]}" -gt 0 ]; then
    printf 'format: %d file(s) not formatted (run scripts/format.sh):\n' "${#bad[@]}" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
