# Warnings for Kosmos' own targets (never for the targets of a project that embeds it); Kokkos'
# headers come in as system headers.
function(kosmos_set_warnings target)
  if(KOSMOS_BACKEND STREQUAL "CUDA")
    # nvcc's front end warns on Kokkos internals we cannot fix, so no -Wall here; but a host
    # function called from device code (nvcc's warning 20011, e.g. a host-only member called in a
    # KOKKOS_FUNCTION) would fail at run time on the GPU only: an error.
    target_compile_options(${target} PRIVATE "SHELL:-Xcudafe --diag_error=20011")
    return()
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(KOSMOS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
