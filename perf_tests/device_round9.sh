# Round 9 on the GPU (issue 23, item 5): shipped CUDA binaries (scripts/device.sh ship
# kosmos_kepler_benchmarks kosmos_kepler_tests, carry build/shipped.tar.xz). The kepler unit tests
# on the GPU (the survey layout's vector-lane chi^2 against the long-double reference), then the
# survey end to end on the GPU and on the same machine's 16 cores.
set -u
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; lscpu | grep "Model name"
B=build/cuda/perf_tests
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
timeout ${TEST_SECONDS:-240} build/cuda/unit_tests/kepler/kosmos_kepler_tests ${TEST_FILTER:+--gtest_filter=$TEST_FILTER} 2>&1 |
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]|OK \] .*(Ranges|Cuda)"; echo "tests rc=${PIPESTATUS[0]}"
run 200 $B/kepler/kosmos_kepler_benchmarks --benchmark_filter='BM_SurveySamplerFromTrueOrbits<batched>/Cuda'
run 200 $B/kepler/kosmos_kepler_benchmarks --benchmark_filter='BM_SurveyEndToEnd/Cuda'
[ "${WITH_OPENMP:-1}" = 1 ] && run 200 $B/kepler/kosmos_kepler_benchmarks --benchmark_filter='BM_SurveyEndToEnd/OpenMP'
