#!/usr/bin/env bash
# Round 42 on the GPU machine (issue 25): round 42's P(T) kernel (a source's flows from registers,
# one normalizing team reduction, the enthalpy's inverse from a search table, the photon rate by a
# product; the emission bins' span in one reduction) against round 41's tool (0ee2af6), and with
# the photon search table without its energies (perf_tests/patches/round41-search-energies-from-
# x.patch). The archive is built on the development VM (p = perf_tests/patches; about an hour on 2
# cores from a cold cache: the library is built twice, since core/compat.hpp differs at 0ee2af6):
#   perf_tests/build_variants.sh r42 r41=@0ee2af6 r42l=$p/lineinfo.patch \
#     r42b=$p/round41-search-energies-from-x.patch
# and carried as build/variants.tar.xz with build/kernel_timer.so (gcc -O2 -shared -fPIC -o
# build/kernel_timer.so perf_tests/tools/kernel_timer.c -ldl -lpthread). The parts are
# device_round41.sh's: the DL07 job at 262144 cells (twice, alternating) and at 524288 cells,
# device seconds per kernel, the CUDA dust tests (r42b's build: this tree's tests with the patch),
# and Nsight Compute's source counters of r42l (r42 with line information) for the next round.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ARCHIVE=${ARCHIVE:-build/variants.tar.xz} TOOLS=${TOOLS:-r41 r42 r42b} SASS_TOOLS=${SASS_TOOLS:-r42l} \
  PARTS=${PARTS:-runs big timer tests sass} exec bash "$here/device_round41.sh"
