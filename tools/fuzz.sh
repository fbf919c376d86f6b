#!/usr/bin/env bash
# Fuzzes every reader and parser with libFuzzer (Clang, AddressSanitizer + UBSan) for a bounded
# time each (a share of FUZZ_SECONDS, by how long its coverage keeps growing), from seed corpora
# made of ../shared/data and scenes/. Fails on any crash, sanitizer report, time-out (10 s per
# input) or allocation over 1 GB, and names the input that did it: keep it in
# tests/fuzz/regressions/<target>/, where the ordinary tests run it.
#   FUZZ_SECONDS    the time unit of the shares below (default 60: 90 s for scene files, 20 s
#                   for vector files; 5.4 min of fuzzing, 2.75 min on two cores)
#   FUZZ_BUILD_DIR  build tree (default build-fuzz); tools/run-tests.sh passes its sanitizer
#                   tree, configured with -DNCPKIT_FUZZ=ON, so that one build serves both
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
if ! [[ $seconds =~ ^[1-9][0-9]{0,5}$ ]]; then
  echo "fuzz.sh: FUZZ_SECONDS must be a whole number of seconds from 1 to 999999, not '$seconds'" >&2
  exit 2
fi
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
seed scene scenes/*.json tests/data/hostile/*.json tests/data/legacy/*.json \
  tests/data/explicit_boxes.json tests/fuzz/seeds/convex_scene.json
seed trajectory_csv tests/fuzz/seeds/trajectory.csv
seed mesh_file tests/fuzz/seeds/mesh_*
seed mjcf tests/fuzz/seeds/*.xml

mkdir -p "$build"/findings
# Percent of FUZZ_SECONDS per target. Over 60 s each, the scene files' and MJCF models' coverage
# still grew in the second half of their runs' inputs (14,894 to 16,605 and 7,486 to 8,008 edges), FC3D files', the
# slowest to run, by 4 %, and the others' by 0-3 % (Siconos LCP 3,143 to 3,224; vector files
# none): those get the time, and the small formats a third of it.
share() {
  case $1 in
    scene) echo 150 ;;
    mjcf) echo 100 ;;
    siconos_fc3d) echo 75 ;;
    siconos_lcp) echo 50 ;;
    *) echo 33 ;;
  esac
}
# At least 1 s: libFuzzer's -max_total_time=0 would run without end.
target_seconds() {
  local t=$(((seconds * $(share "$1") + 50) / 100))
  echo $((t > 0 ? t : 1))
}

# fuzz_one <target>: one target for its time; its verdict in findings/<target>.verdict.
fuzz_one() {
  local target=$1 log=$build/findings/$1.log verdict=$build/findings/$1.verdict
  if ! "$build"/tests/fuzz/fuzz_$target "$build"/corpus/$target \
      -max_total_time="$(target_seconds "$target")" \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
      -artifact_prefix="$build"/findings/"$target"- -print_final_stats=1 >"$log" 2>&1; then
    {
      echo "FINDING in $target: $(grep -m1 -E 'ERROR|SUMMARY|fuzz finding|Test unit written' "$log" || true)"
      grep -E 'Test unit written to' "$log" | sed 's/^/  /' || true
      echo "  (keep the input in tests/fuzz/regressions/$target/; full log: $log)"
    } >"$verdict"
    return 1
  fi
  echo "$(grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' ')" >"$verdict"
}

# The targets run side by side, one per core (each libFuzzer process is single-threaded), the
# longest first, so that the short ones fill in around them.
targets="scene mjcf siconos_fc3d siconos_lcp siconos_mlcp matrix_market vector_file trajectory_csv
  mesh_file"
status=0
running=0
for target in $targets; do
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
for target in $targets; do
  echo "== fuzz_$target for $(target_seconds "$target") s: $(cat "$build"/findings/$target.verdict)"
done
exit "$status"
