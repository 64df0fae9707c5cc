#!/usr/bin/env bash
# Round 33 on the GPU machine (issue 25), in one call: perf_tests/patches/round33-*.patch (merged
# since; the commit before the merge has them) measured against main before them. Carry build/variants.tar.xz (perf_tests/build_variants.sh makes it; round 33's held
# v32b, main's tool; v36, pt-emission.patch's P(T) changes; v36wu, v36 and walk-reciprocal.patch;
# v37, pt-emission.patch, the staged emission too; v37wu, both patches; and the CUDA dust tests of
# v37wu, build/cuda/unit_tests/dust/kosmos_dust_tests) and build/kernel_timer.so.
# Prints the DL07 job at 65536 cells (RUNS, default 2, alternating) and at 262144 cells (v32b and
# the last variant), device seconds per kernel at 16384 cells, and the CUDA dust tests; SEDs of 256
# cells to $OUT for the VM to compare.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf build/variants.tar.xz
export VARIANTS_UNPACKED=1 OUT=${OUT:-$PWD/out}
variants=${VARIANTS:-$(cd build/variants && ls | sort)}
last=$(echo $variants | tr ' ' '\n' | tail -n1)
VARIANTS="$variants" RUNS=${RUNS:-2} CELLS=65536 bash "$here/device_round29.sh"
VARIANTS="v32b $last" RUNS=1 CELLS=262144 SED_CELLS=0 bash "$here/device_round29.sh"
VARIANTS="$variants" PART=timer TIMER_LINES=3 bash "$here/device_round30.sh"
PART=tests bash "$here/device_round32.sh"
