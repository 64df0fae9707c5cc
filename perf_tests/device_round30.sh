#!/usr/bin/env bash
# Round 30 on the GPU machine (issue 25): where the DL07 job's two big kernels spend their
# instructions. PART=sass: Nsight Compute's source counters (executed instructions per SASS line)
# of one emission launch and one P(T) launch (the PT_SKIP+1-th, default 9th: the first chunk's
# 512-bin group; 5 gives its 64-bin group) of the tool build/variants/${VARIANT:-v9}, on a 4096-cell
# --bins auto run, written to $OUT as CSV (SOURCE=cuda,sass: with the CUDA lines, for a tool built
# with -lineinfo). PART=timer: device seconds per kernel name (the first
# TIMER_LINES, default 8) of each of VARIANTS (default v9) on the job of device_round29.sh at
# TIMER_CELLS (16384) cells, under build/kernel_timer.so (perf_tests/tools/kernel_timer.c; kernels
# then run one at a time).
# PART may list both. Carry build/variants.tar.xz (see device_round29.sh) and build/kernel_timer.so.
set -uo pipefail
# A caller that has unpacked the archive already says so (device_round32.sh).
[ -n "${VARIANTS_UNPACKED:-}" ] || tar -xJf build/variants.tar.xz
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=$(mktemp -d)
tool=build/variants/${VARIANT:-v9}
dl07=(dust --dust-model dl07 --dust-data data/dust/dustem --stochastic-below 0.05 --precision float)
profile() {  # NAME REGEX SKIP
  ncu --clock-control none --kernel-name-base demangled --kernel-name "regex:$2" \
    --launch-skip "$3" --launch-count 1 --section SourceCounters --section InstructionStats \
    --section LaunchStats --section SpeedOfLight -o "$work/$1" \
    "$tool" "${dl07[@]}" --generate 4096 --bins auto --sed "$work/$1.h5" > "$work/$1.log" 2>&1
  tail -3 "$work/$1.log"
  ncu -i "$work/$1.ncu-rep" --page source --csv --print-source "${SOURCE:-sass}" > "$out/$1_sass.csv" 2>&1
  ncu -i "$work/$1.ncu-rep" --page details > "$out/$1_details.txt" 2>&1
  xz -T0 "$out/$1_sass.csv"
}
for part in ${PART:-sass}; do
  case "$part" in
    sass)
      profile emission EmissionFunctor 2
      profile pt StochasticFunctor "${PT_SKIP:-8}" ;;
    timer)
      for v in ${VARIANTS:-v9}; do
        echo "== $v"
        KOKKOS_PROFILE_LIBRARY=$PWD/build/kernel_timer.so KOSMOS_KERNEL_TIMES=$work/times-$v.txt \
          build/variants/$v "${dl07[@]}" --generate "${TIMER_CELLS:-16384}" --bins auto \
          --temperatures "$work/timer.h5" --sed "$work/timer.h5" > /dev/null 2>&1
        head -"${TIMER_LINES:-8}" "$work/times-$v.txt"
        rm -f "$work/timer.h5"
      done ;;
  esac
done
rm -rf "$work"
