#!/usr/bin/env bash
# Round 11 on the GPU machine (issue 23, item 5: the survey with counts by evidence): shipped
# CUDA binaries (scripts/device.sh ship kosmos_kepler_benchmarks kosmos_kepler_tests, carry
# build/shipped.tar.xz). The evidence tests on the GPU first (WITH_TESTS=0 skips them).
# The evidence survey with importance screening beside the BIC survey in the same call, then
# the same evidence survey on the 16 OpenMP threads.
set -uo pipefail
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
B=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
tests() { local t=$1; shift; timeout $t "$@" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]|^\[kepler\]"; echo "tests rc=${PIPESTATUS[0]}"; }
[ "${WITH_TESTS:-1}" = 1 ] && tests 200 build/cuda/unit_tests/kepler/kosmos_kepler_tests \
  --gtest_filter='KeplerSurveyEvidence.*:KeplerEvidence.*:KeplerSearch.Survey*'
run 300 $B --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda'
run 200 $B --benchmark_filter='BM_SurveyEndToEnd/Cuda'
[ "${WITH_OPENMP:-1}" = 1 ] && run 240 $B --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/OpenMP'
