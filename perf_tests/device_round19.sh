#!/usr/bin/env bash
# Round 19 on the GPU machine (issues 23 and 27): where the host's CPU time goes in the RV survey.
# Shipped CUDA binaries (scripts/device.sh ship kosmos_cli kosmos_kepler_benchmarks, carry
# build/shipped.tar.xz) and the sampling profiler built here (gcc -O2 -shared -fPIC -o
# build/sampling_profiler.so perf_tests/tools/sampling_profiler.c, carry it too); the device has
# no perf. Profiles go to $OUT; read them here with perf_tests/tools/symbolize_profile.py PROFILE
# build/cuda. PART=rv: `kosmos rv --batch` of STARS copies of HD 164922, --planets 1 (the job of
# perf_tests/mpi_scaling.sh, one rank), timed without and with the profiler and at 8 and 4 CPUs.
# PART=wait: the same job with the OpenMP runtime's idle threads spinning or asleep.
# PART=main: the main thread's wall time (KOSMOS_PROFILE_MAIN) in rv --batch and both survey
# benchmarks.
# PART=compare: this round's tools (build/shipped.tar.xz, unshipped by an earlier call on the
# same warm machine) against main's before it (build/before.tar.xz: the stripped kosmos and
# kosmos_kepler_benchmarks of main), rv --batch twice each and both survey benchmarks.
# PART=evidence: the survey benchmarks by evidence and by BIC, profiled.
set -uo pipefail
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
out=${OUT:-/tmp}
profiler=$PWD/build/sampling_profiler.so
kosmos=$PWD/build/cuda/src/cli/kosmos
stars=${STARS:-256}
work=$(mktemp -d)
log=$(mktemp)
for ((s = 0; s < stars; ++s)); do cp data/rv/hd164922_radvel.txt "$work/star_$(printf '%05d' $s).txt"; done
cputime() { # LABEL COMMAND...: wall, user and system seconds of the command
  local label=$1; shift
  local t0=$(date +%s.%N)
  "$@" > "$log" 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "$label: rc=$rc wall $(awk -v a=$t0 -v b=$t1 'BEGIN{print b-a}') s; $(grep -E '^done in' "$log")"
  [ $rc = 0 ] || tail -n 20 "$log"
}
for part in ${PART:-rv evidence}; do
  case $part in
    rv)
      for run in 1 2; do
        cputime "rv $stars stars, 16 CPUs, run $run" bash -c "time $kosmos rv --batch $work --planets 1 --quiet"
        grep -E '^(real|user|sys)' "$log" | tr '\n' ' '; echo
      done
      cputime "rv profiled, 16 CPUs" env KOSMOS_PROFILE=$out/rv16.prof LD_PRELOAD=$profiler \
        $kosmos rv --batch $work --planets 1 --quiet
      for cpus in 8 4; do
        cputime "rv $stars stars, $cpus CPUs" bash -c "time taskset -c 0-$((cpus - 1)) env OMP_NUM_THREADS=$cpus $kosmos rv --batch $work --planets 1 --quiet"
        grep -E '^(real|user|sys)' "$log" | tr '\n' ' '; echo
      done ;;
    wait)  # the OpenMP runtime's idle threads: spinning (libgomp's default) or asleep
      for policy in active passive; do
        for run in 1 2; do
          cputime "rv $stars stars, 16 CPUs, OMP_WAIT_POLICY=$policy, run $run" bash -c "time OMP_WAIT_POLICY=$policy $kosmos rv --batch $work --planets 1 --quiet"
          grep -E '^(real|user|sys)' "$log" | tr '\n' ' '; echo
        done
      done
      cputime "rv $stars stars, default policy" bash -c "time $kosmos rv --batch $work --planets 1 --quiet"
      grep -E '^(real|user|sys)' "$log" | tr '\n' ' '; echo
      cputime "rv profiled, passive" env OMP_WAIT_POLICY=passive KOSMOS_PROFILE=$out/rv16_passive.prof LD_PRELOAD=$profiler \
        $kosmos rv --batch $work --planets 1 --quiet ;;
    main)  # the main thread's wall time: rv --batch, the BIC and evidence survey benchmarks
      cputime "rv profiled, main thread" env KOSMOS_PROFILE_MAIN=1 KOSMOS_PROFILE=$out/rv_main.prof LD_PRELOAD=$profiler \
        $kosmos rv --batch $work --planets 1 --quiet
      K=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
      timeout 200 env KOSMOS_PROFILE_MAIN=1 KOSMOS_PROFILE=$out/bic_main.prof LD_PRELOAD=$profiler $K \
        --benchmark_filter='BM_SurveyEndToEnd/Cuda' --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark"
      timeout 300 env KOSMOS_PROFILE_MAIN=1 KOSMOS_PROFILE=$out/evidence_main.prof LD_PRELOAD=$profiler $K \
        --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda' --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark" ;;
    compare)  # this round's tools against main's before it (build/before, from build/before.tar.xz)
      [ -d build/before ] || tar -xJf build/before.tar.xz
      K=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
      for run in 1 2; do
        for tool in before after; do
          k=$kosmos; [ $tool = before ] && k=$PWD/build/before/kosmos
          cputime "rv $stars stars, $tool, run $run" bash -c "time $k rv --batch $work --planets 1 --quiet --summary $out/summary_$tool.txt"
          grep -E '^(real|user|sys)' "$log" | tr '\n' ' '; echo
        done
      done
      cmp $out/summary_before.txt $out/summary_after.txt && echo "summaries identical"
      for filter in 'BM_SurveyEndToEnd/Cuda' 'BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda'; do
        for tool in before after; do
          b=$K; [ $tool = before ] && b=build/before/kosmos_kepler_benchmarks
          echo "== $tool"
          timeout 200 $b --benchmark_filter="$filter" --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark"
        done
      done ;;
    evidence)
      K=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
      timeout 300 env KOSMOS_PROFILE=$out/evidence.prof LD_PRELOAD=$profiler $K \
        --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda' --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark|rc="
      timeout 200 env KOSMOS_PROFILE=$out/bic.prof LD_PRELOAD=$profiler $K \
        --benchmark_filter='BM_SurveyEndToEnd/Cuda' --benchmark_counters_tabular=true 2>&1 | grep -E "^BM_|^Benchmark" ;;
  esac
done
rm -rf "$work"
