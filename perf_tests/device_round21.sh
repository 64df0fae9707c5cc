#!/usr/bin/env bash
# Round 21 on the GPU machine (issue 25): the DL07 job of BM_DustDl07EndToEnd through the CUDA
# tool (`kosmos dust --dust-model dl07 ... --bins auto`, temperatures, SEDs and four bands to
# HDF5) at CELLS (default "4096 65536") cells, RUNS times each, process wall.
#   PART=new   unpacks build/shipped.tar.xz (scripts/device.sh ship kosmos_cli kosmos_dust_tests),
#              runs the job and, with TESTS=1, the CUDA dust tests
#   PART=base  the tool of main before this round, carried as build/base-cli.xz (an xz of the
#              shipped kosmos binary; run it after PART=new on the same machine: it uses the
#              libraries that unpacked)
#   PART=openmp  the development VM's OpenMP build of the tool (carry build/openmp/src/cli/kosmos)
#              on all 16 cores (OMP_PROC_BIND=spread OMP_PLACES=threads), after PART=new
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
tool=build/cuda/src/cli/kosmos
case "${PART:-new}" in
  new) scripts/device.sh unship > /dev/null ;;
  base)
    mkdir -p build/base && xz -dc build/base-cli.xz > build/base/kosmos && chmod +x build/base/kosmos
    tool=build/base/kosmos
    ;;
  openmp)
    tool=build/openmp/src/cli/kosmos
    export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=$(nproc)
    ;;
esac
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
out=$(mktemp -d)
for cells in ${CELLS:-4096 65536}; do
  for run in $(seq "${RUNS:-1}"); do
    rm -f "$out/dl07.h5"
    t0=$(date +%s.%N)
    "$tool" dust --dust-model dl07 --dust-data data/dust/dustem --generate "$cells" \
      --precision float --stochastic-below 0.05 --bins auto --temperatures "$out/dl07.h5" \
      --sed "$out/dl07.h5" --bands IRAC1,IRAC4,MIPS24,PACS160 --photometry "$out/dl07.h5" \
      --distance 1e6 --timings 2>&1 | grep -E "stochastic heating|bins|pipeline" | cut -c1-240
    t1=$(date +%s.%N)
    awk -v c="$cells" -v a="$t0" -v b="$t1" -v p="${PART:-new}" \
      'BEGIN { printf "%s: %s cells: %.2f s wall, %.3g grain P(T)/s (130 stochastic species)\n", p, c, b - a, c * 130 / (b - a) }'
  done
done
if [ "${TESTS:-0}" = 1 ] && [ "${PART:-new}" = new ]; then
  timeout 400 build/cuda/unit_tests/dust/kosmos_dust_tests 2>&1 |
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]"
fi
rm -rf "$out"
