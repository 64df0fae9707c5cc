#!/usr/bin/env bash
# End-to-end wall time of the `kosmos` tool (process start to exit: Kokkos/CUDA initialization,
# reading, compute, transfers, writing) for the two cases of issue #9, with text files and with
# HDF5 files. Inputs are made first and are not timed.
#   perf_tests/cli_wall.sh KOSMOS_BINARY [WORK_DIR]
# Prints one line per case: the wall seconds and the command. `startup` (`kosmos info`: process
# start, Kokkos and device initialization, exit) is the fixed cost inside every other line. The
# dust text case (about 90 s on an H100 for 2.3 GB of text) runs only with KOSMOS_WALL_DUST_TEXT=1.
set -euo pipefail
kosmos=$(realpath "${1:?usage: cli_wall.sh KOSMOS_BINARY [WORK_DIR]}")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}

wall() { # label command...
  local label=$1
  shift
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$label.out" 2>&1 || { echo "$label: FAILED (exit $?)"; tail -n 5 "$label.out"; return 0; }
  t1=$(date +%s%N)
  local ms=$(( (t1 - t0) / 1000000 ))
  printf '%-22s %6d.%03d s   %s\n' "$label" $((ms / 1000)) $((ms % 1000)) "$*"
}

"$kosmos" info | sed 's/^/# /'
wall startup "$kosmos" info
# Series: p1 (Verschelde 2021), degree 152, deca double; kernel time from --timing.
"$kosmos" series --generate p1 --degree 152 --precision 10 --output p1.poly >/dev/null
"$kosmos" series --generate p1 --degree 152 --precision 10 --output p1.h5 >/dev/null
wall series_p1_text "$kosmos" series p1.poly --precision 10 --timing --output p1_out.txt
wall series_p1_hdf5 "$kosmos" series p1.h5 --precision 10 --timing --output p1_out.h5
grep -h -i "time\|ms" series_p1_text.out series_p1_hdf5.out | sed 's/^/#   /' || true

# Dust: 131072 generated cells, graphite 81 sizes, temperatures and SEDs.
table="$root/data/dust/draine_graphite_81.dat"
[ "${KOSMOS_WALL_DUST_TEXT:-0}" = 1 ] &&
  wall dust_131072_text "$kosmos" dust --cross-sections "$table" --generate 131072 --temperatures T.txt --sed sed.txt
wall dust_131072_hdf5 "$kosmos" dust --cross-sections "$table" --generate 131072 --temperatures T.h5 --sed sed.h5
ls -la "$work" | sed 's/^/# /'
