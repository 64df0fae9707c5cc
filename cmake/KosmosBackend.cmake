# Checks that the Kokkos found matches KOSMOS_BACKEND.
function(kosmos_check_backend)
  string(TOUPPER "${KOSMOS_BACKEND}" wanted)
  if(NOT wanted IN_LIST Kokkos_DEVICES)
    message(FATAL_ERROR "KOSMOS_BACKEND=${KOSMOS_BACKEND}, but the Kokkos at '${Kokkos_DIR}' "
                        "has only ${Kokkos_DEVICES}. Point Kokkos_ROOT at a Kokkos built with ${KOSMOS_BACKEND}.")
  endif()
  message(STATUS "Kosmos: backend ${KOSMOS_BACKEND}, Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}) at ${Kokkos_DIR}")
endfunction()
