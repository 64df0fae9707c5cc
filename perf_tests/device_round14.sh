#!/usr/bin/env bash
# Round 14 on the GPU machine (issue 25): the DL07 job of BM_DustDl07EndToEnd through the CUDA
# tool (`kosmos dust --dust-model dl07 ... --bins auto`, temperatures, SEDs and four bands to
# HDF5), CELLS (default "4096 65536") cells, with the tool's --timings. TOOL=new (default) unpacks
# build/shipped.tar.xz (scripts/device.sh ship kosmos_cli kosmos_dust_tests) and also runs the
# CUDA dust tests; TOOL=base unpacks BASE (an earlier ship kept aside) instead, for the baseline
# in the call before on the same machine.
set -uo pipefail
if [ "${TOOL:-new}" = base ]; then
  tar -xJf "${BASE:-build/shipped-base.tar.xz}"
else
  scripts/device.sh unship > /dev/null
fi
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
out=$(mktemp -d)
for cells in ${CELLS:-4096 65536}; do
  rm -f "$out/dl07.h5"
  t0=$(date +%s.%N)
  build/cuda/src/cli/kosmos dust --dust-model dl07 --dust-data data/dust/dustem --generate "$cells" \
    --precision float --stochastic-below 0.05 --bins auto --temperatures "$out/dl07.h5" \
    --sed "$out/dl07.h5" --bands IRAC1,IRAC4,MIPS24,PACS160 --photometry "$out/dl07.h5" \
    --distance 1e6 --timings 2>&1 | grep -E "stochastic heating|timings \(s\)"
  t1=$(date +%s.%N)
  awk -v c="$cells" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "%s cells: %.2f s wall, %.3g grain P(T)/s (130 stochastic species)\n", c, b - a, c * 130 / (b - a) }'
done
if [ "${TOOL:-new}" != base ] && [ -x build/cuda/unit_tests/dust/kosmos_dust_tests ]; then
  timeout 400 build/cuda/unit_tests/dust/kosmos_dust_tests 2>&1 |
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]"
fi
rm -rf "$out"
