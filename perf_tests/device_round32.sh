#!/usr/bin/env bash
# Round 32 on the GPU machine (issue 25), everything in one call. Carry build/variants.tar.xz
# (device_round29.sh's archive: the tools as build/variants/NAME; round 32's were v16, round 30's
# tool; v32b, round 32's; v32a, round 32's without its emission changes; v32c, round 32's with
# StochasticOptions::use_cuda_specialization off; and the CUDA dust tests of the tree measured,
# build/cuda/unit_tests/dust/kosmos_dust_tests) and
# build/kernel_timer.so. PART picks parts (default "runs timings timer resources tests"):
#   runs       the variants (VARIANTS, default all) on the DL07 job at 65536 cells, RUNS (default 2)
#              times alternating, then once at 262144 cells; their SEDs of 256 cells to $OUT
#   timings    the tool's own stage timings at 262144 cells (TIMINGS_VARIANT, default the last)
#   timer      device seconds per kernel under kernel_timer.so (device_round30.sh's PART=timer)
#   resources  registers, stack and shared memory of the P(T) and emission kernels (cuobjdump)
#   tests      the CUDA dust tests (every enabled space: Serial, OpenMP, Cuda)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Once: the scripts it calls would unpack the 42 MB archive again (a caller that has unpacked it
# already, device_round33.sh, says so).
[ -n "${VARIANTS_UNPACKED:-}" ] || tar -xJf build/variants.tar.xz
export VARIANTS_UNPACKED=1
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
work=$(mktemp -d)
variants=${VARIANTS:-$(cd build/variants && ls | sort)}
for part in ${PART:-runs timings timer resources tests}; do
  echo "=== $part ($(date +%T))"
  case "$part" in
    runs)
      VARIANTS="$variants" RUNS=${RUNS:-2} CELLS=65536 bash "$here/device_round29.sh"
      VARIANTS="$variants" RUNS=1 CELLS=262144 SED_CELLS=0 bash "$here/device_round29.sh" ;;
    timings)
      v=${TIMINGS_VARIANT:-$(echo $variants | tr ' ' '\n' | tail -n1)}
      build/variants/$v dust --dust-model dl07 --dust-data data/dust/dustem --stochastic-below 0.05 \
        --precision float --generate 262144 --bins auto --temperatures "$work/t.h5" --sed "$work/t.h5" \
        --bands IRAC1,IRAC4,MIPS24,PACS160 --photometry "$work/t.h5" --distance 1e6 --timings 2>&1 | tail -n 30
      rm -f "$work/t.h5" ;;
    timer) VARIANTS="$variants" TIMER_LINES=${TIMER_LINES:-6} PART=timer bash "$here/device_round30.sh" ;;
    resources)
      for v in $variants; do
        echo "== $v"
        cuobjdump --dump-resource-usage "build/variants/$v" 2>/dev/null |
          grep -A1 -E "StochasticFunctor|EmissionFunctor" | grep -oE "REG:[0-9]+ STACK:[0-9]+ SHARED:[0-9]+ LOCAL:[0-9]+" |
          sort | uniq -c
      done ;;
    tests)
      built_in=$(cat build/cuda/shipped-source-root)
      [ -e "$built_in" ] || { mkdir -p "$(dirname "$built_in")" && ln -s "$PWD" "$built_in"; }
      build/cuda/unit_tests/dust/kosmos_dust_tests --gtest_brief=1 2>&1 | tail -n 25 ;;
  esac
done
rm -rf "$work"
