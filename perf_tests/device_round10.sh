# Round 10 on the GPU machine (issue 23, items 5 and 6): shipped CUDA binaries (scripts/device.sh
# ship kosmos_kepler_benchmarks kosmos_kepler_tests [kosmos_nbody_tests], carry
# build/shipped.tar.xz), and in build/round10/ (carried) the survey
# benchmark of the previous main (BASELINE, built the same way) and the host solve against
# dfm/libkepler for two instruction-set levels and the compiler's default
# (kosmos_kepler_vs_libkepler-x86-64-v3, -x86-64-v4, -default; cmake -DKOSMOS_BACKEND=OpenMP
# -DKOSMOS_LIBKEPLER_DIR=<checkout> -DKOSMOS_LIBKEPLER_MARCH=<level>).
set -u
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
lscpu | grep -E "Model name|MHz"; grep -o -w -m1 avx512f /proc/cpuinfo || echo "no avx512f"
B=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks R=build/round10
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
tests() { local t=$1; shift; timeout $t "$@" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]|^\[kepler\]"; echo "tests rc=${PIPESTATUS[0]}"; }
if [ "${WITH_TESTS:-1}" = 1 ]; then
  tests 240 build/cuda/unit_tests/kepler/kosmos_kepler_tests --gtest_filter='*Solver*:*Range*:KeplerChi2*:KeplerSearch.Survey*:KeplerSearch.Minimum*:KeplerDiagnostics*'
  [ -x build/cuda/unit_tests/nbody/kosmos_nbody_tests ] && tests 300 build/cuda/unit_tests/nbody/kosmos_nbody_tests
fi
# The host solve on one pinned core, five runs of each build: ns/solve/core and max_err per row.
for solve in default x86-64-v3 x86-64-v4; do
  [ "$solve" = x86-64-v4 ] && ! grep -q -w avx512f /proc/cpuinfo && continue
  echo "=== kosmos_kepler_vs_libkepler-$solve (Kosmos rows, libkepler solve_simd rows)"
  for r in 1 2 3 4 5; do
    OMP_NUM_THREADS=1 OMP_PROC_BIND=true taskset -c 3 $R/kosmos_kepler_vs_libkepler-$solve \
      --benchmark_filter='Kosmos|simd' --benchmark_counters_tabular=true 2>&1 |
      grep "^BM" | awk '{printf "%s %s | ", $NF, $(NF-1)}'
    echo
  done
done
for round in 1 2; do
  run 200 $B --benchmark_filter='BM_SurveyEndToEnd/Cuda'
  run 200 $R/BASELINE --benchmark_filter='BM_SurveyEndToEnd/Cuda'
done
[ "${WITH_OPENMP:-1}" = 1 ] && run 200 $B --benchmark_filter='BM_SurveyEndToEnd/OpenMP'
