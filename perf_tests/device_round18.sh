#!/usr/bin/env bash
# Round 18 on the GPU machine (issue 29): the tracker's GPU launch with its tail handed to the
# host's cores (--host-tail) and the divergence test's cadence (--divergence-checks), on cyclic-7.
# Needs build/shipped.tar.xz: `scripts/device.sh ship kosmos_cli` for PART=cli or seeds,
# `scripts/device.sh ship kosmos_series_benchmarks kosmos_series_tests` for PART=tests or bench.
# PART (default "cli"):
#   cli    `kosmos series --track examples/series/cyclic7.txt --precision 2 --max-precision 2
#          --seed 2021` (the job of BM_Track/cyclic7/N2) for each CHECKS x TAILS
#          (--divergence-checks, --host-tail; defaults "4" and "0 256"), with ARGS: process
#          wall; the .h5 of each into $OUT (its attributes hold the counts and host_tail,
#          path_steps each path's steps)
#   seeds  the defaults (escalation to quad double) with SEEDS (default "1 2 3") and the extra
#          ARGS; the .h5 of each into $OUT (perf_tests/series/cyclic_symmetry.py counts them)
#   tests  the tracker's unit tests on the CUDA build (every enabled space)
#   bench  the BM_Track rows FILTER picks (CUDA and 16 OpenMP threads)
set -uo pipefail
parts=${PART:-cli}
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} OMP_PROC_BIND=spread OMP_PLACES=threads
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
lscpu | grep -E "^Model name|^CPU\(s\)"
out=${OUT:-$(mktemp -d)}
for part in $parts; do
  echo "== $part"
  case $part in
    cli)
      for checks in ${CHECKS:-4}; do
        for tail in ${TAILS:-0 256}; do
          name=cyclic7_dd_tail${tail}_checks$checks
          /usr/bin/time -f "host-tail $tail checks $checks: %e s wall" build/cuda/src/cli/kosmos \
            series --track examples/series/cyclic7.txt --precision 2 --max-precision 2 --seed 2021 \
            --host-tail "$tail" --divergence-checks "$checks" ${ARGS:-} --output "$out/$name.h5" \
            2>&1 | tail -1
        done
      done ;;
    seeds)
      for seed in ${SEEDS:-1 2 3}; do
        /usr/bin/time -f "seed $seed: %e s wall" build/cuda/src/cli/kosmos series --track \
          examples/series/cyclic7.txt --seed "$seed" ${ARGS:-} \
          --output "$out/cyclic7_seed$seed.h5" 2>&1 | tail -1
      done ;;
    tests)
      timeout 400 build/cuda/unit_tests/series/kosmos_series_tests --gtest_filter='*Track*' 2>&1 |
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]|^\[       OK" ;;
    bench)
      timeout 500 build/cuda/perf_tests/series/kosmos_series_benchmarks \
        --benchmark_filter="${FILTER:-BM_Track(GpuOnly)?/cyclic7/N2/}" \
        --benchmark_counters_tabular=true 2>&1 | grep -vE "^\*\*\*|^-+$" ;;
  esac
done
