#!/usr/bin/env bash
# Round 36 on the GPU machine (issue 25), in one call: the P(T) emission's sums at every
# wavelength against sums at nodes (--pt-emission-spacing 0.04 and 0.08), one tool. Carry
# build/shipped.tar.xz (`scripts/device.sh ship kosmos_cli kosmos_dust_tests` on the VM) and
# build/kernel_timer.so. The options become variants of device_round29/30/32.sh (build/variants/
# exact, nodes04, nodes08: the tool, and scripts that add the option), so this prints the DL07 job
# at 65536 cells (RUNS, default 2, alternating) and at 262144 cells with the whole --timings line,
# device seconds per kernel at 16384 cells, and the CUDA dust tests (among them
# EmissionFromNodesMatchesEveryWavelength); SEDs of 256 cells to $OUT for the VM to compare.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tar -xJf build/shipped.tar.xz
mkdir -p build/variants
cp build/cuda/src/cli/kosmos build/variants/exact
for spacing in 04 08; do
  printf '#!/bin/sh\nexec "$(dirname "$0")/exact" "$@" --pt-emission-spacing 0.%s\n' "$spacing" \
    > "build/variants/nodes$spacing"
  chmod +x "build/variants/nodes$spacing"
done
variants="exact nodes04 nodes08"
# BASELINE_PATCH: an earlier tool as a zstd patch against this one (zstd --patch-from on the VM),
# run as variant "baseline" so that the refactored exact path is compared in the same call.
if [ -n "${BASELINE_PATCH:-}" ]; then
  zstd -q -d --long=27 --patch-from=build/variants/exact "$BASELINE_PATCH" -o build/variants/baseline &&
    chmod +x build/variants/baseline && variants="baseline $variants"
fi
export VARIANTS_UNPACKED=1 OUT=${OUT:-$PWD/out}
VARIANTS="$variants" RUNS=${RUNS:-2} CELLS=65536 SED_CELLS=256 bash "$here/device_round29.sh"
VARIANTS="$variants" FULL_TIMINGS=1 RUNS=1 CELLS=262144 SED_CELLS=0 bash "$here/device_round29.sh"
VARIANTS="$variants" PART=timer TIMER_LINES=8 bash "$here/device_round30.sh" 2>&1 |
  grep -E "^==|stochastic_(heating|emission)$" | grep -v region
PART=tests bash "$here/device_round32.sh"
