# Checks that the Kokkos found matches KOSMOS_BACKEND. Kosmos runs on Kokkos' default execution
# space, which Kokkos fixes when it is built (its most parallel backend: CUDA, then OpenMP, then
# Serial), so KOSMOS_BACKEND must name that space, not merely one that is enabled.
function(kosmos_check_backend)
  string(TOUPPER "${KOSMOS_BACKEND}" wanted)
  if(NOT wanted IN_LIST Kokkos_DEVICES)
    message(FATAL_ERROR "KOSMOS_BACKEND=${KOSMOS_BACKEND}, but the Kokkos at '${Kokkos_DIR}' "
                        "has only ${Kokkos_DEVICES}. Point Kokkos_ROOT at a Kokkos built with ${KOSMOS_BACKEND}.")
  endif()
  set(default_space "")
  foreach(candidate CUDA HIP SYCL OPENMPTARGET OPENMP THREADS HPX SERIAL)
    if(candidate IN_LIST Kokkos_DEVICES)
      set(default_space ${candidate})
      break()
    endif()
  endforeach()
  if(NOT default_space STREQUAL wanted)
    message(FATAL_ERROR "KOSMOS_BACKEND=${KOSMOS_BACKEND}, but the Kokkos at '${Kokkos_DIR}' "
                        "(backends ${Kokkos_DEVICES}) runs every Kosmos kernel on its default execution "
                        "space, ${default_space}. Use a Kokkos built with ${KOSMOS_BACKEND} as its most "
                        "parallel backend (leave Kokkos_ROOT unset and Kosmos builds one), or configure "
                        "with -DKOSMOS_BACKEND=${default_space}.")
  endif()
  message(STATUS "Kosmos: backend ${KOSMOS_BACKEND}, Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}) at ${Kokkos_DIR}")
endfunction()
