#!/usr/bin/env bash
# Weak scaling of the MPI mode from 1 to 2 ranks, one GPU per rank: the same work per rank (an
# n-body ensemble of SYSTEMS systems per rank; an RV survey of STARS stars per rank), so the ideal
# time stays constant and the efficiency is T(1 rank) / T(2 ranks); dust: CELLS generated cells
# per rank). The time is the tool's own (rank 0 from the start of the integration, survey or cell
# pipeline to the gathered result, input reading and MPI/Kokkos start-up excluded; the launcher's
# wall time is printed beside it).
#
#   perf_tests/mpi_scaling.sh [BUILD_DIR]     # default build/device-cuda (scripts/device.sh build)
#
# Needs a build with KOSMOS_ENABLE_MPI=ON (on the device: the OpenMPI .debs that
# `scripts/device.sh prepare` carries in .deps/mpi-debs, unpacked by `scripts/device.sh build`) and
# mpirun on PATH. Environment: SYSTEMS (default 131072 3-body systems, Hermite, dt 1e-3, to
# DESTINATION, default 628.3185307179586: a hundred orbits of the inner planet, about 4.5 s a rank
# on an H200, so that the integration outweighs gathering every system's final state to rank 0 and
# the run-to-run spread; at ten orbits both are a sixth of the run), STARS (default 16, each the
# full default `kosmos rv` fit of one planet), CELLS (default 262144 dust cells, Draine's 81-size
# graphite and silicate tables on the default 1208 wavelengths in float; their temperatures go to
# one HDF5 file written by rank 0, the SEDs are computed but neither sent nor written), RANKS
# (default "1 2"), JOBS (default "nbody rv dust": which of them to run), MPIRUN_FLAGS (default:
# --allow-run-as-root --bind-to none, for a root shell on the device). The tool gives each rank its
# share of the node's CPUs for its OpenMP threads; a run with fewer ranks than the node has GPUs is
# pinned (taskset) to the CPUs those ranks would have in a full node, so that a rank has the same
# GPU and CPUs at every rank count (CPUS_PER_RANK, default the node's CPUs over its GPUs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/device-cuda}
kosmos=$build/src/cli/kosmos
[ -x "$kosmos" ] || { echo "no kosmos tool at $kosmos (build it first)"; exit 1; }
"$kosmos" info | grep -q 'features .*mpi' || { echo "$kosmos was built without MPI (KOSMOS_ENABLE_MPI)"; exit 1; }
systems=${SYSTEMS:-131072}
destination=${DESTINATION:-628.3185307179586}
stars=${STARS:-16}
cells=${CELLS:-262144}
read -r -a rank_counts <<<"${RANKS:-1 2}"
read -r -a jobs <<<"${JOBS:-nbody rv dust}"
wanted() { [[ " ${jobs[*]} " == *" $1 "* ]]; }
read -r -a flags <<<"${MPIRUN_FLAGS:---allow-run-as-root --bind-to none}"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
cpus_per_rank=${CPUS_PER_RANK:-$(( $(nproc) / (gpus > 0 ? gpus : 1) ))}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The survey's stars: copies of the bundled HD 164922 series (the same work per star).
mkdir -p "$work/stars"
max_ranks=${rank_counts[-1]}
for ((s = 0; s < stars * max_ranks; ++s)); do
  cp "$root/data/rv/hd164922_radvel.txt" "$work/stars/star_$(printf '%05d' "$s").txt"
done

star_files=("$work"/stars/*.txt)

# run NAME RANKS ARGS...: prints the tool's seconds (parsed by PATTERN from its output) and the wall time.
declare -A seconds
run() {
  local name=$1 ranks=$2 pattern=$3
  shift 3
  local t0 t1 out pin=()
  ((ranks * cpus_per_rank < $(nproc))) && pin=(taskset -c "0-$((ranks * cpus_per_rank - 1))")
  t0=$(date +%s.%N)
  out=$("${pin[@]}" mpirun -np "$ranks" "${flags[@]}" "$kosmos" "$@" 2>&1) || { echo "$out" | tail -n 20; exit 1; }
  t1=$(date +%s.%N)
  seconds[$name.$ranks]=$(echo "$out" | sed -nE "$pattern" | tail -n1)
  printf '%-6s %d rank(s), CPUs %s: %s s (tool), %.2f s (mpirun wall)\n' "$name" "$ranks" \
    "${pin[2]:-all}" "${seconds[$name.$ranks]}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
}

for ranks in "${rank_counts[@]}"; do
  if wanted nbody; then
    run nbody "$ranks" 's/^  steps [0-9]+, launches [0-9]+, ([0-9.e+-]+) s$/\1/p' \
      nbody --generate $((systems * ranks)) --bodies 3 --integrator hermite --dt 1e-3 --destination "$destination" \
      --allow-failures
  fi
  star_list="$work/stars_$ranks.txt"
  printf '%s\n' "${star_files[@]:0:stars * ranks}" >"$star_list"
  if wanted rv; then
    run rv "$ranks" 's/^done in ([0-9.e+-]+) s .*/\1/p' \
      rv --batch "$star_list" --planets 1 --quiet --summary "$work/summary_$ranks.txt"
  fi
  if wanted dust; then
    run dust "$ranks" 's/.*\(pipelined\) ([0-9.e+-]+),.*/\1/p' \
      dust --cross-sections "$root/data/dust/draine_graphite_81.dat,$root/data/dust/draine_suvsilicate_81.dat" \
      --generate $((cells * ranks)) --precision float --temperatures "$work/dust_$ranks.h5"
  fi
done
for name in "${jobs[@]}"; do
  base=${seconds[$name.${rank_counts[0]}]}
  for ranks in "${rank_counts[@]:1}"; do
    printf '%-6s weak-scaling efficiency %d -> %d ranks: %.1f %%\n' "$name" "${rank_counts[0]}" "$ranks" \
      "$(awk -v a="$base" -v b="${seconds[$name.$ranks]}" 'BEGIN { print 100 * a / b }')"
  done
done
