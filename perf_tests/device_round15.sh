#!/usr/bin/env bash
# Round 15 on the GPU machine (issue 29): the path tracker on cyclic-7 after the end game's
# fallback fix, and PHCpack's one-core rate on the same machine's CPU. Needs build/shipped.tar.xz
# (scripts/device.sh ship kosmos_cli kosmos_series_benchmarks kosmos_series_tests) and, for
# PART=phc, build/phc.xz (xz of the phc that scripts/phcpack.sh builds; it needs only the C
# library); both fit one call's carry when the ship holds only kosmos_series_benchmarks (with the
# tool and the tests too, carry them in separate calls).
# PART (default "tests bench seeds"):
#   tests  the tracker's unit tests on the CUDA build (every enabled space)
#   bench  BM_Track/cyclic7 in 1, 2 and 4 doubles and BM_TrackEscalated/cyclic7 (CUDA and the
#          16 OpenMP threads), or those FILTER picks
#   seeds  `kosmos series --track examples/series/cyclic7.txt` with the defaults for SEEDS
#          (default "1 2 3"), the .h5 of each into $OUT (perf_tests/series/cyclic_symmetry.py
#          counts what each found against the orbit closure)
#   phc    compare_phcpack.py --time --phc-only --jobs 16 on cyclic7 and katsura10
set -uo pipefail
parts=${PART:-tests bench seeds}
[ "$parts" = phc ] || scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16} OMP_PROC_BIND=spread OMP_PLACES=threads
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
lscpu | grep -E "^Model name|^CPU\(s\)|^Thread"
out=${OUT:-$(mktemp -d)}
for part in $parts; do
  echo "== $part"
  case $part in
    tests)
      timeout 300 build/cuda/unit_tests/series/kosmos_series_tests --gtest_filter='*Track*' 2>&1 |
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]|^\[       OK" ;;
    bench)
      timeout 500 build/cuda/perf_tests/series/kosmos_series_benchmarks \
        --benchmark_filter="${FILTER:-BM_Track(Escalated)?/cyclic7/}" --benchmark_counters_tabular=true 2>&1 |
        grep -vE "^\*\*\*|^-+$" ;;
    seeds)
      for seed in ${SEEDS:-1 2 3}; do
        /usr/bin/time -f "seed $seed: %e s wall" build/cuda/src/cli/kosmos series --track \
          examples/series/cyclic7.txt --seed "$seed" --output "$out/cyclic7_seed$seed.h5" 2>&1 |
          tail -1
      done ;;
    phc)
      phc=$(mktemp -d)/phc
      xz -dc build/phc.xz > "$phc" && chmod +x "$phc"
      "$phc" --version | head -1
      timeout 500 python3 perf_tests/series/compare_phcpack.py "$phc" --time --phc-only --jobs 16 \
        --systems "${SYSTEMS:-cyclic7,katsura10}" --work "$(mktemp -d)" | grep "^|" ;;
  esac
done
