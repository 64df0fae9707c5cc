# kosmos_add_dust_command(<target>): the `kosmos dust` command's own sources compiled into
# <target>, for targets that drive the command in-process (its CLI tests, the end-to-end dust
# benchmark): the command, the option parser, --plot and the MPI rank layer, with the data folders
# it defaults to.
function(kosmos_add_dust_command target)
  set(cli ${PROJECT_SOURCE_DIR}/src/cli)
  target_sources(${target} PRIVATE ${cli}/dust.cpp ${cli}/options.cpp ${cli}/plots.cpp
                                   ${cli}/ranks.cpp)
  target_include_directories(${target} PRIVATE ${cli})
  target_compile_definitions(${target} PRIVATE ${KOSMOS_CLI_PLOT_DEFINITIONS}
                             KOSMOS_DATA_DIR="${PROJECT_SOURCE_DIR}/data"
                             KOSMOS_DUST_DATA_DIR="${PROJECT_SOURCE_DIR}/data/dust/dustem"
                             KOSMOS_FILTER_DATA_DIR="${PROJECT_SOURCE_DIR}/data/filters")
  if(KOSMOS_ENABLE_MPI)
    kosmos_compile_with_mpi(${target} ${cli}/ranks.cpp)
  endif()
endfunction()
