#!/usr/bin/env bash
# Swarm-NG Table 1 (Dindar et al. 2013, Section 5.2.2): fractional energy error |E(t) - E(0)| / |E(0)|
# of one Section 5.1 system (n = 3: star + two Jupiter-mass planets, alpha = 0.4) after 0.45, 0.9,
# 1.3 and 1.8 million time units, with the paper's step parameters. Each segment continues from the
# previous one's text output (17 digits: exact) and every error is measured from the initial energy.
#   perf_tests/nbody/swarmng_table1.sh KOSMOS_BINARY [WORK_DIR] [INTEGRATOR...]
# INTEGRATOR: hermite_adaptive (tau 0.017), mvs (dt 0.01), hermite (dt 1e-3), rkck_adaptive
# (tolerance 7.07e-17 = sqrt of the paper's 5e-33, see the nbody README); default: the first two.
# Prints one line per integrator: name, the errors, wall seconds. One thread per run.
# TABLE1_TIMES="450000" runs only the first columns (rkck_adaptive needs ~15 min per column).
set -euo pipefail
kosmos=$(realpath "${1:?usage: swarmng_table1.sh KOSMOS_BINARY [WORK_DIR] [INTEGRATOR...]}")
work=${2:-$(mktemp -d)}
shift $(($# >= 2 ? 2 : 1))
integrators=("$@")
[ ${#integrators[@]} -gt 0 ] || integrators=(hermite_adaptive mvs)
mkdir -p "$work"
cd "$work"
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false

for integrator in "${integrators[@]}"; do
  case $integrator in
    hermite_adaptive) args=(--tau 0.017) ;;
    mvs) args=(--dt 0.01) ;;
    hermite) args=(--dt 0.001) ;;
    rkck_adaptive) args=(--tolerance 7.07e-17 --dt 0.001) ;;
    *) echo "unknown integrator $integrator" >&2; exit 2 ;;
  esac
  input=(--generate 1 --bodies 3)
  line="$integrator"
  t0=$(date +%s%N)
  for t in ${TABLE1_TIMES:-450000 900000 1300000 1800000}; do
    "$kosmos" nbody "${input[@]}" --integrator "$integrator" "${args[@]}" --destination "$t" \
      --steps-per-launch 1000000 --energy-limit 0 --output "$integrator.$t.txt" \
      --report "$integrator.$t.report" >"$integrator.$t.log" 2>&1
    # Report columns: system time energy0 energy rel_energy_error state reason.
    energy=$(awk '!/^#/ {print $4}' "$integrator.$t.report")
    [ -n "${e0:-}" ] || e0=$(awk '!/^#/ {print $3}' "$integrator.$t.report")
    line="$line $(awk -v e="$energy" -v e0="$e0" 'BEGIN {d = (e - e0) / e0; printf "%.2e", d < 0 ? -d : d}')"
    input=(--input "$integrator.$t.txt")
  done
  unset e0
  echo "$line wall $(( ($(date +%s%N) - t0) / 1000000000 )) s"
done
