#!/usr/bin/env bash
# Builds Kosmos (OpenMP by default) with warnings as errors and runs every test: the unit tests on
# all enabled execution spaces (OpenMP also with one thread), the CLI checks and the embedding
# example; with OpenMPI installed (scripts/deps.sh system does) also the MPI tests under mpiexec.
# Dependencies come from Debian (scripts/deps.sh) and are cached outside the clone.
#   KOSMOS_BACKEND=OpenMP|Serial|CUDA   KOSMOS_BUILD_DIR=<dir>   KOSMOS_JOBS=<n>
#   KOSMOS_CXX_STANDARD=17|20   KOSMOS_KOKKOS_SOURCE=<tarball|dir> KOSMOS_KOKKOS_KERNELS_SOURCE=<...>
#   (another Kokkos than Debian's 3.4.01, built by scripts/deps.sh; see README "Kokkos versions")
#   KOSMOS_SANITIZE=address,undefined (a RelWithDebInfo build under those sanitizers)
#   KOSMOS_CXX_COMPILER=<compiler>   KOSMOS_CMAKE_ARGS="<more cmake arguments>"
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=${KOSMOS_BACKEND:-OpenMP}
build=${KOSMOS_BUILD_DIR:-$root/build/$(echo "$backend" | tr 'A-Z' 'a-z')}
jobs=${KOSMOS_JOBS:-$(nproc)}

"$root/scripts/deps.sh" system
# Kosmos' own objects through ccache (scripts/deps.sh system installs it; its cache is outside the
# clone), keyed on paths relative to the clone: a fresh clone of an unchanged file hits.
# KOSMOS_CCACHE=0 turns it off.
launcher=()
if [ "${KOSMOS_CCACHE:-1}" = 1 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
build_type=Release
[ -n "${KOSMOS_SANITIZE:-}" ] && build_type=RelWithDebInfo
# shellcheck disable=SC2086 # KOSMOS_CMAKE_ARGS is a list of arguments
cmake -S "$root" -B "$build" -DKOSMOS_BACKEND="$backend" -DKOSMOS_WERROR=ON -DCMAKE_BUILD_TYPE=$build_type \
  ${KOSMOS_CXX_STANDARD:+-DCMAKE_CXX_STANDARD=$KOSMOS_CXX_STANDARD} \
  ${KOSMOS_CXX_COMPILER:+-DCMAKE_CXX_COMPILER=$KOSMOS_CXX_COMPILER} \
  ${KOSMOS_SANITIZE:+-DKOSMOS_SANITIZE=$KOSMOS_SANITIZE} "${launcher[@]}" ${KOSMOS_CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
cd "$build"
# Sanitizer reports stop the test that produced them; leaks are not checked (Kokkos and HDF5 keep
# process-lifetime allocations).
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  OMP_PROC_BIND=false ctest --output-on-failure
