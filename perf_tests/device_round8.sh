# Round 8 on the GPU (issue 24, item 4): shipped binaries built here (the CUDA and the OpenMP
# kosmos_nbody_scattering_benchmarks, and a CUDA test binary of unit_tests/nbody/test_mercurius.cpp
# alone, kosmos_mercurius_tests, linked like kosmos_nbody_tests), packed into build/shipped.tar.xz.
# The MERCURIUS-class tests on the GPU, then planet-planet scattering end to end: MERCURIUS and
# IAS15 on the H100 against the same machine's 16 cores.
set -u
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; lscpu | grep "Model name"
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
[ -x build/cuda/unit_tests/nbody/kosmos_mercurius_tests ] && timeout 120 build/cuda/unit_tests/nbody/kosmos_mercurius_tests 2>&1 | grep -v "^\[ *RUN\|^\[----"; echo "tests rc=${PIPESTATUS[0]}"
C=build/cuda/perf_tests/nbody/kosmos_nbody_scattering_benchmarks
O=build/openmp/perf_tests/nbody/kosmos_nbody_scattering_benchmarks
run 200 $C --benchmark_filter='BM_nbody_Scattering_MERCURIUS/Cuda/systems:(1000|65536)/'
run 200 $O --benchmark_filter='BM_nbody_Scattering_MERCURIUS/OpenMP/systems:(1000|65536)/'
run 200 $C --benchmark_filter='BM_nbody_Scattering_IAS15/Cuda/systems:65536/'
