#!/usr/bin/env bash
# Round 22 on the GPU machine (issue 29): the tracker's paths on a team thread each, the path's rows
# over the thread's vector lanes. Needs build/shipped.tar.xz (scripts/device.sh ship kosmos_cli
# kosmos_series_benchmarks kosmos_series_tests); EARLIER=FILE (xz of a shipped build/cuda/src/cli/
# kosmos of an earlier commit, carried in its own call: both do not fit one call's carry) adds that
# tool to PART=cli.
# PART (default "tests bench cli"):
#   tests  the tracker's unit tests on the CUDA build (every enabled space)
#   bench  the BM_Track rows FILTER picks (default: cyclic-7, katsura-10 and the random quadratic
#          system in double double, and the escalated cyclic-7 run, on CUDA)
#   cli    `kosmos series --track examples/series/cyclic7.txt --precision 2 --max-precision 2
#          --seed 2021` (BM_Track/cyclic7/N2's job), process wall, for each --lanes in LANES
#          (default "0": automatic), RUNS times (default 1), and the earlier tool if given
#   seeds  the tool with its defaults (double, raised to 2 and 4 doubles) for SEEDS (default
#          "1 2 2021"), each .h5 into $OUT (perf_tests/series/cyclic_symmetry.py counts them)
set -uo pipefail
parts=${PART:-tests bench cli}
[ -d build/cuda/shipped-lib ] || [ ! -f build/shipped.tar.xz ] || scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} OMP_PROC_BIND=spread OMP_PLACES=threads
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
out=${OUT:-$(mktemp -d)}
job="series --track examples/series/cyclic7.txt --precision 2 --max-precision 2 --seed 2021"
for part in $parts; do
  echo "== $part"
  case $part in
    tests)
      timeout 400 build/cuda/unit_tests/series/kosmos_series_tests --gtest_filter='*Track*' 2>&1 |
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]" ;;
    bench)
      timeout 500 build/cuda/perf_tests/series/kosmos_series_benchmarks \
        --benchmark_filter="${FILTER:-BM_Track(Escalated)?/(cyclic7|katsura10|random10x2)/N(2|1to4)/Cuda}" \
        --benchmark_counters_tabular=true 2>&1 | grep -vE "^\*\*\*|^-+$" ;;
    cli)
      for run in $(seq "${RUNS:-1}"); do
        if [ -x build/cuda/src/cli/kosmos ]; then
          for lanes in ${LANES:-0}; do
            /usr/bin/time -f "lanes $lanes: %e s wall" build/cuda/src/cli/kosmos $job \
              --lanes "$lanes" 2>&1 | tail -2
          done
        fi
        if [ -n "${EARLIER:-}" ]; then
          xz -dc "$EARLIER" > /tmp/kosmos-earlier && chmod +x /tmp/kosmos-earlier
          /usr/bin/time -f "earlier tool: %e s wall" /tmp/kosmos-earlier $job 2>&1 | tail -2
        fi
      done ;;
    seeds)
      for seed in ${SEEDS:-1 2 2021}; do
        /usr/bin/time -f "seed $seed: %e s wall" build/cuda/src/cli/kosmos series --track \
          examples/series/cyclic7.txt --seed "$seed" --output "$out/cyclic7_seed$seed.h5" 2>&1 |
          tail -1
      done ;;
  esac
done
