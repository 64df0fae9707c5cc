#!/usr/bin/env bash
# Round 41 on the GPU machine (issue 25). Carry build/round41.tar.xz (device_round29.sh's layout:
# the shipped libraries and build/variants/: r40, round 40's tool (1ff3a16); r41, the photon
# searches in one lookup, the bins in ln T and the recursion's scratch rows padded (df600e4); r41l,
# r41 built with -lineinfo; and r41's CUDA dust tests) and build/kernel_timer.so. The second call
# carries build/round41b.tar.xz instead (ARCHIVE): the same tools, no tests, r41b (df600e4 with
# perf_tests/patches/round41-search-energies-from-x.patch: the search table without its energies,
# read from x) and r41c (r41b with round41-occupied-span-one-reduction.patch: the bins' occupied
# span in one team reduction), both built with -lineinfo by relinking the CLI around a dust.cpp
# compiled with it. Without line information such an archive comes from (p = perf_tests/patches)
# `perf_tests/build_variants.sh r41 r41b=$p/round41-search-energies-from-x.patch
# r41c=$p/round41-search-energies-from-x.patch+$p/round41-occupied-span-one-reduction.patch`
# (build/variants.tar.xz: pass it as ARCHIVE, TOOLS="r41 r41b r41c").
# PARTS picks among "runs big timer tests sass" (default all), in this order: runs, the DL07 job at
# 262144 cells (TOOLS, default "r40 r41", at --pt-emission-spacing 0.04, twice alternating;
# --timings) with SEDs of 256 cells to $OUT; big, the same at 524288 cells, once each; timer,
# device seconds per kernel at 16384 cells; tests, the CUDA dust tests of r41; sass, Nsight
# Compute's source counters of a full chunk's P(T) launch (the one round 40 profiled: 40 launches
# skipped) of each of SASS_TOOLS (default r41l). The first call ran them all with the defaults
# (its sass part on r41, which has no line information); the second is to run
# ARCHIVE=build/round41b.tar.xz PARTS="timer runs sass" TOOLS="r41 r41b r41c" SASS_TOOLS="r41l r41c".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf "${ARCHIVE:-build/round41.tar.xz}"
export VARIANTS_UNPACKED=1 LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
tools=${TOOLS:-r40 r41}
for v in $tools; do
  printf '#!/bin/sh\nexec "$(dirname "$0")/%s" "$@" --pt-emission-spacing 0.04\n' "$v" \
    > "build/variants/$v-nodes04"
  chmod +x "build/variants/$v-nodes04"
done
variants=$(printf '%s-nodes04 ' $tools)
parts=" ${PARTS:-runs big timer tests sass} "
if [[ $parts == *" runs "* ]]; then
  echo "=== runs ($(date +%T))"
  VARIANTS="$variants" FULL_TIMINGS=1 RUNS=2 CELLS=262144 SED_CELLS=256 bash "$here/device_round29.sh"
fi
if [[ $parts == *" big "* ]]; then
  echo "=== big ($(date +%T))"
  VARIANTS="$variants" FULL_TIMINGS=1 RUNS=1 CELLS=524288 SED_CELLS=0 bash "$here/device_round29.sh"
fi
if [[ $parts == *" timer "* ]]; then
  echo "=== timer ($(date +%T))"
  VARIANTS="$variants" PART=timer TIMER_LINES=10 bash "$here/device_round30.sh" 2>&1 |
    grep -E "^==|stochastic_(heating|emission|emission_nodes)$" | grep -v region
  VARIANTS="$tools" PART=resources bash "$here/device_round32.sh"
fi
if [[ $parts == *" tests "* ]]; then
  echo "=== tests ($(date +%T))"
  PART=tests bash "$here/device_round32.sh"
fi
if [[ $parts == *" sass "* ]]; then
  for v in ${SASS_TOOLS:-r41l}; do
    echo "=== sass $v ($(date +%T))"
    work=$(mktemp -d)
    timeout 150 ncu --clock-control none --kernel-name-base demangled \
      --kernel-name "regex:StochasticFunctor.*WriteEmissionBins" --launch-skip 40 --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
      --section SpeedOfLight --section MemoryWorkloadAnalysis -o "$work/pt" "build/variants/$v" \
      dust --dust-model dl07 --dust-data data/dust/dustem --stochastic-below 0.05 \
      --precision float --generate 16384 --chunk-cells 1024 --bins auto --sed "$work/s.h5" \
      > "$OUT/sass-pt-$v.log" 2>&1
    tail -3 "$OUT/sass-pt-$v.log"
    ncu -i "$work/pt.ncu-rep" --page source --csv --print-source cuda,sass > "$OUT/pt_sass_$v.csv" 2>&1
    ncu -i "$work/pt.ncu-rep" --page details > "$OUT/pt_details_$v.txt" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Hit Rate|Warp Cycles Per Issued" \
      "$OUT/pt_details_$v.txt" | head -n 8
    xz -T0 "$OUT/pt_sass_$v.csv"
    rm -rf "$work"
  done
fi
