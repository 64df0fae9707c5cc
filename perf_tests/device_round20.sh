#!/usr/bin/env bash
# Round 20 on the GPU machine (issue 29): the path tracker with paths to a singular solution set
# at infinity stopped where they are seen to go there. Needs build/shipped.tar.xz (scripts/device.sh
# ship kosmos_cli kosmos_series_benchmarks kosmos_series_tests); PART=cli also runs the tool of an
# earlier commit when build/main-cli.xz holds it (xz of a shipped build/cuda/src/cli/kosmos; carry
# it in a second call on the warm machine: both do not fit one call's carry).
# PART (default "tests bench cli seeds"):
#   tests  the tracker's unit tests on the CUDA build (every enabled space)
#   bench  the BM_Track rows FILTER picks (default: cyclic-7, katsura-10 and the random quadratic
#          system in double double, and the escalated cyclic-7 run, on CUDA)
#   cli    `kosmos series --track examples/series/cyclic7.txt --precision 2 --max-precision 2
#          --seed 2021` (BM_Track/cyclic7/N2's job), process wall, RUNS times (default 2), with
#          this build's tool and, if carried, the earlier one
#   seeds  the same tool with its defaults (double, raised to 2 and 4 doubles) for SEEDS (default
#          "1 2 2021"), each .h5 into $OUT (perf_tests/series/cyclic_symmetry.py counts them)
set -uo pipefail
parts=${PART:-tests bench cli seeds}
[ -d build/cuda/shipped-lib ] || scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} OMP_PROC_BIND=spread OMP_PLACES=threads
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
out=${OUT:-$(mktemp -d)}
tools=build/cuda/src/cli/kosmos
if [ -f build/main-cli.xz ]; then
  xz -dc build/main-cli.xz > /tmp/kosmos-earlier && chmod +x /tmp/kosmos-earlier
  tools="/tmp/kosmos-earlier $tools"
fi
for part in $parts; do
  echo "== $part"
  case $part in
    tests)
      timeout 300 build/cuda/unit_tests/series/kosmos_series_tests --gtest_filter='*Track*' 2>&1 |
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]" ;;
    bench)
      timeout 500 build/cuda/perf_tests/series/kosmos_series_benchmarks \
        --benchmark_filter="${FILTER:-BM_Track(Escalated)?/(cyclic7|katsura10|random10x2)/N(2|1to4)/Cuda}" \
        --benchmark_counters_tabular=true 2>&1 | grep -vE "^\*\*\*|^-+$" ;;
    cli)
      for run in $(seq "${RUNS:-2}"); do
        for tool in $tools; do
          /usr/bin/time -f "$tool: %e s wall" "$tool" series --track examples/series/cyclic7.txt \
            --precision 2 --max-precision 2 --seed 2021 2>&1 | tail -2
        done
      done ;;
    seeds)
      for seed in ${SEEDS:-1 2 2021}; do
        /usr/bin/time -f "seed $seed: %e s wall" build/cuda/src/cli/kosmos series --track \
          examples/series/cyclic7.txt --seed "$seed" --output "$out/cyclic7_seed$seed.h5" 2>&1 |
          tail -1
      done ;;
  esac
done
