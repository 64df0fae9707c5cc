# Included before project(): resolves which Kokkos to use and, for CUDA, its nvcc_wrapper.
string(TOUPPER "${KOSMOS_BACKEND}" _kosmos_backend)
if(_kosmos_backend STREQUAL "OPENMP")
  set(KOSMOS_BACKEND "OpenMP" CACHE STRING "" FORCE)
elseif(_kosmos_backend STREQUAL "CUDA")
  set(KOSMOS_BACKEND "CUDA" CACHE STRING "" FORCE)
elseif(_kosmos_backend STREQUAL "SERIAL")
  set(KOSMOS_BACKEND "Serial" CACHE STRING "" FORCE)
else()
  message(FATAL_ERROR "KOSMOS_BACKEND='${KOSMOS_BACKEND}' is not one of OpenMP, CUDA, Serial")
endif()

# Which Kokkos scripts/deps.sh builds: Debian's 3.4.01 by default, or the given source tarballs or
# directories (e.g. kokkos-4.6.01.tar.gz and kokkos-kernels-4.6.02.tar.gz), in CMAKE_CXX_STANDARD.
set(KOSMOS_KOKKOS_SOURCE "$ENV{KOSMOS_KOKKOS_SOURCE}" CACHE STRING
    "Kokkos source tarball or directory for scripts/deps.sh (empty: Debian's Kokkos 3.4.01)")
set(KOSMOS_KOKKOS_KERNELS_SOURCE "$ENV{KOSMOS_KOKKOS_KERNELS_SOURCE}" CACHE STRING
    "Kokkos Kernels source tarball or directory matching KOSMOS_KOKKOS_SOURCE")
if(DEFINED ENV{KOSMOS_KOKKOS_DEPRECATED_CODE})
  set(_kosmos_deprecated_default "$ENV{KOSMOS_KOKKOS_DEPRECATED_CODE}")
else()
  set(_kosmos_deprecated_default ON)
endif()
option(KOSMOS_KOKKOS_DEPRECATED_CODE
       "Build Kokkos 4.x with its deprecated 4.x API (OFF: the Kokkos 5 API, Kokkos_ENABLE_DEPRECATED_CODE_4=OFF)"
       ${_kosmos_deprecated_default})

if(NOT Kokkos_ROOT AND NOT Kokkos_DIR AND NOT DEFINED ENV{Kokkos_ROOT} AND KOSMOS_FETCH_DEPENDENCIES)
  string(TOLOWER "${KOSMOS_BACKEND}" _kosmos_backend_lc)
  set(_kosmos_cxx_standard 17)
  if(CMAKE_CXX_STANDARD)
    set(_kosmos_cxx_standard ${CMAKE_CXX_STANDARD})
  endif()
  if(KOSMOS_KOKKOS_SOURCE)
    set(_kosmos_which "${KOSMOS_KOKKOS_SOURCE}")
  else()
    set(_kosmos_which "Debian's 3.4.01")
  endif()
  message(STATUS "Kosmos: building/finding Kokkos from ${_kosmos_which} (${KOSMOS_BACKEND}, C++${_kosmos_cxx_standard}) with scripts/deps.sh")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env KOSMOS_CUDA_ARCH=${KOSMOS_CUDA_ARCH}
            KOSMOS_CXX_STANDARD=${_kosmos_cxx_standard}
            "KOSMOS_KOKKOS_SOURCE=${KOSMOS_KOKKOS_SOURCE}"
            "KOSMOS_KOKKOS_KERNELS_SOURCE=${KOSMOS_KOKKOS_KERNELS_SOURCE}"
            KOSMOS_KOKKOS_DEPRECATED_CODE=${KOSMOS_KOKKOS_DEPRECATED_CODE}
            bash ${CMAKE_CURRENT_LIST_DIR}/../scripts/deps.sh kokkos ${_kosmos_backend_lc}
    OUTPUT_VARIABLE _kosmos_kokkos_prefix
    RESULT_VARIABLE _kosmos_deps_result
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _kosmos_deps_result EQUAL 0)
    message(FATAL_ERROR "scripts/deps.sh could not provide Kokkos for ${KOSMOS_BACKEND}; see its messages above")
  endif()
  set(Kokkos_ROOT "${_kosmos_kokkos_prefix}" CACHE PATH "Kokkos install prefix" FORCE)
endif()

if(KOSMOS_BACKEND STREQUAL "CUDA" AND NOT CMAKE_CXX_COMPILER)
  set(_kosmos_root "${Kokkos_ROOT}")
  if(NOT _kosmos_root)
    set(_kosmos_root "$ENV{Kokkos_ROOT}")
  endif()
  if(EXISTS "${_kosmos_root}/bin/nvcc_wrapper")
    set(CMAKE_CXX_COMPILER "${_kosmos_root}/bin/nvcc_wrapper" CACHE FILEPATH "C++ compiler (Kokkos' nvcc_wrapper)")
  else()
    message(FATAL_ERROR "CUDA build: set CMAKE_CXX_COMPILER to Kokkos' nvcc_wrapper (not found under Kokkos_ROOT='${_kosmos_root}')")
  endif()
endif()
