#!/usr/bin/env bash
# Round 25 on the GPU machine (issue 23): where the evidence survey's posterior stage goes, and
# its planet counts sampled in one batch. Shipped CUDA binaries (scripts/device.sh ship
# kosmos_kepler_benchmarks kosmos_kepler_tests, carry build/shipped.tar.xz); main's benchmark
# before this round as build/before.tar.xz (its stripped kosmos_kepler_benchmarks); the
# profilers built here (gcc -O2 -shared -fPIC -o build/sampling_profiler.so
# perf_tests/tools/sampling_profiler.c; build/kernel_timer.so as device_round24.sh says), carried.
# PART=tests: the survey and evidence tests on every backend of the CUDA build.
# PART=evidence: BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda (1000 stars), before and after,
# RUNS times each, alternating (BIC=1: BM_SurveyEndToEnd/Cuda too).
# PART=profile: the after benchmark once with the main thread sampled per millisecond of wall
# ($OUT/evidence_main.prof; name its functions here with perf_tests/tools/symbolize_profile.py).
# PART=profile_all: the same with every thread sampled per millisecond of the process' CPU time
# ($OUT/evidence_all.prof).
# PART=timer: the after benchmark once under the kernel timer ($OUT/kernels.txt).
# PART=openmp: the evidence benchmark on the 16 cores (3 stars).
set -uo pipefail
source perf_tests/device_shipped_env.sh
out=${OUT:-/tmp}
K=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
evidence='BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda'
bench() {
  timeout 280 "$@" --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark"
}
for part in ${PART:-tests evidence}; do
  case $part in
    tests)
      timeout 400 build/cuda/unit_tests/kepler/kosmos_kepler_tests \
        --gtest_filter='KeplerSurvey*:KeplerEvidence.*' 2>&1 |
        grep -E '^\[ *(OK|FAILED|PASSED) *\]|\[kepler\]|Failure|Expected|Which' | head -120 ;;
    evidence)
      [ -d build/before ] || tar -xJf build/before.tar.xz
      filter=$evidence
      [ "${BIC:-0}" = 1 ] && filter="$evidence|BM_SurveyEndToEnd/Cuda"
      for ((run = 1; run <= ${RUNS:-1}; ++run)); do
        for tool in before after; do
          k=$K; [ $tool = before ] && k=build/before/kosmos_kepler_benchmarks
          echo "== $tool, run $run"
          bench $k --benchmark_filter="$filter"
        done
      done ;;
    profile)
      bench env KOSMOS_PROFILE_MAIN=1 KOSMOS_PROFILE=$out/evidence_main.prof \
        LD_PRELOAD=$PWD/build/sampling_profiler.so $K --benchmark_filter="$evidence" ;;
    profile_all)
      bench env KOSMOS_PROFILE=$out/evidence_all.prof LD_PRELOAD=$PWD/build/sampling_profiler.so \
        $K --benchmark_filter="$evidence" ;;
    timer)
      bench env KOKKOS_PROFILE_LIBRARY=$PWD/build/kernel_timer.so \
        KOSMOS_KERNEL_TIMES=$out/kernels.txt $K --benchmark_filter="$evidence"
      head -40 $out/kernels.txt ;;
    openmp)
      bench $K --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/OpenMP' ;;
  esac
done
