# Sourced by the device_round scripts on the GPU machine: unpacks the carried
# build/shipped.tar.xz, puts its libraries on the path, pins OpenMP to the 16 cores and names the
# GPU and the CPU count in the log.
scripts/device.sh unship > /dev/null
export LD_LIBRARY_PATH=$PWD/build/cuda/shipped-lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=16
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc
