# Round 6 on the GPU (issues 23, 25, 29): shipped CUDA binaries (scripts/device.sh ship kosmos_kepler_benchmarks
# kosmos_dust_benchmarks kosmos_series_benchmarks, carry build/shipped.tar.xz), then the end-to-end jobs.
set -u
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; lscpu | grep "Model name"
B=build/cuda/perf_tests
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
run 230 $B/kepler/kosmos_kepler_benchmarks --benchmark_filter='BM_SurveyEndToEnd/Cuda'
run 80 $B/dust/kosmos_dust_benchmarks --benchmark_filter='BM_DustDl07EndToEnd/Cuda/cli_to_h5/cells:65536'
run 80 $B/series/kosmos_series_benchmarks --benchmark_filter='BM_Track/cyclic7/N(1|2)/Cuda'
run 150 $B/kepler/kosmos_kepler_benchmarks --benchmark_filter='BM_SurveyEndToEnd/OpenMP'
