#!/usr/bin/env bash
# Installs the Debian packages ncpkit needs, if any is missing (run as root on Debian 12).
set -euo pipefail
required=(g++ cmake make libeigen3-dev libsuitesparse-dev libceres-dev doctest-dev libbenchmark-dev
          nlohmann-json3-dev
          # FCLib problem files (HDF5)
          libhdf5-dev
          # convex shapes: hulls of points (Qhull), the vertices of OBJ mesh files (tinyobjloader)
          libqhull-dev libtinyobjloader-dev
          # MuJoCo MJCF scene files (XML)
          libtinyxml2-dev
          # the install check: the example consumer built with pkg-config
          pkgconf
          # the Python package (built for Debian's /usr/bin/python3), its tests and plots
          python3-dev pybind11-dev python3-numpy python3-scipy python3-matplotlib python3-pytest
          # campaigns on a Dask cluster (ncpkit.campaign --scheduler; its tests use a local one)
          python3-distributed
          # the viewer page's browser test (headless, driven by playwright-core from npm)
          chromium
          # the test suite: Clang's sanitizers and libFuzzer, clang-tidy's function-size check,
          # Debian's Python for tools/soak.py
          clang libclang-rt-14-dev clang-tidy python3)
# The viewer's page script is built with npm (three.js, esbuild): Debian's nodejs and npm
# unless a node with npm is already there.
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  required+=(nodejs npm)
fi
# Optional peers: the benchmarks measure ratios against Siconos numerics (frictional contact
# problems) and against ODE, Bullet and MuJoCo (the explicit stepper's scenes) when present.
optional=(libsiconos-numerics-dev libode-dev libbullet-dev libmujoco-dev)

missing() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
need=$(missing "${required[@]}")
want=$(missing "${optional[@]}")
if [ -n "$need$want" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  if [ -n "$need" ]; then
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $need
  fi
  if [ -n "$want" ]; then
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $want ||
      echo "note: optional $want not installed; peer benchmarks are skipped"
  fi
fi
