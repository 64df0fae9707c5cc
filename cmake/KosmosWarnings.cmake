# Warnings for Kosmos' own targets; Kokkos' headers come in as system headers.
function(kosmos_set_warnings target)
  if(KOSMOS_BACKEND STREQUAL "CUDA")
    return()  # nvcc's front end warns on Kokkos internals we cannot fix
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(KOSMOS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
