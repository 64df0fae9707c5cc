#!/usr/bin/env bash
# Round 29 on the GPU machine (issue 25): variants of the CUDA tool side by side on the DL07 job of
# device_round26.sh (DL07, 130 P(T) species, float, --bins auto, temperatures, SEDs and four bands
# to HDF5) at CELLS (default 65536) cells, alternating RUNS (default 2) times; grain P(T)/s =
# cells x 130 / process wall. Carry build/variants.tar.xz: the libraries of `scripts/device.sh
# ship` and the variants' tools as build/variants/NAME (made on the VM, one archive so that the
# tools' shared device code compresses once). VARIANTS lists NAMEs (default: all, sorted). Each
# variant also writes the SEDs of SED_CELLS (256; 0: none) cells at --bins auto, float, to $OUT for
# the VM to compare.
set -uo pipefail
# A caller that has unpacked the archive already says so (device_round32.sh).
[ -n "${VARIANTS_UNPACKED:-}" ] || tar -xJf build/variants.tar.xz
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=$(mktemp -d)
dl07=(dust --dust-model dl07 --dust-data data/dust/dustem --stochastic-below 0.05 --precision float)
variants=${VARIANTS:-$(cd build/variants && ls | sort)}
# FULL_TIMINGS=1: the tool's whole --timings line (each stage's seconds), not only the pipeline's.
pattern="status: ok [0-9]+.*imbalance [0-9]+|pipeline [0-9.]+"
[ -n "${FULL_TIMINGS:-}" ] && pattern="status: ok [0-9]+.*imbalance [0-9]+|timings \(s\): .*"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for run in $(seq "${RUNS:-2}"); do
  for v in $variants; do
    rm -f "$work/dl07.h5"
    t0=$(date +%s.%N)
    build/variants/$v "${dl07[@]}" --generate "${CELLS:-65536}" --bins auto \
      --temperatures "$work/dl07.h5" --sed "$work/dl07.h5" --bands IRAC1,IRAC4,MIPS24,PACS160 \
      --photometry "$work/dl07.h5" --distance 1e6 --timings 2>&1 | grep -oE "$pattern" | tr '\n' ' '
    t1=$(date +%s.%N)
    awk -v c="${CELLS:-65536}" -v a="$t0" -v b="$t1" -v p="$v" \
      'BEGIN { printf "\n%s: %s cells: %.2f s wall, %.3g grain P(T)/s\n", p, c, b - a, c * 130 / (b - a) }'
  done
done
if [ "${SED_CELLS:-256}" -gt 0 ]; then
  for v in $variants; do
    build/variants/$v "${dl07[@]}" --generate "${SED_CELLS:-256}" --bins auto --sed "$out/sed-$v.txt" \
      > /dev/null 2>&1 || echo "$v: SED run failed"
  done
  xz -T0 "$out"/sed-*.txt
fi
rm -rf "$work"
