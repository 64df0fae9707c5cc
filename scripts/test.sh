#!/usr/bin/env bash
# Builds Kosmos (OpenMP by default) with warnings as errors and runs every test: the unit tests on
# all enabled execution spaces (OpenMP also with one thread), the CLI checks and the embedding
# example; with OpenMPI installed (scripts/deps.sh system does) also the MPI tests under mpiexec.
# Dependencies come from Debian (scripts/deps.sh) and are cached outside the clone.
#   KOSMOS_BACKEND=OpenMP|Serial|CUDA   KOSMOS_BUILD_DIR=<dir>   KOSMOS_JOBS=<n>
#   KOSMOS_CXX_STANDARD=17|20   KOSMOS_KOKKOS_SOURCE=<tarball|dir> KOSMOS_KOKKOS_KERNELS_SOURCE=<...>
#   (another Kokkos than Debian's 3.4.01, built by scripts/deps.sh; see README "Kokkos versions")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=${KOSMOS_BACKEND:-OpenMP}
build=${KOSMOS_BUILD_DIR:-$root/build/$(echo "$backend" | tr 'A-Z' 'a-z')}
jobs=${KOSMOS_JOBS:-$(nproc)}

"$root/scripts/deps.sh" system
cmake -S "$root" -B "$build" -DKOSMOS_BACKEND="$backend" -DKOSMOS_WERROR=ON -DCMAKE_BUILD_TYPE=Release \
  ${KOSMOS_CXX_STANDARD:+-DCMAKE_CXX_STANDARD=$KOSMOS_CXX_STANDARD}
cmake --build "$build" -j "$jobs"
cd "$build"
OMP_PROC_BIND=false ctest --output-on-failure
