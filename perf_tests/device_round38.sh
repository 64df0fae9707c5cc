#!/usr/bin/env bash
# Round 38 on the GPU machine (issue 25): is the DL07 job (float) deterministic, and where not,
# which stage differs? Carry build/shipped.tar.xz (`scripts/device.sh ship kosmos_cli
# kosmos_dust_tests`). PARTS (default "repeat sanitize ncu"; also "plain") picks what runs.
# repeat: the same 256 cells REPEATS times (default 4) at --bins auto and at
# --bins 128 (no refinement), with one chunk and with chunks of 16 cells, and prints the checksums
# of the temperatures, the P(T) (--pt-output) and the SEDs; the first run's SEDs and any that differ
# from them go to $OUT for the VM to compare. plain: the SED alone, REPEATS times, default chunks
# and 256. sanitize: compute-sanitizer's racecheck (SANITIZER_CHECKS; each stopped after
# SANITIZER_SECONDS, default 90) on 2 cells (team scratch races). ncu: Nsight Compute's details of
# the two P(T) kernels.
set -uo pipefail
# A caller that has unpacked its own tools says so and names the one to check (device_round40.sh).
[ -n "${VARIANTS_UNPACKED:-}" ] || tar -xJf build/shipped.tar.xz
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-$PWD/out}
mkdir -p "$out"
work=$(mktemp -d)
tool=${TOOL:-build/cuda/src/cli/kosmos}
dl07=(dust --dust-model dl07 --dust-data data/dust/dustem --stochastic-below 0.05 --precision float)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
parts=${PARTS:-repeat sanitize ncu}
# md5 of a file, short.
sum12() { md5sum < "$1" | cut -c1-12; }
# RUN NAME SUM: the SED of run 1 comes back, and those of later runs that differ from it.
keep_if_new() {
  [ "$1" = 1 ] && first_sum=$3
  [ "$1" != 1 ] && [ "$3" = "$first_sum" ] && rm "$out/sed-$2.txt"
}
if [[ " $parts " == *" repeat "* ]]; then
  for bins in auto 128; do
    for chunk in 256 16; do
      for run in $(seq "${REPEATS:-4}"); do
        name=$bins-c$chunk-r$run
        "$tool" "${dl07[@]}" --generate 256 --bins "$bins" --chunk-cells "$chunk" \
          --temperatures "$work/t.txt" --pt-output "$work/pt.h5" --sed "$out/sed-$name.txt" \
          > /dev/null 2>&1 || echo "$name: run failed"
        sed_sum=$(sum12 "$out/sed-$name.txt")
        printf '%s: temperatures %s P(T) %s SED %s\n' "$name" "$(sum12 "$work/t.txt")" \
          "$(sum12 "$work/pt.h5")" "$sed_sum"
        keep_if_new "$run" "$name" "$sed_sum"
      done
    done
  done
fi
# The SED alone (no P(T) output), as device_round29.sh writes it: default chunks and chunks of 256.
if [[ " $parts " == *" plain "* ]]; then
  for chunk in auto 256; do
    for run in $(seq "${REPEATS:-4}"); do
      name=plain-c$chunk-r$run
      "$tool" "${dl07[@]}" --generate 256 --bins auto --chunk-cells "$chunk" \
        --sed "$out/sed-$name.txt" > /dev/null 2>&1 || echo "$name: run failed"
      sed_sum=$(sum12 "$out/sed-$name.txt")
      echo "$name: SED $sed_sum"
      keep_if_new "$run" "$name" "$sed_sum"
    done
  done
fi
ls "$out"/sed-*.txt > /dev/null 2>&1 && xz -T0 "$out"/sed-*.txt
# Racecheck's hazards counted by the kernel they are in (its first kosmos name); the report to $OUT.
if [[ " $parts " == *" sanitize "* ]]; then
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null)
  for check in ${SANITIZER_CHECKS:-racecheck}; do
    echo "=== $check"
    timeout "${SANITIZER_SECONDS:-90}" "$sanitizer" --tool "$check" --print-limit 1000 "$tool" "${dl07[@]}" --generate 2 \
      --bins auto --sed "$work/s.txt" > "$out/$check.txt" 2>&1
    awk '/^========= (Error|Warning)/ && match($0, /kosmos::[A-Za-z_:]+/) {
      print $2, substr($0, RSTART, RLENGTH) }' "$out/$check.txt" | sort | uniq -c
    grep "SUMMARY" "$out/$check.txt"
  done
fi
# Nsight Compute on pipeline launches of the two P(T) kernels (16384 cells in chunks of 1024):
# name:regex:skip:count:D. The P(T) launches are one per bin count, four a chunk of the pipeline;
# the bin refinement's launches of a few cells come first and match too (round 38 profiled those
# with a skip of 4), so 40 are skipped: 16 chunks x 4 launches follow them. Details pages to $OUT.
[[ " $parts " == *" ncu "* ]] || { rm -rf "$work"; exit 0; }
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -n 1)
# NCU_KERNELS overrides the list.
for kernel in ${NCU_KERNELS:-heating:StochasticFunctor.*WriteEmissionBins:40:4:0 \
  emission:EmissionFunctor:2:1:0 emission:EmissionFunctor:2:1:0.04}; do
  IFS=: read -r name regex skip count spacing <<< "$kernel"
  echo "=== ncu $name D=$spacing"
  timeout 80 "$ncu" --clock-control none --set full --import-source no \
    --kernel-name-base demangled --kernel-name "regex:$regex" \
    --launch-skip "$skip" --launch-count "$count" --page details \
    "$tool" "${dl07[@]}" --generate 16384 --chunk-cells 1024 --bins auto \
    --pt-emission-spacing "$spacing" --sed "$work/s.h5" > "$out/ncu-$name-$spacing.txt" 2>&1
  grep -E "^  [a-zA-Z].*\(|Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput|Theoretical Occupancy" \
    "$out/ncu-$name-$spacing.txt" | cut -c1-160 | head -n 40
done
rm -rf "$work"
