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
export OMP_PROC_BIND=false
echo "== kosmos info"
"$kosmos" info
