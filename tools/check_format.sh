#!/usr/bin/env bash
# clang-format check of the C, C++ and CUDA sources (.clang-format at the top of the tree), as CI
# runs it (.ci/run): lists every file whose formatting differs and exits 1, or exits 0.
#   bash tools/check_format.sh            # the files changed relative to the base below
#   bash tools/check_format.sh BASE       # the files changed relative to BASE (a commit or branch)
#   bash tools/check_format.sh --all      # every tracked file
# Changed files: those that differ between BASE and the working tree, plus untracked ones (a
# deleted file is not checked). The default BASE is the merge-base of HEAD and origin/main, or
# HEAD~1 where there is no origin/main (a clone of main itself: its last commit); without
# either (a single-commit clone) every file is checked. CLANG_FORMAT names the program
# (default clang-format; the tree is formatted with clang-format 14, and other versions may
# format a few constructs differently).
# Formatting a file in place: clang-format -i FILE.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clang_format=${CLANG_FORMAT:-clang-format}
patterns=('*.c' '*.cc' '*.cpp' '*.cxx' '*.h' '*.hh' '*.hpp' '*.cu' '*.cuh')

usage() {
  echo "usage: bash tools/check_format.sh [--all | BASE]" >&2
  exit 2
}
(($# <= 1)) || usage
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check_format: $clang_format not found (Debian: apt-get install clang-format; or set CLANG_FORMAT)" >&2
  exit 2
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check_format: $root is not a git work tree: nothing to compare against" >&2
  exit 2
fi

all=0
base=""
case "${1:-}" in
  --all) all=1 ;;
  -*) usage ;;
  "")
    if git rev-parse --verify -q origin/main >/dev/null; then
      base=$(git merge-base HEAD origin/main)
    elif git rev-parse --verify -q HEAD~1 >/dev/null; then
      base=HEAD~1
    else
      echo "check_format: no origin/main and no HEAD~1: checking every file" >&2
      all=1
    fi
    ;;
  *)
    git rev-parse --verify -q "$1^{commit}" >/dev/null || {
      echo "check_format: $1 is not a commit" >&2
      exit 2
    }
    base=$1
    ;;
esac

files=()
if ((all)); then
  while IFS= read -r -d '' f; do files+=("$f"); done < <(git ls-files -z -- "${patterns[@]}" ':(exclude)tests/data/**')
else
  while IFS= read -r -d '' f; do files+=("$f"); done < <(
    git diff -z --name-only --diff-filter=d "$base" -- "${patterns[@]}" ':(exclude)tests/data/**'
    git ls-files -z --others --exclude-standard -- "${patterns[@]}" ':(exclude)tests/data/**')
fi

if ((${#files[@]} == 0)); then
  echo "check_format: no C, C++ or CUDA file changed${base:+ since $base}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue
  "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
version=$("$clang_format" --version)
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted as .clang-format says ($version):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "format them with: clang-format -i FILE ... (see the differences with: clang-format --dry-run FILE)" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted ($version)"
