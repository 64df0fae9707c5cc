# One GPU session for the round-5 issues on the 2-GPU kind (nvidia-h100-x2): build for CUDA there
# (Ninja, all cores), the workflow benchmarks on one GPU with the OpenMP baseline on 16 of the
# host's cores and the 1-to-2-GPU MPI scaling first, then every CTest (the GPU and host instances)
# and the Python tests against the CUDA package. Started in its own process session:
#
#   scripts/device.sh start 'bash perf_tests/device_round5.sh'; scripts/device.sh wait  # (repeat wait)
#
# Carried (ignored here): .deps/{sources,debs,mpi-debs,prebuilt.tar.gz} (scripts/device.sh
# prepare) and .devpy/ (Debian's pytest and pybind11, pure Python and headers: the device has no
# package registry). Everything lands in $OUT/results.tar.gz.
set -u
cd "$(dirname "$0")/.."
t0=$(date +%s)
mark() { echo "== $* after $(($(date +%s) - t0)) s"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  grep -m1 'model name' /proc/cpuinfo
  nproc
} | tee "$OUT/machine.txt"

python=$(command -v python3)
python_args=()
python_target=kosmos_python
if [ -f "$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
  python_args=(-DPython3_EXECUTABLE="$python" -Dpybind11_DIR="$PWD/.devpy/pybind11/lib/cmake/pybind11")
else
  python_args=(-DKOSMOS_ENABLE_PYTHON=OFF)
  python_target=
  echo "no Python.h for $python: the Python package is not built"
fi
export CMAKE_GENERATOR=Ninja
build=build/device-cuda
# Built in two steps, the measurements first: the whole tree (148 steps) took about 20 minutes on
# 32 cores, most of one session's device time. A target that fails to compile leaves the others.
build_targets() {
  KOSMOS_BUILD_TARGETS="$*" KOSMOS_CMAKE_ARGS="${python_args[*]}" scripts/device.sh build ||
    { [ -f $build/build.ninja ] && cmake --build $build --target "$@" -- -k 0 >>"$OUT/build-keep-going.log" 2>&1; }
  mark "build $* (exit $?)"
}
build_targets kosmos_cli kosmos_kepler_benchmarks kosmos_nbody_benchmarks kosmos_dust_benchmarks \
  kosmos_series_benchmarks

# Workflow benchmarks: GPU 0; the OpenMP rows on cores 0-15 (nproc then says 16).
bench() {
  local seconds=$1
  shift
  CUDA_VISIBLE_DEVICES=0 KOSMOS_BENCH_SECONDS=$seconds taskset -c 0-15 scripts/device.sh bench "$@"
  mark "bench $*"
}
bench 200 'kepler:BM_SurveyEndToEnd/Cuda'
bench 150 'kepler:BM_SurveyEndToEnd/OpenMP'
bench 120 'nbody:BM_nbody_StabilityPosterior_WHFast_MEGNO/Cuda'
bench 60 'nbody:BM_nbody_StabilityPosterior_WHFast_MEGNO/OpenMP/draws:1024/'
bench 60 'nbody:BM_nbody_Table3_Hermite_registers/Cuda'
bench 120 'dust:BM_DustDl07EndToEnd'
bench 150 'series:BM_Track/(cyclic7|katsura10|random10x2)/N(1|2)/Cuda'
bench 60 'series:BM_Track/(katsura8|cyclic6)/N(1|2)/OpenMP'

# One GPU per rank, the same work per rank.
timeout 300 perf_tests/mpi_scaling.sh "$PWD/$build" 2>&1 | tee "$OUT/mpi_scaling.txt"
mark "mpi scaling"

build_targets kosmos_core_tests kosmos_kepler_tests kosmos_nbody_tests kosmos_series_tests \
  kosmos_dust_tests kosmos_dust_cli_tests kosmos_distributed_tests $python_target
# Every CTest; OpenMP instances on 4 threads each, 8 tests at a time.
(cd $build && OMP_NUM_THREADS=4 OMP_PROC_BIND=false timeout 420 ctest -j 8 --timeout 300 \
  --output-on-failure >"$OUT/ctest.log" 2>&1)
mark "ctest (exit $?): $(grep -E 'tests passed' "$OUT/ctest.log")"

if ls $build/python/kosmos/_kosmos*.so >/dev/null 2>&1; then
  PYTHONPATH="$PWD/$build/python:$PWD/.devpy/site" KOSMOS_DATA="$PWD/data" \
    KOSMOS_CLI="$PWD/$build/src/cli/kosmos" MPLBACKEND=Agg timeout 300 "$python" -m pytest -q \
    -p no:cacheprovider --assert=plain python/tests >"$OUT/pytest-cuda.log" 2>&1
  mark "pytest (exit $?): $(tail -n 1 "$OUT/pytest-cuda.log")"
fi
scripts/device.sh collect
