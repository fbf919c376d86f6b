#!/usr/bin/env bash
# Checks ncpkit as other projects use it, from the Release tree `build`:
#   1. `cmake --install build --prefix P`, then examples/consumer configured against P
#      (find_package(ncpkit)), built and run; the Python package's tests on the installed
#      package; the installed program runs a scene from P/share;
#   2. the same example compiled with `pkg-config --cflags --libs ncpkit` alone, and every
#      installed header compiled on its own with those flags;
#   3. examples/subproject: ncpkit through add_subdirectory, with tests and benchmarks off by
#      default (only the example's target is built).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
work=build/install-check
rm -rf "$work"
prefix=$PWD/$work/prefix

echo "-- cmake --install build --prefix $prefix"
cmake --install build --prefix "$prefix" >/dev/null

echo "-- examples/consumer with find_package(ncpkit)"
cmake -S examples/consumer -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" -j "$jobs" >/dev/null
"$work/consumer/path_example" >/dev/null

echo "-- the installed Python package: pytest in a fresh Debian interpreter, from outside the tree"
# In the background, beside the steps below: most of its tests run one process at a time, and
# the subproject's build takes the other core.
site=$(cd "$prefix" && ls -d lib/python3*/dist-packages)
(cd / && PYTHONPATH="$prefix/$site" MPLBACKEND=Agg NCPKIT_SHARED_DIR="${NCPKIT_SHARED_DIR:-$OLDPWD/../shared}" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" > "$OLDPWD/$work/pytest.log" 2>&1) &
pytest_pid=$!
trap 'kill "$pytest_pid" 2>/dev/null || true' EXIT
(cd / && PYTHONPATH="$prefix/$site" /usr/bin/python3 -c \
  "import ncpkit, os; assert ncpkit.__file__.startswith('$prefix'), ncpkit.__file__; \
   assert ncpkit.scene_directory().startswith('$prefix')")

echo "-- the installed ncpkit program on an installed scene"
(cd / && "$prefix/bin/ncpkit" simulate "$prefix/share/ncpkit/scenes/sliding_cube.json" \
  --duration 0.01 >/dev/null)

echo "-- the same example with pkg-config only"
# shellcheck disable=SC2046
g++ -O1 -o "$work/pkgconfig_example" examples/consumer/main.cc \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ncpkit)
"$work/pkgconfig_example" >/dev/null

echo "-- every installed header compiles on its own with those flags"
export NCPKIT_CFLAGS
NCPKIT_CFLAGS=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags ncpkit)
(cd "$prefix/include" && ls ncpkit/*/*.h) | xargs -P "$jobs" -I{} sh -c \
  'echo "#include <{}>" | g++ -x c++ -fsyntax-only $NCPKIT_CFLAGS - || { echo "{} does not compile alone" >&2; exit 255; }'

echo "-- examples/subproject: add_subdirectory(ncpkit) without doctest or Google Benchmark"
# (A unity build, as the main trees: the subproject compiles the library once more.)
cmake -S examples/subproject -B "$work/subproject" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_UNITY_BUILD=ON >"$work/subproject.log"
if [ -d "$work/subproject/ncpkit/tests" ] || [ -d "$work/subproject/ncpkit/bench" ]; then
  echo "tests or benchmarks were configured inside the subproject" >&2
  exit 1
fi
cmake --build "$work/subproject" --target path_example -j "$jobs" >/dev/null
"$work/subproject/path_example" >/dev/null

echo "-- the installed Python package's tests (started above)"
if ! wait "$pytest_pid"; then
  cat "$work/pytest.log"
  exit 1
fi
tail -n 1 "$work/pytest.log"
echo "install check passed"
