# This session's GPU round (little device time: only what is built here runs): the CUDA Python
# package and its tests, the call-overhead benchmark, and the workflow benchmarks named in
# KOSMOS_ROUND_BENCHES ("exe,filter,name,seconds" items), CUDA and the 16-core OpenMP baseline.
set -u
export KOSMOS_CACHE=$HOME/.cache/kosmos
cd "$(dirname "$0")/.."
python=$(command -v python3)
export KOSMOS_CMAKE_ARGS="-DPython3_EXECUTABLE=$python"
t0=$(date +%s)
scripts/device.sh build || { echo "== build failed after $(( $(date +%s) - t0 )) s"; exit 1; }
echo "== build done after $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
build=build/device-cuda
if [ -f $build/python/kosmos/_kosmos*.so ] || ls $build/python/kosmos/_kosmos*.so >/dev/null 2>&1; then
  PYTHONPATH=$build/python KOSMOS_DATA=$PWD/data KOSMOS_CLI=$PWD/$build/src/cli/kosmos MPLBACKEND=Agg \
    timeout 600 "$python" -m pytest -q -p no:cacheprovider python/tests 2>&1 | tee "$OUT/pytest-cuda.txt" | tail -n 25
  echo "== pytest rc=${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
  PYTHONPATH=$build/python timeout 300 "$python" python/bench_overhead.py \
    --cxx $build/perf_tests/kepler/kosmos_kepler_benchmarks 2>&1 | tee "$OUT/bench_overhead_cuda.txt"
  echo "== overhead after $(( $(date +%s) - t0 )) s"
fi
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=$(nproc)
for item in ${KOSMOS_ROUND_BENCHES:-}; do
  IFS=, read -r exe filter name seconds <<<"$item"
  timeout "${seconds:-300}" stdbuf -oL $build/perf_tests/$exe --benchmark_filter="$filter" --benchmark_counters_tabular=true \
    --benchmark_out="$OUT/bench_$name.json" --benchmark_out_format=json 2>&1 | tee "$OUT/bench_$name.txt"
  echo "== bench $name rc=${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
done
