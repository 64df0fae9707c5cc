#!/usr/bin/env bash
# Round 24 on the GPU machine (issue 23): the evidence survey when the stars that importance
# sampling leaves ladder only the counts it could not estimate. Shipped CUDA binaries
# (scripts/device.sh ship kosmos_kepler_benchmarks kosmos_kepler_tests, carry
# build/shipped.tar.xz) and main's benchmark before this round (build/before.tar.xz: its
# stripped kosmos_kepler_benchmarks); the kernel timer built here (gcc -O2 -shared -fPIC -o
# build/kernel_timer.so perf_tests/tools/kernel_timer.c -ldl -lpthread, carried) for PART=timer.
# PART=tests: the evidence tests on every backend of the CUDA build.
# PART=evidence: BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda (1000 stars), before and after,
# RUNS times each, alternating; then the same benchmark on the 16 cores (3 stars).
# PART=timer: the after benchmark once under the kernel timer (its table in $OUT/kernels.txt).
set -uo pipefail
source perf_tests/device_shipped_env.sh
out=${OUT:-/tmp}
K=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
evidence='BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda'
for part in ${PART:-tests evidence}; do
  case $part in
    tests)
      timeout 400 build/cuda/unit_tests/kepler/kosmos_kepler_tests \
        --gtest_filter='KeplerSurveyEvidence.*:KeplerEvidence.*' 2>&1 |
        grep -E '^\[ *(OK|FAILED|PASSED) *\]|\[kepler\]|Failure|Expected|Which' | head -80 ;;
    evidence)
      [ -d build/before ] || tar -xJf build/before.tar.xz
      for ((run = 1; run <= ${RUNS:-1}; ++run)); do
        for tool in before after; do
          k=$K; [ $tool = before ] && k=build/before/kosmos_kepler_benchmarks
          echo "== $tool, run $run"
          timeout 280 $k --benchmark_filter="$evidence" --benchmark_counters_tabular=true 2>&1 |
            grep -E "^BM_|^Benchmark"
        done
      done
      echo "== after, 16 OpenMP threads"
      timeout 200 $K --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/OpenMP' \
        --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark" ;;
    timer)
      timeout 400 env KOKKOS_PROFILE_LIBRARY=$PWD/build/kernel_timer.so \
        KOSMOS_KERNEL_TIMES=$out/kernels.txt $K --benchmark_filter="$evidence" \
        --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark"
      head -40 $out/kernels.txt ;;
  esac
done
