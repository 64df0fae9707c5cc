#!/usr/bin/env bash
# Round 26 on the GPU machine (issue 25): the DL07 job of BM_DustDl07EndToEnd through the CUDA tool
# (`kosmos dust --dust-model dl07 ... --bins auto`, temperatures, SEDs and four bands to HDF5) at
# CELLS (default 65536) cells, RUNS times each, process wall; grain P(T)/s = cells x 130 / wall.
#   PART=new      unpacks build/shipped.tar.xz (scripts/device.sh ship kosmos_cli kosmos_dust_tests)
#                 and runs the job with it
#   PART=base     the same with main's tool before this round, carried as build/base-cli.xz (an xz
#                 of the shipped kosmos; run after PART=new on the same machine: it uses the
#                 libraries that unpacked)
#   PART=tests    the CUDA dust tests of the shipped build
#   PART=sed      each tool present (new, and base once unpacked) writes the SEDs of SED_CELLS (256)
#                 cells at --bins 256 in float and double to $OUT, to compare on the VM
#   PART=ncu      Nsight Compute on one P(T)-and-emission launch of the new tool (1024 cells,
#                 --bins 256): launch, occupancy, throughput, warp-state and scheduler sections
#   PART=timer    the new tool's job at TIMER_CELLS (16384) cells under build/kernel_timer.so
#                 (perf_tests/tools/kernel_timer.c, carried): device seconds per kernel name
#   PART=openmp   the development VM's OpenMP tool (carry build/openmp/src/cli/kosmos) on all 16
#                 cores, OPENMP_CELLS (1024) cells
# PART may list several, run in order, e.g. PART="new tests sed". BINS (default auto) is the job's
# --bins.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=$(mktemp -d)
new=build/cuda/src/cli/kosmos
base=build/base/kosmos
openmp=build/openmp/src/cli/kosmos
dl07=(dust --dust-model dl07 --dust-data data/dust/dustem --stochastic-below 0.05)

job() {  # TOOL LABEL CELLS [ENV...]
  local tool=$1 label=$2 cells=$3
  rm -f "$work/dl07.h5"
  local t0 t1
  t0=$(date +%s.%N)
  "$tool" "${dl07[@]}" --generate "$cells" --precision float --bins "${BINS:-auto}" \
    --temperatures "$work/dl07.h5" --sed "$work/dl07.h5" --bands IRAC1,IRAC4,MIPS24,PACS160 \
    --photometry "$work/dl07.h5" --distance 1e6 --timings 2>&1 |
    grep -E "stochastic heating|bins|pipeline" | cut -c1-240
  t1=$(date +%s.%N)
  awk -v c="$cells" -v a="$t0" -v b="$t1" -v p="$label" \
    'BEGIN { printf "%s: %s cells: %.2f s wall, %.3g grain P(T)/s (130 stochastic species)\n", p, c, b - a, c * 130 / (b - a) }'
}

for part in ${PART:-new}; do
  case $part in
    new)
      scripts/device.sh unship > /dev/null
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
      for cells in ${CELLS:-65536}; do
        for run in $(seq "${RUNS:-1}"); do job "$new" new "$cells"; done
      done
      ;;
    base)
      mkdir -p build/base && xz -dc build/base-cli.xz > "$base" && chmod +x "$base"
      for cells in ${CELLS:-65536}; do
        for run in $(seq "${RUNS:-1}"); do
          job "$base" base "$cells"
          [ "${ALTERNATE:-0}" = 1 ] && job "$new" new "$cells"
        done
      done
      ;;
    tests)
      timeout 400 build/cuda/unit_tests/dust/kosmos_dust_tests 2>&1 |
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|^\[==========\]"
      ;;
    sed)
      for tool in new base; do
        exe=$new; [ $tool = base ] && exe=$base
        [ -x "$exe" ] || continue
        for precision in float double; do
          "$exe" "${dl07[@]}" --generate "${SED_CELLS:-256}" --precision $precision --bins 256 \
            --sed "$out/sed-$tool-$precision.txt" > /dev/null 2>&1 || echo "$tool $precision failed"
        done
      done
      xz -T0 "$out"/sed-*.txt
      ;;
    ncu)
      ncu --clock-control none --kernel-name-base demangled --kernel-name regex:StochasticFunctor \
        --launch-skip 0 --launch-count 1 --section LaunchStats --section Occupancy \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
        --section SchedulerStats --section InstructionStats \
        "$new" "${dl07[@]}" --generate 1024 --precision float --bins 256 --sed "$work/ncu.h5" 2>&1 |
        grep -vE "^==PROF==|^\s*$" | cut -c1-200 | tail -120
      ;;
    timer)
      # per-kernel device time of the new tool's job (build/kernel_timer.so carried; kernels then
      # run one at a time)
      KOKKOS_PROFILE_LIBRARY=$PWD/build/kernel_timer.so KOSMOS_KERNEL_TIMES=$work/times.txt \
        job "$new" new-timed "${TIMER_CELLS:-16384}"
      head -25 "$work/times.txt"
      ;;
    openmp)
      OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=$(nproc) \
        job "$openmp" openmp "${OPENMP_CELLS:-1024}"
      ;;
  esac
done
rm -rf "$work"
