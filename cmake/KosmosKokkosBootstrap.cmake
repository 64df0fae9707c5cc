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

if(NOT Kokkos_ROOT AND NOT Kokkos_DIR AND NOT DEFINED ENV{Kokkos_ROOT} AND KOSMOS_FETCH_DEPENDENCIES)
  string(TOLOWER "${KOSMOS_BACKEND}" _kosmos_backend_lc)
  message(STATUS "Kosmos: building/finding Kokkos 3.4.01 (${KOSMOS_BACKEND}) with scripts/deps.sh")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env KOSMOS_CUDA_ARCH=${KOSMOS_CUDA_ARCH}
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
