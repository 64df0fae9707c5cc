#!/usr/bin/env bash
# GPU workflow: on the lent H100/H200 (no network, no apt), with the dependency sources carried in
# .deps/ (made here by `scripts/device.sh prepare`), build Kokkos/Kokkos Kernels for CUDA plus
# GoogleTest and Google Benchmark, build Kosmos for CUDA, run every unit test on the GPU, then the
# benchmarks (CUDA and the OpenMP baseline on all CPU cores, side by side), writing logs and
# benchmark JSON under $OUT.
#
#   scripts/device.sh prepare                 # here: fill .deps/ (sources, MPFR, HDF5, OpenMPI .debs,
#                                             #   the Kokkos 4.6 tarballs from ../shared/deps)
#   scripts/device.sh build                   # there: dependencies + Kosmos (CUDA)
#   scripts/device.sh test [CTEST_REGEX]      # there: unit tests on the GPU
#   scripts/device.sh bench [MODULE[:FILTER]...]  # there: benchmarks -> $OUT/bench_<module>.json
#   scripts/device.sh collect                 # there: pack $OUT's logs and JSON into results.tar.gz
#   scripts/device.sh all                     # there: build, test, bench, collect
#   scripts/device.sh start 'COMMANDS'        # there: run COMMANDS (e.g. this script's verbs) in their
#                                             #   own process session, past one call's time limit
#   scripts/device.sh wait [SECONDS]          # there: wait for them (default 540 s), copy their
#                                             #   logs and JSON to $OUT; exit 3 while still running
#   scripts/device.sh ship TARGET...          # here (nvcc, no GPU): build these CUDA targets in
#                                             #   build/cuda and pack them with the shared libraries
#                                             #   the GPU machine lacks into build/shipped.tar.xz
#   scripts/device.sh unship                  # there: unpack build/shipped.tar.xz (carried) where
#                                             #   it was built (a link from the path it was built
#                                             #   in, for test data); `bench` then runs what it holds;
#                                             #   with .deps/mpi-debs carried, OpenMPI is installed
# Environment: OUT (default ./out; `start` uses /tmp/kosmos-device-bg/out), KOSMOS_BUILD_TARGETS
# (build only these CMake targets, space-separated), KOSMOS_BENCH_SECONDS (stop each `bench`
# spec after this many seconds; its rows so far are kept), KOSMOS_CMAKE_ARGS (more configure arguments,
# e.g. -DPython3_EXECUTABLE=... for the Python package), KOSMOS_COMPILE_TIMES
# (a file: `build` appends each compile's seconds and object to it), KOSMOS_CUDA_ARCH (default HOPPER90), KOSMOS_DEVICE_KOKKOS
# (3.4, the default: Debian's Kokkos 3.4.01 in C++17; or 4.6: Kokkos 4.6 from .deps/kokkos46 in
# C++20), which picks the Kokkos every step builds against and uses.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
out=${OUT:-$root/out}
sysroot=/tmp/kosmos-sysroot
export PATH="$PATH:/usr/local/cuda/bin"
export LD_LIBRARY_PATH="$sysroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out"
kokkos_choice=${KOSMOS_DEVICE_KOKKOS:-3.4}
case "$kokkos_choice" in
  3.4) build="$root/build/device-cuda" ;;
  4.6)
    build="$root/build/device-cuda-kokkos46"
    export KOSMOS_CXX_STANDARD=20
    export KOSMOS_KOKKOS_SOURCE=$(ls "$deps"/kokkos46/kokkos-4.6*.tar.gz 2>/dev/null | head -n1)
    export KOSMOS_KOKKOS_KERNELS_SOURCE=$(ls "$deps"/kokkos46/kokkos-kernels-4.6*.tar.gz 2>/dev/null | head -n1)
    [ -n "$KOSMOS_KOKKOS_SOURCE" ] && [ -n "$KOSMOS_KOKKOS_KERNELS_SOURCE" ] ||
      { echo "KOSMOS_DEVICE_KOKKOS=4.6 needs .deps/kokkos46/ (scripts/device.sh prepare)"; exit 1; } ;;
  *) echo "KOSMOS_DEVICE_KOKKOS must be 3.4 or 4.6, not '$kokkos_choice'"; exit 2 ;;
esac

# After `unship` the verbs run the shipped binaries.
if [ -d "$root/build/cuda/shipped-lib" ]; then
  build="$root/build/cuda"
  export LD_LIBRARY_PATH="$build/shipped-lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:$LD_LIBRARY_PATH"
fi

# What the HDF5 C library needs at run time beyond glibc, zlib and GMP (Debian 12 names).
hdf5_debs=(libhdf5-dev libhdf5-103-1 libaec0 libsz2 libcurl4 libnghttp2-14 librtmp1 libssh2-1 libpsl5
           libbrotli1 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libkeyutils1 libcom-err2
           libldap-2.5-0 libsasl2-2 libsasl2-modules-db libidn2-0 libunistring2 libgnutls30 libhogweed6
           libnettle8 libtasn1-6 libp11-kit0 libffi8 libzstd1 libssl3 libdb5.3)

# OpenMPI for KOSMOS_ENABLE_MPI (Debian 12 names: libopenmpi-dev and what it and mpirun need at run
# time). Unlike HDF5 they are unpacked into / (the device runs as root): OpenMPI finds its plugins,
# help files and orted through paths compiled into it. hwloc's optional plugins (X11, OpenCL, NVML
# probes) stay out.
mpi_debs=(libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libpmix2 libevent-2.1-7 libevent-core-2.1-7
          libevent-pthreads-2.1-7 libevent-extra-2.1-7 libevent-openssl-2.1-7 libhwloc15 libudev1 libltdl7
          libnl-3-200 libnl-route-3-200 libibverbs1 ibverbs-providers librdmacm1 libfabric1 libatomic1 libpsm2-2
          libpsm-infinipath1 libucx0 libmunge2 libnuma1)

prepare() {
  rm -rf "$deps/sources" "$deps/debs" "$deps/mpi-debs"
  "$root/scripts/deps.sh" pack "$deps/sources"
  mkdir -p "$deps/debs"
  (cd "$deps/debs" && apt-get download libmpfr-dev libmpfr6 libgmp-dev libgmp10 libgmpxx4ldbl \
    "${hdf5_debs[@]}" >/dev/null)
  mkdir -p "$deps/mpi-debs"
  (cd "$deps/mpi-debs" && apt-get download "${mpi_debs[@]}" >/dev/null)
  rm -rf "$deps/kokkos46"
  local shared_deps
  shared_deps=$(cd "$root/.." && pwd)/shared/deps
  if ls "$shared_deps"/kokkos-4.6*.tar.gz >/dev/null 2>&1; then
    mkdir -p "$deps/kokkos46"
    cp "$shared_deps"/kokkos-4.6*.tar.gz "$shared_deps"/kokkos-kernels-4.6*.tar.gz "$deps/kokkos46"/
  fi
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

# OpenMPI from .deps/mpi-debs (if carried) into /; the alternatives' links (mpicxx, mpirun) that
# dpkg's scripts would make are made here. Without it the build has no MPI (KOSMOS_ENABLE_MPI off).
install_mpi() {
  ls "$deps"/mpi-debs/*.deb >/dev/null 2>&1 || return 0
  if [ ! -x /usr/bin/mpirun.openmpi ]; then
    for deb in "$deps"/mpi-debs/*.deb; do dpkg-deb -x "$deb" /; done
    ldconfig
  fi
  ln -sf /usr/bin/mpicxx.openmpi /usr/bin/mpicxx
  ln -sf /usr/bin/mpirun.openmpi /usr/bin/mpirun
  ln -sf /usr/bin/mpirun.openmpi /usr/bin/mpiexec
}

# The prebuilt Kokkos names the CUDA libraries where this repository's build machine has them
# (/usr/local/cuda/lib); the device's toolkit keeps them elsewhere.
link_cuda_libs() {
  local lib found
  for lib in libcublas.so libcusparse.so libcudart.so stubs/libcuda.so; do
    [ -e "/usr/local/cuda/lib/$lib" ] && continue
    found=$(find /usr/local/cuda/ -path "*$lib" \( -type f -o -type l \) 2>/dev/null | grep -v "^/usr/local/cuda/lib/" | head -n1)
    [ -n "$found" ] && mkdir -p "$(dirname "/usr/local/cuda/lib/$lib")" && ln -sf "$found" "/usr/local/cuda/lib/$lib"
  done
}

build_all() {
  link_cuda_libs
  # The GPU machine starts bare: its cache lives in /tmp and its sources come from .deps/.
  export KOSMOS_CACHE=${KOSMOS_CACHE:-/tmp/kosmos-cache}
  export KOSMOS_DEPS_BUNDLE="$deps/sources"
  restore_prebuilt
  if [ ! -f "$sysroot/.complete" ]; then
    mkdir -p "$sysroot"
    for deb in "$deps"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
    touch "$sysroot/.complete"
  fi
  install_mpi
  local gtest kokkos
  gtest=$("$root/scripts/deps.sh" gtest)
  kokkos=$("$root/scripts/deps.sh" kokkos cuda)
  if [ ! -f "$deps/prebuilt.tar.gz" ]; then
    tar -czf "$out/prebuilt.tar.gz" -C "$KOSMOS_CACHE" install
  fi
  cmake -S "$root" -B "$build" -DKOSMOS_BACKEND=CUDA -DKokkos_ROOT="$kokkos" \
    ${KOSMOS_COMPILE_TIMES:+-DCMAKE_CXX_COMPILER_LAUNCHER="$root/scripts/time-compile.sh"} \
    -DCMAKE_PREFIX_PATH="$gtest;$sysroot/usr" -DCMAKE_BUILD_TYPE=Release \
    ${KOSMOS_CXX_STANDARD:+-DCMAKE_CXX_STANDARD=$KOSMOS_CXX_STANDARD} \
    -DKOSMOS_HDF5_INCLUDE_DIR="$sysroot/usr/include/hdf5/serial" \
    -DKOSMOS_HDF5_LIBRARY="$sysroot/usr/lib/x86_64-linux-gnu/libhdf5_serial.so" ${KOSMOS_CMAKE_ARGS:-} \
    >"$out/configure-kokkos$kokkos_choice.log" 2>&1 ||
    { tail -n 30 "$out/configure-kokkos$kokkos_choice.log"; exit 1; }
  local t0=$(date +%s)
  cmake --build "$build" -j "$(nproc)" ${KOSMOS_BUILD_TARGETS:+--target $KOSMOS_BUILD_TARGETS} >"$out/build-kokkos$kokkos_choice.log" 2>&1 ||
    { grep -m 30 -A5 'error' "$out/build-kokkos$kokkos_choice.log" || tail -n 40 "$out/build-kokkos$kokkos_choice.log"; exit 1; }
  echo "built Kosmos for CUDA (Kokkos $kokkos_choice) in $(( $(date +%s) - t0 )) s"
}

run_tests() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  cd "$build"
  if [ -d shipped-lib ]; then  # no CTest files came: each shipped test executable, filtered by $1
    local exe log status=0
    for exe in unit_tests/*/kosmos_*_tests; do
      [ -x "$exe" ] || continue
      log="$out/tests-$(basename "$exe").log"
      OMP_PROC_BIND=false "$exe" --gtest_filter="${1:-*}" --gtest_brief=1 >"$log" 2>&1 || status=1
      echo "$exe: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')"
    done
    return "$status"
  fi
  OMP_PROC_BIND=false ctest --output-on-failure ${1:+-R "$1"} 2>&1 | tee "$out/tests-kokkos$kokkos_choice.log" | tail -n 40
  return "${PIPESTATUS[0]}"
}

run_benchmarks() {
  export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=$(nproc)
  local specs=("$@")
  [ ${#specs[@]} -gt 0 ] || specs=(core kepler series nbody dust)
  local spec module filter exe name
  declare -A runs=()
  for spec in "${specs[@]}"; do
    module=${spec%%:*}
    filter=${spec#*:}
    [ "$filter" = "$spec" ] && filter=.
    # A module named twice (e.g. its Cuda rows first, then the slow host rows) keeps both outputs.
    runs[$module]=$(( ${runs[$module]:-0} + 1 ))
    name=$module
    [ "${runs[$module]}" -eq 1 ] || name="${module}_${runs[$module]}"
    exe="$build/perf_tests/$module/kosmos_${module}_benchmarks"
    [ -x "$exe" ] || exe="$build/perf_tests/kosmos_${module}_benchmarks"
    # A module's second executable, e.g. nbody_stability: perf_tests/nbody/kosmos_nbody_stability_benchmarks.
    [ -x "$exe" ] || exe="$build/perf_tests/${module%%_*}/kosmos_${module}_benchmarks"
    [ -x "$exe" ] || { echo "no benchmarks for $module"; continue; }
    echo "== benchmarks: $module ($filter)"
    # Line-buffered, so that the rows before a crash are not lost in the pipe's buffer.
    local status=0
    ${KOSMOS_BENCH_SECONDS:+timeout "$KOSMOS_BENCH_SECONDS"} stdbuf -oL "$exe" --benchmark_filter="$filter" --benchmark_out="$out/bench_$name.json" \
      --benchmark_out_format=json --benchmark_counters_tabular=true 2>&1 | tee "$out/bench_$name.txt" ||
      status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
      echo "== benchmarks: $module exited with status $status" | tee -a "$out/bench_$name.txt"
      # A crash: the host backtrace (cuda-gdb also debugs host code; the machine has no gdb).
      if [ "$status" -gt 128 ] && command -v cuda-gdb >/dev/null; then
        # A jump to address 0 leaves no frame to unwind: the return address on the stack names the caller.
        cuda-gdb -q -batch -ex run -ex bt -ex 'x/6a $sp' --args "$exe" --benchmark_filter="$filter" 2>&1 | tail -n 60 |
          tee -a "$out/bench_$name.txt"
      fi
    fi
  done
}

# A full CUDA build takes ~12 of the device's minutes; binaries built here with nvcc and carried
# cost none. The repository has the same path there, so the binaries (and the data directory
# compiled into them) work unchanged.
shipped="$root/build/shipped.tar.xz"
# ship_libraries BINARY DEST: copies every library BINARY resolves into DEST but glibc's, the
# compiler's, the CUDA toolkit's and Python's (the GPU machine has those).
ship_libraries() {
  ldd "$1" | awk '$3 ~ /^\// {print $3}' | grep -v '/cuda' |
    { grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libgomp|libpython[0-9.]*)\.so|/ld-linux' || true; } |
    xargs -r cp -L -t "$2"
}
# `ship python`: the CUDA build's Python module (python/src against build/cuda's libkosmos.a) for
# the GPU machine's interpreter, which is not this machine's: its headers come from
# KOSMOS_DEVICE_PYTHON (default .deps/device-python: python3.X/ and x86_64-linux-gnu/python3.X/ as
# in its /usr/include, and pybind11/ from its site-packages; `tar` them there into $OUT) and the
# module gets the suffix KOSMOS_DEVICE_PYTHON_SUFFIX (default .cpython-312-x86_64-linux-gnu.so).
# The flags are the kosmos_python target's, with the Python include folder replaced. Unpacked, the
# package is build/cuda/python-device (PYTHONPATH).
ship_python() {
  local cuda_build=$1 staging=$2 headers=${KOSMOS_DEVICE_PYTHON:-$deps/device-python}
  local suffix=${KOSMOS_DEVICE_PYTHON_SUFFIX:-.cpython-312-x86_64-linux-gnu.so}
  local target_dir="$cuda_build/python/CMakeFiles/kosmos_python.dir" out_dir="$cuda_build/python-device"
  local py_include
  py_include=$(ls -d "$headers"/python3.* 2>/dev/null | head -n1)
  [ -n "$py_include" ] && [ -d "$headers/pybind11" ] ||
    { echo "ship python: $headers needs python3.X/, x86_64-linux-gnu/ and pybind11/"; exit 1; }
  local host_include compiler defines includes flags
  host_include=$(sed -n 's/^_Python3_INCLUDE_DIR:INTERNAL=//p' "$cuda_build/CMakeCache.txt")
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cuda_build/CMakeCache.txt")
  defines=$(sed -n 's/^CXX_DEFINES = //p' "$target_dir/flags.make")
  includes=$(sed -n 's/^CXX_INCLUDES = //p' "$target_dir/flags.make" |
    sed "s|-isystem $host_include|-isystem $py_include -isystem $headers|")
  flags=$(sed -n 's/^CXX_FLAGS = //p' "$target_dir/flags.make")
  mkdir -p "$out_dir/obj" "$out_dir/kosmos"
  local source objects=()
  for source in "$root"/python/src/*.cpp; do
    objects+=("$out_dir/obj/$(basename "$source").o")
  done
  # sh -c parses the flags as make would (the data folders' macros hold escaped quotes)
  printf '%s\n' "$root"/python/src/*.cpp | xargs -P "$(nproc)" -I{} sh -c \
    "ccache $compiler $defines $includes $flags -c {} -o $out_dir/obj/\$(basename {}).o" ||
    { echo "ship python: compiling the module failed"; exit 1; }
  local link
  link=$(sed -e "s| -o kosmos/_kosmos[^ ]*| -o $out_dir/kosmos/_kosmos$suffix|" \
    -e "s| CMakeFiles/kosmos_python.dir/src/[a-z_]*\.cpp\.o||g" "$target_dir/link.txt")
  (cd "$cuda_build/python" && eval "$link ${objects[*]}") || { echo "ship python: linking failed"; exit 1; }
  cp "$root"/python/kosmos/*.py "$out_dir/kosmos/"
  mkdir -p "$staging/build/cuda/python-device"
  cp -r "$out_dir/kosmos" "$staging/build/cuda/python-device/"
  ship_libraries "$out_dir/kosmos/_kosmos$suffix" "$staging/build/cuda/shipped-lib"
}
ship() {
  [ $# -gt 0 ] || { echo "ship: name the CMake targets to build"; exit 2; }
  local cuda_build="$root/build/cuda"
  cmake -S "$root" -B "$cuda_build" -DKOSMOS_BACKEND=CUDA -DCMAKE_BUILD_TYPE=Release >/dev/null
  local targets=() target
  for target in "$@"; do  # `python` needs the library; ship_python builds the module itself
    [ "$target" = python ] && targets+=(kosmos) || targets+=("$target")
  done
  cmake --build "$cuda_build" -j "$(nproc)" --target "${targets[@]}"
  local staging exe name libs
  staging=$(mktemp -d)
  libs="$staging/build/cuda/shipped-lib"
  mkdir -p "$libs"
  for target in "$@"; do
    if [ "$target" = python ]; then
      ship_python "$cuda_build" "$staging"
      continue
    fi
    name=$target
    [ "$target" = kosmos_cli ] && name=kosmos  # the CLI target's OUTPUT_NAME
    exe=$(find "$cuda_build" -type f -name "$name" -perm -u+x | head -n1)
    [ -n "$exe" ] || { echo "ship: no executable for target $target"; exit 1; }
    mkdir -p "$staging/$(dirname "${exe#$root/}")" && cp "$exe" "$staging/${exe#$root/}"
    ship_libraries "$exe" "$libs"
  done
  # Test binaries name their data by the absolute path of the tree they were built in.
  echo "$root" > "$staging/build/cuda/shipped-source-root"
  # one dictionary over all files: the binaries share most of their device code
  XZ_OPT="-T0 --lzma2=preset=9,dict=192MiB" tar -cJf "$shipped" -C "$staging" .
  rm -rf "$staging"
  du -h "$shipped"
}
unship() {
  [ -f "$shipped" ] || { echo "unship: carry build/shipped.tar.xz (scripts/device.sh ship here)"; exit 1; }
  tar -xJf "$shipped" -C "$root"
  install_mpi  # a shipped MPI tool runs under mpirun when .deps/mpi-debs is carried too
  # That path leads here too, where it is free (a link to this tree).
  local built_in
  built_in=$(cat "$root/build/cuda/shipped-source-root" 2>/dev/null || true)
  if [ -n "$built_in" ] && [ ! -e "$built_in" ]; then
    mkdir -p "$(dirname "$built_in")" && ln -s "$root" "$built_in"
  fi
  echo "unpacked: $(tar -tJf "$shipped" | grep -v -e '/$' -e '/shipped-lib/' | tr '\n' ' ')"
}

# The device returns few files: everything but the prebuilt dependencies goes into one archive.
collect() {
  local files
  files=$(cd "$out" && ls | grep -v -e '^prebuilt.tar.gz$' -e '^results.tar.gz$' || true)
  [ -n "$files" ] || return 0
  (cd "$out" && tar -czf results.tar.gz $files && rm -f $files)
}

# A build and a benchmark run together outlast one device call (10 minutes): they run in their own
# process session, which lives on while the machine stays warm, and later calls wait for them.
background=/tmp/kosmos-device-bg
start_background() {
  [ ! -f "$background/pid" ] || [ -f "$background/rc" ] || { echo "already running: $(cat "$background/command")"; exit 1; }
  rm -rf "$background" && mkdir -p "$background/out"
  printf '%s\n' "$1" >"$background/command"
  (cd "$root" && OUT="$background/out" setsid nohup bash -c 'bash "$0/command" >"$0/log" 2>&1; echo $? >"$0/rc"' \
    "$background" </dev/null >/dev/null 2>&1 & echo $! >"$background/pid")
  echo "started: $1"
}
wait_background() {
  local limit=${1:-540} waited=0
  [ -f "$background/command" ] || { echo "nothing was started"; exit 1; }
  while [ ! -f "$background/rc" ] && [ "$waited" -lt "$limit" ]; do sleep 5; waited=$((waited + 5)); done
  tail -n 40 "$background/log"
  cp -r "$background/out/." "$out/"
  if [ -f "$background/rc" ]; then
    echo "finished: $(cat "$background/command") -> exit $(cat "$background/rc")"
    return "$(cat "$background/rc")"
  fi
  echo "still running after ${limit} s: $(cat "$background/command")"
  return 3
}

cmd=${1:-all}
shift || true
case "$cmd" in
  prepare) prepare ;;
  build) build_all ;;
  test) run_tests "$@" ;;
  bench) run_benchmarks "$@" ;;
  collect) collect ;;
  ship) ship "$@" ;;
  unship) unship ;;
  start) start_background "$*" ;;
  wait) wait_background "$@" ;;
  all) build_all && run_tests && run_benchmarks; collect ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
