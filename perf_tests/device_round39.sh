#!/usr/bin/env bash
# Round 39 on the GPU machine (issue 25), in one call: the P(T) kernel's race between its two team
# reductions (round 38) fixed, and the emission's SED weights and node weights read coalesced,
# against round 36's tool. Carry build/round39.tar.xz (device_round29.sh's layout: the shipped
# libraries, build/variants/before (round 36's tool) and after, and after's CUDA dust tests) and
# build/kernel_timer.so. Parts, in order of importance: compute-sanitizer's racecheck on the new
# tool (2 cells; hazards counted by the kernel they are in), the CUDA dust tests, the DL07 job at
# 262144 cells (every wavelength and --pt-emission-spacing 0.04, each tool, with --timings) with
# SEDs of 256 cells to $OUT, and device seconds per kernel at 16384 cells.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf build/round39.tar.xz
export VARIANTS_UNPACKED=1 LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
for v in before after; do
  printf '#!/bin/sh\nexec "$(dirname "$0")/%s" "$@" --pt-emission-spacing 0.04\n' "$v" \
    > "build/variants/$v-nodes04"
  chmod +x "build/variants/$v-nodes04"
done
variants="before after before-nodes04 after-nodes04"
echo "=== racecheck ($(date +%T))"
TOOL=build/variants/after PARTS=sanitize bash "$here/device_round38.sh"
PART=tests bash "$here/device_round32.sh"
echo "=== runs ($(date +%T))"
VARIANTS="$variants" FULL_TIMINGS=1 RUNS=1 CELLS=262144 SED_CELLS=256 bash "$here/device_round29.sh"
echo "=== timer ($(date +%T))"
VARIANTS="$variants" PART=timer TIMER_LINES=8 bash "$here/device_round30.sh" 2>&1 |
  grep -E "^==|stochastic_(heating|emission)$" | grep -v region
