#!/usr/bin/env bash
# Builds the kosmos tool on the default OpenMP backend and runs its jobs on the bundled data.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KOSMOS_BUILD_DIR:-$root/build/quickstart}
out=${KOSMOS_OUTPUT_DIR:-$root/build/quickstart-output}

"$root/scripts/deps.sh" system
cmake -S "$root" -B "$build" -DKOSMOS_BACKEND=OpenMP -DKOSMOS_ENABLE_TESTS=OFF \
  -DKOSMOS_ENABLE_BENCHMARKS=OFF -DKOSMOS_ENABLE_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "${KOSMOS_JOBS:-$(nproc)}" --target kosmos_cli
kosmos="$build/src/cli/kosmos"
mkdir -p "$out"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
cd "$root"
echo "== kosmos info"
"$kosmos" info

echo "== kosmos rv: two-planet search of HD 164922 (bundled RadVel data), DE-MCMC posterior"
"$kosmos" rv data/rv/hd164922_radvel.txt --planets 2 --trend 0 --output "$out/hd164922_posterior.txt"

echo "== kosmos series: p1 (16 variables, 1820 products) at degree 31 in quad double"
rm -f "$out/p1.poly"
"$kosmos" series --generate p1 --degree 31 --seed 1 --output "$out/p1.poly"
"$kosmos" series "$out/p1.poly" --precision 4 --timing --output "$out/p1_value_gradient.txt"

echo "== kosmos nbody: 1024 Section 5.1 systems (star + 2 Jupiters), Hermite vs RKCK test mode"
"$kosmos" nbody --generate 1024 --bodies 3 --seed 1 --integrator hermite --dt 0.001 \
  --destination 31.41592653589793 --test --compare-integrator rkck_adaptive \
  --pos-threshold 1e-8 --vel-threshold 1e-8 --report "$out/nbody_report.txt" \
  --output "$out/nbody_final.txt"

echo "== kosmos dust: 2000 cells x 81 graphite sizes x 968 wavelengths in scaled MMP83 fields"
"$kosmos" dust --cross-sections data/dust/draine_graphite_81.dat --generate 2000 --precision float \
  --temperatures "$out/dust_temperatures.txt" --sed "$out/dust_sed.txt"

echo "== outputs in $out"
ls -l "$out"
