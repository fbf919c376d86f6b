#!/usr/bin/env bash
# Fuzzes every reader and parser with libFuzzer (Clang, AddressSanitizer + UBSan) for a bounded
# time each, from seed corpora made of ../shared/data and scenes/. Fails on any crash, sanitizer
# report, time-out (10 s per input) or allocation over 1 GB, and names the input that did it:
# keep it in tests/fuzz/regressions/<target>/, where the ordinary tests run it.
#   FUZZ_SECONDS  time per target (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
jobs=$(nproc 2>/dev/null || echo 2)
shared=${NCPKIT_SHARED_DIR:-../shared}

echo "== libFuzzer build (Clang)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCPKIT_FUZZ=ON \
  >/dev/null
cmake --build build-fuzz -j "$jobs"

seed() {  # seed <target> <files...>: a fresh corpus of the seeds and the kept inputs
  local dir=build-fuzz/corpus/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/"; done
  cp tests/fuzz/regressions/"$(basename "$dir")"/* "$dir/" 2>/dev/null || true
}
seed siconos_lcp "$shared"/data/lcp/*.dat
seed siconos_mlcp "$shared"/data/mlcp/*.dat
seed matrix_market tests/fuzz/seeds/*.mtx
seed vector_file tests/fuzz/seeds/*.txt
seed implicit_scene $(grep -L '"quasistatic"' scenes/*.json) tests/data/hostile/*.json
seed quasistatic_scene $(grep -l '"quasistatic"' scenes/*.json) tests/data/hostile/*.json

mkdir -p build-fuzz/findings
status=0
for target in siconos_lcp siconos_mlcp matrix_market vector_file implicit_scene quasistatic_scene; do
  echo "== fuzz_$target for $seconds s"
  log=build-fuzz/findings/$target.log
  if ! build-fuzz/tests/fuzz/fuzz_$target build-fuzz/corpus/$target -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
      -artifact_prefix=build-fuzz/findings/"$target"- -print_final_stats=1 >"$log" 2>&1; then
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
