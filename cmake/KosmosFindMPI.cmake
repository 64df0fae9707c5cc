# MPI for the distributed module (src/kosmos/distributed/): only the C API is used, so the C++
# bindings (OpenMPI's libmpi_cxx) stay out. Sets KOSMOS_MPI_FOUND; the target is MPI::MPI_CXX.
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Kosmos uses MPI's C API only")
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND)
  set(KOSMOS_MPI_FOUND ON)
else()
  set(KOSMOS_MPI_FOUND OFF)
endif()

# Sources that include mpi.h (kosmos/distributed/distributed.hpp) in the tree: MPI's include
# directories and definitions for those files of `target` only.
function(kosmos_compile_with_mpi target)
  set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY INCLUDE_DIRECTORIES
               "$<TARGET_PROPERTY:MPI::MPI_CXX,INTERFACE_INCLUDE_DIRECTORIES>")
  set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_DEFINITIONS
               "$<TARGET_PROPERTY:MPI::MPI_CXX,INTERFACE_COMPILE_DEFINITIONS>")
endfunction()
