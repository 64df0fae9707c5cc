# This session's GPU round: build the CUDA tests/benchmarks against the carried prebuilt Kokkos,
# run every Cuda typed test, then the new workflow benchmarks (CUDA and the 16-core OpenMP baseline).
set -u
export KOSMOS_CACHE=$HOME/.cache/kosmos
export KOSMOS_BUILD_TARGETS="kosmos_cli kosmos_core_tests kosmos_kepler_tests kosmos_series_tests kosmos_nbody_tests kosmos_dust_tests kosmos_series_benchmarks kosmos_nbody_benchmarks"
cd "$(dirname "$0")/.."
# The prebuilt Kokkos names the CUDA libraries where this repository's build machine has them.
for lib in libcublas.so libcusparse.so libcudart.so stubs/libcuda.so; do
  [ -e /usr/local/cuda/lib/$lib ] && continue
  found=$(find /usr/local/cuda/ -path "*$lib" \( -type f -o -type l \) 2>/dev/null | grep -v "^/usr/local/cuda/lib/" | head -n1)
  [ -n "$found" ] && mkdir -p "$(dirname /usr/local/cuda/lib/$lib)" && ln -sf "$found" /usr/local/cuda/lib/$lib && echo "linked $lib -> $found"
done
t0=$(date +%s)
scripts/device.sh build || {
  echo "== full target build failed; building targets one by one"
  for t in $KOSMOS_BUILD_TARGETS; do cmake --build build/device-cuda -j 16 --target $t > "$OUT/build-$t.log" 2>&1 || echo "FAILED target $t"; done
}
echo "== build done after $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
cd build/device-cuda
for exe in $(find unit_tests -name 'kosmos_*_tests' -type f -perm -u+x | sort); do
  name=$(basename $exe)
  OMP_PROC_BIND=false timeout 600 ./$exe --gtest_filter='*Cuda*' --gtest_brief=1 > "$OUT/tests-$name.log" 2>&1
  echo "$name (Cuda): rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/tests-$name.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]' "$OUT/tests-$name.log" | head -20
done
echo "== tests done after $(( $(date +%s) - t0 )) s"
cd ../..
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=$(nproc)
bench() { # exe filter name
  timeout "${4:-300}" stdbuf -oL build/device-cuda/perf_tests/$1 --benchmark_filter="$2" --benchmark_counters_tabular=true \
    --benchmark_out="$OUT/bench_$3.json" --benchmark_out_format=json 2>&1 | tee "$OUT/bench_$3.txt"
  echo "== bench $3 rc=${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
}
bench series/kosmos_series_benchmarks 'BM_Track/.*/Cuda' track_cuda 420
bench series/kosmos_series_benchmarks 'BM_Track/(cyclic5|cyclic6|katsura6|katsura8|katsura10|random10x2)/N1/OpenMP|BM_Track/(cyclic5|katsura6|katsura8)/N2/OpenMP' track_openmp 300
bench nbody/kosmos_nbody_benchmarks 'BM_nbody_StabilityPosterior_WHFast/Cuda/draws:100000/orbits:10000' stab_cuda 300
bench nbody/kosmos_nbody_benchmarks 'BM_nbody_StabilityPosterior_(WHFast|IAS15_MEGNO)/(Cuda|OpenMP)/draws:1024/orbits:100' stab_small 300
