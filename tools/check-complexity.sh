#!/usr/bin/env bash
# Checks that no function of ncpkit's own code is over the .clang-tidy limits: cognitive
# complexity 40 everywhere (readability-function-cognitive-complexity), and 60 lines in
# integrators/ (readability-function-size, integrators/.clang-tidy); clang-tidy on every source
# file of a build configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (and without
# CMAKE_UNITY_BUILD, so that each file is parsed on its own). Prints each function over a limit,
# and each error of a file that does not compile, and exits 1 if there is one.
# Usage: tools/check-complexity.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-complexity: $build/compile_commands.json missing (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
fi
jobs=$(nproc 2>/dev/null || echo 2)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Every translation unit of the project's folders (not generated files or third_party).
run-clang-tidy -p "$build" -j "$jobs" -quiet \
  "$(pwd)/(solvers|readers|fixtures|dynamics|contact|integrators|viewer|apps|python|bench|tests|examples)/" \
  >"$out" 2>&1 || true
sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -E 'readability-function-(cognitive-complexity|size)' | sort -u >"$out.hits" || true
checked=$(grep -c '^clang-tidy' "$out" || true)
# A file clang cannot compile on its own (a missing include, which a unity build hides) is
# neither checked nor allowed.
if sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -E ': error: ' | sort -u >"$out.errors" && [ -s "$out.errors" ]; then
  echo "files that do not compile on their own:"
  cat "$out.errors"
  rm -f "$out.hits" "$out.errors"
  exit 1
fi
rm -f "$out.errors"
if [ -s "$out.hits" ]; then
  echo "functions over a size or complexity limit (.clang-tidy):"
  cat "$out.hits"
  rm -f "$out.hits"
  exit 1
fi
rm -f "$out.hits"
if [ "$checked" -eq 0 ]; then
  echo "check-complexity: clang-tidy checked no file" >&2
  sed 's/\x1b\[[0-9;]*m//g' "$out" | tail -20 >&2
  exit 2
fi
echo "complexity: every function within the limit ($checked files checked)"
