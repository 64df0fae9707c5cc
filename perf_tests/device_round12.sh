#!/usr/bin/env bash
# Round 12 on the GPU machine (issues 24 and 29): shipped CUDA binaries (scripts/device.sh ship
# kosmos_nbody_tests kosmos_nbody_benchmarks kosmos_series_benchmarks, carry
# build/shipped.tar.xz). PART=tests: the nbody unit tests on the GPU (integrate() now compiled
# once per space in the library). PART=hermite: the register Hermite (a group of lanes per system
# from 6 bodies) beside the team kernel, CUDA and 16 OpenMP threads (issue 24, item 7).
# PART=track: the tracker on cyclic-7 with the default precision raise (issue 29).
# PART=stability: the posterior-stability job's 16-core row beside the GPU (issue 24, item 6).
# PART=python: the Python tests on the GPU with the CUDA module (`ship kosmos_cli python`; issue
# 26), with the device's own python3, numpy, pytest and matplotlib.
# PART=overhead (round 13): integrate()'s cost per call (one step of the Table 3 ensemble) and
# the register Hermite rows it weighs on, CUDA and 16 OpenMP threads (issue 24).
# PART=restarts (round 13; `ship kosmos_cli`): exact restarts on the GPU through the tool, a run
# against the same run in checkpoint segments and with 7 steps per launch, byte for byte.
# PART=evidence (round 13; `ship kosmos_kepler_benchmarks`): the survey by evidence with its
# stages' seconds, beside the BIC survey (issue 23).
set -uo pipefail
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
tests() { local t=$1; shift; timeout $t "$@" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]"; echo "tests rc=${PIPESTATUS[0]}"; }
N=build/cuda/perf_tests/nbody/kosmos_nbody_benchmarks
S=build/cuda/perf_tests/series/kosmos_series_benchmarks
for part in ${PART:-tests hermite track}; do
  case $part in
    tests) tests 400 build/cuda/unit_tests/nbody/kosmos_nbody_tests ;;
    hermite)
      run 200 $N --benchmark_filter='BM_nbody_Table3_Hermite_(registers|team)/Cuda/n:[3-8]/'
      run 200 $N --benchmark_filter='BM_nbody_Table3_Hermite_registers/OpenMP/n:[3-8]/' ;;
    overhead)
      run 100 $N --benchmark_filter='BM_nbody_CallOverhead_Hermite_registers/(Cuda|OpenMP)/'
      run 200 $N --benchmark_filter='BM_nbody_Table3_Hermite_(registers|team)/Cuda/n:[3-8]/' ;;
    evidence)
      K=build/cuda/perf_tests/kepler/kosmos_kepler_benchmarks
      run 300 $K --benchmark_filter='BM_SurveyEvidenceEndToEnd<T16,screened>/Cuda'
      run 200 $K --benchmark_filter='BM_SurveyEndToEnd/Cuda' ;;
    restarts)
      d=$(mktemp -d)
      for integ in hermite hermite_adaptive ias15 whfast mvs mercurius rkck_adaptive; do
        case $integ in whfast | mvs | mercurius) dt=1e-2 ;; *) dt=1e-3 ;; esac
        args=(nbody --generate 4096 --bodies 4 --integrator $integ --dt $dt --destination 20 --allow-failures)
        build/cuda/src/cli/kosmos "${args[@]}" --output $d/a.txt > /dev/null || echo "$integ: run failed"
        build/cuda/src/cli/kosmos "${args[@]}" --output $d/b.txt --checkpoint $d/c.bin \
          --checkpoint-interval 3 > /dev/null || echo "$integ: checkpointed run failed"
        build/cuda/src/cli/kosmos "${args[@]}" --output $d/s.txt --steps-per-launch 7 > /dev/null ||
          echo "$integ: 7-step run failed"
        same() { cmp -s $d/a.txt $d/$1 && echo identical || echo DIFFER; }
        printf '%-17s segments %s, steps-per-launch %s\n' $integ "$(same b.txt)" "$(same s.txt)"
      done ;;
    stability)
      B=build/cuda/perf_tests/nbody/kosmos_nbody_stability_benchmarks
      run 200 $B --benchmark_filter='BM_nbody_StabilityPosterior_WHFast_MEGNO/(Cuda|OpenMP)/draws:10000/'
      run 100 $B --benchmark_filter='BM_nbody_StabilityPosterior_WHFast_MEGNO/Cuda/draws:100000/' ;;
    python)
      cli=$PWD/build/cuda/src/cli/kosmos
      # KOSMOS_PYTHON: the tool's --plot runs this interpreter (the build's is this machine's)
      KOSMOS_PYTHON=$(command -v python3) PYTHONPATH=$PWD/build/cuda/python-device \
        KOSMOS_CLI=$([ -x $cli ] && echo $cli) \
        timeout 500 python3 -m pytest -q -rs -p no:cacheprovider python/tests 2>&1 | tail -n 30
      echo "pytest rc=${PIPESTATUS[0]}" ;;
    track)
      tests 300 build/cuda/unit_tests/series/kosmos_series_tests --gtest_filter='*Track*'
      run 100 $S --benchmark_filter='BM_Track/cyclic7/N1/Cuda'
      run 300 $S --benchmark_filter='BM_TrackEscalated/cyclic7/N1to4/Cuda' ;;
  esac
done
