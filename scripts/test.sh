#!/usr/bin/env bash
# Builds Kosmos (OpenMP by default) with warnings as errors and runs every test: the unit tests on
# all enabled execution spaces (OpenMP also with one thread), the CLI checks and the embedding
# example. Dependencies come from Debian (scripts/deps.sh) and are cached outside the clone.
#   KOSMOS_BACKEND=OpenMP|Serial|CUDA   KOSMOS_BUILD_DIR=<dir>   KOSMOS_JOBS=<n>
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=${KOSMOS_BACKEND:-OpenMP}
build=${KOSMOS_BUILD_DIR:-$root/build/$(echo "$backend" | tr 'A-Z' 'a-z')}
jobs=${KOSMOS_JOBS:-$(nproc)}

"$root/scripts/deps.sh" system
cmake -S "$root" -B "$build" -DKOSMOS_BACKEND="$backend" -DKOSMOS_WERROR=ON -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
cd "$build"
OMP_PROC_BIND=false ctest --output-on-failure
