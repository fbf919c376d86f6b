#!/usr/bin/env bash
# Fuzzes every reader and parser with libFuzzer (Clang, AddressSanitizer + UBSan) for a bounded
# time each, from seed corpora made of ../shared/data and scenes/. Fails on any crash, sanitizer
# report, time-out (10 s per input) or allocation over 1 GB, and names the input that did it:
# keep it in tests/fuzz/regressions/<target>/, where the ordinary tests run it.
#   FUZZ_SECONDS    time per target (default 60)
#   FUZZ_BUILD_DIR  build tree (default build-fuzz); tools/run-tests.sh passes its sanitizer
#                   tree, configured with -DNCPKIT_FUZZ=ON, so that one build serves both
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=$(nproc 2>/dev/null || echo 2)
shared=${NCPKIT_SHARED_DIR:-../shared}

if [ ! -x "$build/tests/fuzz/fuzz_siconos_lcp" ]; then
  echo "== libFuzzer build (Clang, AddressSanitizer + UBSan)"
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCPKIT_FUZZ=ON \
    -DNCPKIT_BUILD_TESTS=OFF -DNCPKIT_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" -j "$jobs" >/dev/null

seed() {  # seed <target> <files...>: a fresh corpus of the seeds and the kept inputs
  local dir=$build/corpus/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/"; done
  cp tests/fuzz/regressions/"$(basename "$dir")"/* "$dir/" 2>/dev/null || true
}
seed siconos_lcp "$shared"/data/lcp/*.dat
seed siconos_mlcp "$shared"/data/mlcp/*.dat
seed siconos_fc3d tests/fuzz/seeds/*_fc3d.dat
seed matrix_market tests/fuzz/seeds/*.mtx
seed vector_file tests/fuzz/seeds/*.txt
seed scene scenes/*.json tests/data/hostile/*.json tests/data/explicit_boxes.json
seed trajectory_csv tests/fuzz/seeds/trajectory.csv

mkdir -p "$build"/findings
status=0
for target in siconos_lcp siconos_mlcp siconos_fc3d matrix_market vector_file scene trajectory_csv; do
  echo "== fuzz_$target for $seconds s"
  log=$build/findings/$target.log
  if ! "$build"/tests/fuzz/fuzz_$target "$build"/corpus/$target -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
      -artifact_prefix="$build"/findings/"$target"- -print_final_stats=1 >"$log" 2>&1; then
    status=1
    echo "FINDING in $target: $(grep -m1 -E 'ERROR|SUMMARY|fuzz finding|Test unit written' "$log" || true)"
    grep -E 'Test unit written to' "$log" | sed 's/^/  /' || true
    echo "  (keep the input in tests/fuzz/regressions/$target/; full log: $log)"
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' '
    echo
  fi
done
exit "$status"
