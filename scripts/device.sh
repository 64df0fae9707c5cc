#!/usr/bin/env bash
# GPU workflow: on the lent H100/H200 (no network, no apt), with the dependency sources carried in
# .deps/ (made here by `scripts/device.sh prepare`), build Kokkos/Kokkos Kernels for CUDA plus
# GoogleTest and Google Benchmark, build Kosmos for CUDA, run every unit test on the GPU, then the
# benchmarks (CUDA and the OpenMP baseline on all CPU cores, side by side), writing logs and
# benchmark JSON under $OUT.
#
#   scripts/device.sh prepare                 # here: fill .deps/ (sources, MPFR .debs)
#   scripts/device.sh build                   # there: dependencies + Kosmos (CUDA)
#   scripts/device.sh test [CTEST_REGEX]      # there: unit tests on the GPU
#   scripts/device.sh bench [MODULE[:FILTER]...]  # there: benchmarks -> $OUT/bench_<module>.json
#   scripts/device.sh collect                 # there: pack $OUT's logs and JSON into results.tar.gz
#   scripts/device.sh all                     # there: build, test, bench, collect
# Environment: OUT (default ./out), KOSMOS_CUDA_ARCH (default HOPPER90).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
out=${OUT:-$root/out}
build="$root/build/device-cuda"
sysroot=/tmp/kosmos-sysroot
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$out"

prepare() {
  rm -rf "$deps/sources" "$deps/debs"
  "$root/scripts/deps.sh" pack "$deps/sources"
  mkdir -p "$deps/debs"
  (cd "$deps/debs" && apt-get download libmpfr-dev libmpfr6 libgmp-dev libgmp10 libgmpxx4ldbl >/dev/null)
  du -sh "$deps"
}

# A prebuilt dependency tree from an earlier run (.deps/prebuilt.tar.gz) saves the Kokkos build.
restore_prebuilt() {
  if [ -f "$deps/prebuilt.tar.gz" ] && [ ! -d "$KOSMOS_CACHE/install" ]; then
    mkdir -p "$KOSMOS_CACHE"
    tar -xzf "$deps/prebuilt.tar.gz" -C "$KOSMOS_CACHE"
    echo "restored prebuilt dependencies: $(ls "$KOSMOS_CACHE/install" | tr '\n' ' ')"
  fi
}

build_all() {
  # The GPU machine starts bare: its cache lives in /tmp and its sources come from .deps/.
  export KOSMOS_CACHE=${KOSMOS_CACHE:-/tmp/kosmos-cache}
  export KOSMOS_DEPS_BUNDLE="$deps/sources"
  restore_prebuilt
  mkdir -p "$sysroot"
  for deb in "$deps"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  local gtest kokkos
  gtest=$("$root/scripts/deps.sh" gtest)
  kokkos=$("$root/scripts/deps.sh" kokkos cuda)
  if [ ! -f "$deps/prebuilt.tar.gz" ]; then
    tar -czf "$out/prebuilt.tar.gz" -C "$KOSMOS_CACHE" install
  fi
  cmake -S "$root" -B "$build" -DKOSMOS_BACKEND=CUDA -DKokkos_ROOT="$kokkos" \
    -DCMAKE_PREFIX_PATH="$gtest;$sysroot/usr" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 ||
    { tail -n 30 "$out/configure.log"; exit 1; }
  local t0=$(date +%s)
  cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -m 30 -A5 'error' "$out/build.log" || tail -n 40 "$out/build.log"; exit 1; }
  echo "built Kosmos for CUDA in $(( $(date +%s) - t0 )) s"
}

run_tests() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  cd "$build"
  export LD_LIBRARY_PATH="$sysroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  OMP_PROC_BIND=false ctest --output-on-failure ${1:+-R "$1"} 2>&1 | tee "$out/tests.log" | tail -n 40
  return "${PIPESTATUS[0]}"
}

run_benchmarks() {
  export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=$(nproc)
  local specs=("$@")
  [ ${#specs[@]} -gt 0 ] || specs=(core kepler series nbody dust)
  local spec module filter exe
  for spec in "${specs[@]}"; do
    module=${spec%%:*}
    filter=${spec#*:}
    [ "$filter" = "$spec" ] && filter=.
    exe="$build/perf_tests/$module/kosmos_${module}_benchmarks"
    [ -x "$exe" ] || exe="$build/perf_tests/kosmos_${module}_benchmarks"
    [ -x "$exe" ] || { echo "no benchmarks for $module"; continue; }
    echo "== benchmarks: $module ($filter)"
    "$exe" --benchmark_filter="$filter" --benchmark_out="$out/bench_$module.json" \
      --benchmark_out_format=json --benchmark_counters_tabular=true 2>&1 | tee "$out/bench_$module.txt"
  done
}

# The device returns few files: everything but the prebuilt dependencies goes into one archive.
collect() {
  local files
  files=$(cd "$out" && ls | grep -v -e '^prebuilt.tar.gz$' -e '^results.tar.gz$' || true)
  [ -n "$files" ] || return 0
  (cd "$out" && tar -czf results.tar.gz $files && rm -f $files)
}

cmd=${1:-all}
shift || true
case "$cmd" in
  prepare) prepare ;;
  build) build_all ;;
  test) run_tests "$@" ;;
  bench) run_benchmarks "$@" ;;
  collect) collect ;;
  all) build_all && run_tests && run_benchmarks; collect ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
