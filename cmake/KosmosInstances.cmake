# Explicit instantiation of the largest kernel templates: each is declared `extern template` in
# its header for every enabled Kokkos execution space and compiled once, in the library, from a
# configured .cpp.in, instead of in every file that calls it (with nvcc that was 20-40 minutes of
# ptxas per test file).
#
#   kosmos_add_instances(TEMPLATE NAME [PRECISIONS p...])
#
# configures TEMPLATE once per space Kosmos may be built with (and per precision, when given) to
# NAME_<space>[_n<p>].cpp in the calling folder's build folder and adds it to the library. The
# template sees @KOSMOS_SPACE@ (Serial, OpenMP, Cuda), @KOSMOS_SPACE_MACRO@ (its KOKKOS_ENABLE_
# suffix) and @KOSMOS_PRECISION@; a space that the Kokkos build lacks compiles to an empty unit.
function(kosmos_add_instances template name)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "PRECISIONS")
  if(NOT arg_PRECISIONS)
    set(arg_PRECISIONS "none")
  endif()
  foreach(KOSMOS_SPACE Serial OpenMP Cuda)
    string(TOUPPER ${KOSMOS_SPACE} KOSMOS_SPACE_MACRO)
    string(TOLOWER ${KOSMOS_SPACE} space_file)
    foreach(KOSMOS_PRECISION IN LISTS arg_PRECISIONS)
      set(file ${CMAKE_CURRENT_BINARY_DIR}/${name}_${space_file})
      if(NOT KOSMOS_PRECISION STREQUAL "none")
        string(APPEND file "_n${KOSMOS_PRECISION}")
      endif()
      configure_file(${template} ${file}.cpp @ONLY)
      target_sources(kosmos PRIVATE ${file}.cpp)
    endforeach()
  endforeach()
endfunction()
