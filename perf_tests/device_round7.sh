# Round 7 on the GPU (issues 24, 25): shipped CUDA binaries (scripts/device.sh ship
# kosmos_dust_benchmarks kosmos_nbody_stability_benchmarks [kosmos_dust_tests], carry
# build/shipped.tar.xz), then DL07 end to end with the second-order P(T) bins and the posterior
# stability job at the scale.
set -u
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; lscpu | grep "Model name"
B=build/cuda/perf_tests
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----"; echo "rc=${PIPESTATUS[0]}"; }
S=$B/nbody/kosmos_nbody_stability_benchmarks
run 200 $B/dust/kosmos_dust_benchmarks --benchmark_filter='BM_DustDl07EndToEnd/Cuda/cli_to_h5/cells:(4096|65536)/'
run 200 $S --benchmark_filter='BM_nbody_StabilityPosterior_WHFast_MEGNO/Cuda/draws:100000/'
run 60 $S --benchmark_filter='BM_nbody_StabilityPosterior_WHFast/Cuda/draws:100000/'
run 120 $S --benchmark_filter='BM_nbody_StabilityPosterior_WHFast(_MEGNO)?/(Cuda|OpenMP)/draws:1024/'
if [ -x build/cuda/unit_tests/dust/kosmos_dust_tests ]; then
  echo "=== dust unit tests, Cuda instances"
  timeout 300 build/cuda/unit_tests/dust/kosmos_dust_tests --gtest_filter='*Cuda*' 2>&1 | grep -E "Carlo - 1|refined|^\[  (PASSED|FAILED|SKIPPED) |tests? ran"
fi
run 300 $B/dust/kosmos_dust_benchmarks --benchmark_filter='BM_DustDl07EndToEnd/Cuda/cli_to_h5/cells:262144/'
