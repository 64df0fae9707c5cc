#!/usr/bin/env bash
# Round 34 on the GPU machine (issue 25), in one call: perf_tests/patches/round34-*.patch measured
# against main (the patches are in the commit before round 34's merge: v42's is merged, the others
# were left out; RESULTS.md round 34), and where main's job time goes. Carry build/variants.tar.xz (perf_tests/
# build_variants.sh makes it: v38, main's tool; v38l, main with -lineinfo (lineinfo.patch); v39,
# the photons' x in the P(T) kernel's scratch; v40, emission teams of 128; v41, both; v42, 16-bit
# first sources; v43, v42 and v40; and the CUDA dust tests of v43) and build/kernel_timer.so.
# Prints the DL07 job at 65536 cells (RUNS, default 2, alternating), at 262144 cells with the
# whole --timings line (BIG_VARIANTS, default v38 and the last variant), device seconds per kernel
# at 16384 cells, Nsight Compute's source counters of v38l's 64-bin P(T) launch and an emission
# launch (CSV to $OUT; PROFILE= leaves them out), and the CUDA dust tests; SEDs of 256 cells to
# $OUT for the VM to compare.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf build/variants.tar.xz
export VARIANTS_UNPACKED=1 OUT=${OUT:-$PWD/out}
variants=${VARIANTS:-$(cd build/variants && ls | grep -v 'l$' | sort)}
last=$(echo $variants | tr ' ' '\n' | tail -n1)
VARIANTS="$variants" RUNS=${RUNS:-2} CELLS=65536 bash "$here/device_round29.sh"
VARIANTS="${BIG_VARIANTS:-v38 $last}" FULL_TIMINGS=1 RUNS=1 CELLS=262144 SED_CELLS=0 bash "$here/device_round29.sh"
VARIANTS="$variants" PART=timer TIMER_LINES=8 bash "$here/device_round30.sh" 2>&1 |
  grep -E "^==|stochastic_(heating|emission)$" | grep -v region
[ -n "${PROFILE-1}" ] && VARIANT=v38l PART=sass PT_SKIP=5 SOURCE=cuda,sass bash "$here/device_round30.sh"
PART=tests bash "$here/device_round32.sh"
