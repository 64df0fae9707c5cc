# Defines the CUDA::cudart and CUDA::cuda_driver targets from this CMake's FindCUDAToolkit before
# Kokkos' package file is read. Kokkos 3.4 writes copies of these targets into its package file
# that newer CMake versions (whose CUDA::cudart carries a list of include directories and
# CUDA::cudart_static_deps) cannot read back; Kokkos only defines them when they are missing.
if(NOT TARGET CUDA::cudart)
  find_package(CUDAToolkit REQUIRED)
endif()
