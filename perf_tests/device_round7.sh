# Round 7 on the GPU (issues 24, 25): shipped binaries (built here: the CUDA
# kosmos_dust_benchmarks and kosmos_nbody_stability_benchmarks, and the OpenMP build's
# kosmos_dust_benchmarks, packed as scripts/device.sh ship packs them into build/shipped.tar.xz).
# Part 1: DL07 end to end with the second-order P(T) bins (GPU, 16 cores), the posterior
# stability job at the scale; part 2: DL07 at 262144 cells.
set -u
part=${1:-1}
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; lscpu | grep "Model name"
run() { local t=$1; shift; echo "=== $*"; timeout $t "$@" --benchmark_counters_tabular=true 2>&1 | grep -v "^\*\*\*\|^Run on\|^CPU Caches\|L[123] \|^Load Average\|^----\|^kosmos_\|^dust model\|temperature range\|^  status\|  time (s)"; echo "rc=${PIPESTATUS[0]}"; }
D=build/cuda/perf_tests/dust/kosmos_dust_benchmarks
S=build/cuda/perf_tests/nbody/kosmos_nbody_stability_benchmarks
if [ "$part" = 1 ]; then
  run 150 $D --benchmark_filter='BM_DustDl07EndToEnd/Cuda/cli_to_h5/cells:(4096|65536)/'
  run 200 $S --benchmark_filter='BM_nbody_StabilityPosterior_WHFast_MEGNO/Cuda/draws:100000/'
  run 40 $S --benchmark_filter='BM_nbody_StabilityPosterior_WHFast/Cuda/draws:100000/'
  run 60 $S --benchmark_filter='BM_nbody_StabilityPosterior_WHFast(_MEGNO)?/(Cuda|OpenMP)/draws:1024/'
  run 100 build/openmp/perf_tests/dust/kosmos_dust_benchmarks --benchmark_filter='BM_DustDl07EndToEnd/OpenMP/cli_to_h5/cells:1024/'
else
  run 500 $D --benchmark_filter='BM_DustDl07EndToEnd/Cuda/cli_to_h5/cells:262144/'
fi
