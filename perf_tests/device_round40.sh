#!/usr/bin/env bash
# Round 40 on the GPU machine (issue 25), in one call; it also runs round 39's checks, which had no
# GPU. Carry build/round40.tar.xz (device_round29.sh's layout: the shipped libraries and
# build/variants/: r36, round 36's tool; r39, the race fixed and the emission's weights coalesced;
# r40, emission nodes summed once a (cell, species), then interpolated a thread a (cell,
# wavelength); r40g, r40 with the P(T) kernel's spectrum sums in level-1 scratch on a GPU
# (perf_tests/patches/round40-spectrum-global.patch of 43bed91); r40gl, r40g with the P(T) launches
# under LaunchBounds<64, 12>; r40l, the tool of 2ba5f88 with -lineinfo (the lineinfo.patch of
# 48530cc^); and r40's CUDA dust tests) and build/kernel_timer.so.
# PARTS picks among "runs timer tests racecheck sass ncu" (default: all but sass; NCU=0 leaves ncu
# out), in this order: runs, the DL07 job at 262144 cells (r39 at every wavelength, r36, r39, r40,
# r40g and r40gl at --pt-emission-spacing 0.04; --timings) with SEDs of 256 cells to $OUT; timer,
# device seconds per kernel at 16384 cells; tests, the CUDA dust tests; racecheck, on r40 at D =
# 0.04 (2 cells; hazards by kernel); sass, Nsight Compute's source counters of a full chunk's P(T)
# launch of r40l; ncu, Nsight Compute's details of a full chunk's P(T) launches and of r40's node
# sums. Round 40's call ran runs, timer, tests and a racecheck cut at 90 s: what is left is
# `PARTS="sass ncu racecheck"`.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf build/round40.tar.xz
export VARIANTS_UNPACKED=1 LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
for v in r36 r39 r40 r40g r40gl; do
  printf '#!/bin/sh\nexec "$(dirname "$0")/%s" "$@" --pt-emission-spacing 0.04\n' "$v" \
    > "build/variants/$v-nodes04"
  chmod +x "build/variants/$v-nodes04"
done
variants="r39 r36-nodes04 r39-nodes04 r40-nodes04 r40g-nodes04 r40gl-nodes04"
parts=" ${PARTS:-runs timer tests racecheck ncu} "
[ "${NCU:-1}" = 0 ] && parts=${parts/ ncu / }
if [[ $parts == *" runs "* ]]; then
  echo "=== runs ($(date +%T))"
  VARIANTS="$variants" FULL_TIMINGS=1 RUNS=1 CELLS=262144 SED_CELLS=256 bash "$here/device_round29.sh"
fi
if [[ $parts == *" timer "* ]]; then
  echo "=== timer ($(date +%T))"
  VARIANTS="r39-nodes04 r40-nodes04 r40g-nodes04 r40gl-nodes04" PART=timer TIMER_LINES=10 \
    bash "$here/device_round30.sh" 2>&1 |
    grep -E "^==|stochastic_(heating|emission|emission_nodes)$" | grep -v region
  VARIANTS="r40 r40g r40gl" PART=resources bash "$here/device_round32.sh"
fi
if [[ $parts == *" tests "* ]]; then
  echo "=== tests ($(date +%T))"
  PART=tests bash "$here/device_round32.sh"
fi
if [[ $parts == *" racecheck "* ]]; then
  echo "=== racecheck ($(date +%T))"
  SANITIZER_SECONDS=240 TOOL=build/variants/r40-nodes04 PARTS=sanitize bash "$here/device_round38.sh"
fi
if [[ $parts == *" sass "* ]]; then
  # Source counters (executed instructions and stall samples per CUDA and SASS line) of one
  # full-chunk launch of the P(T) kernel of r40l (HEAD's tool built with -lineinfo), chosen as
  # device_round38.sh's ncu part chooses it, as CSV to $OUT.
  echo "=== sass ($(date +%T))"
  work=$(mktemp -d)
  timeout 150 ncu --clock-control none --kernel-name-base demangled \
    --kernel-name "regex:StochasticFunctor.*WriteEmissionBins" --launch-skip 40 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
    --section SpeedOfLight -o "$work/pt" build/variants/r40l dust --dust-model dl07 \
    --dust-data data/dust/dustem --stochastic-below 0.05 --precision float --generate 16384 \
    --chunk-cells 1024 --bins auto --sed "$work/s.h5" > "$OUT/sass-pt.log" 2>&1
  tail -3 "$OUT/sass-pt.log"
  ncu -i "$work/pt.ncu-rep" --page source --csv --print-source cuda,sass > "$OUT/pt_sass.csv" 2>&1
  ncu -i "$work/pt.ncu-rep" --page details > "$OUT/pt_details.txt" 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit" \
    "$OUT/pt_details.txt" | head -n 12
  xz -T0 "$OUT/pt_sass.csv"
  rm -rf "$work"
fi
[[ $parts == *" ncu "* ]] || exit 0
echo "=== ncu ($(date +%T))"
TOOL=build/variants/r40 PARTS=ncu NCU_KERNELS="heating:StochasticFunctor.*WriteEmissionBins:40:4:0.04 \
nodes:NodeSumsFunctor:2:1:0.04" bash "$here/device_round38.sh"
