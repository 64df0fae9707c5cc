# cmake -DKOSMOS=<kosmos tool> -DLAUNCH="mpiexec;-n;2;..." -DARGS="arg;..." -DOUTPUTS="file;..."
#       [-DTHEN="arg;..." -DTHEN_LAUNCH="mpiexec;-n;3;..."] -DWORK_DIR=<dir> -P TestMpiSameResults.cmake
# Runs the tool once as one plain process (in WORK_DIR/one) and once under LAUNCH (in
# WORK_DIR/ranks), each writing OUTPUTS (paths relative to its directory); with THEN, a second
# command follows in each directory (under THEN_LAUNCH in WORK_DIR/ranks), e.g. a resume. Passes
# when every run exits 0 and every output is the same file, byte for byte.
foreach(list IN ITEMS LAUNCH ARGS OUTPUTS THEN THEN_LAUNCH)
  list(FILTER ${list} EXCLUDE REGEX "^$")  # also turns the escaped separators back into a list
endforeach()
foreach(run IN ITEMS one ranks)
  file(REMOVE_RECURSE "${WORK_DIR}/${run}")
  file(MAKE_DIRECTORY "${WORK_DIR}/${run}")
endforeach()
function(run_both args ranks_launch)
  execute_process(COMMAND "${KOSMOS}" ${args} WORKING_DIRECTORY "${WORK_DIR}/one"
                  RESULT_VARIABLE one_code OUTPUT_VARIABLE one_out ERROR_VARIABLE one_err)
  execute_process(COMMAND ${ranks_launch} "${KOSMOS}" ${args} WORKING_DIRECTORY "${WORK_DIR}/ranks"
                  RESULT_VARIABLE ranks_code OUTPUT_VARIABLE ranks_out ERROR_VARIABLE ranks_err)
  message("kosmos ${args}\none process:\n${one_out}${one_err}\nunder ${ranks_launch}:\n${ranks_out}${ranks_err}")
  if(NOT one_code STREQUAL "0" OR NOT ranks_code STREQUAL "0")
    message(FATAL_ERROR "exit status ${one_code} (one process) and ${ranks_code} (ranks), expected 0 and 0")
  endif()
endfunction()
run_both("${ARGS}" "${LAUNCH}")
if(THEN)
  run_both("${THEN}" "${THEN_LAUNCH}")
endif()
foreach(output IN LISTS OUTPUTS)
  foreach(run IN ITEMS one ranks)
    if(NOT EXISTS "${WORK_DIR}/${run}/${output}")
      message(FATAL_ERROR "${run}: ${output} was not written")
    endif()
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK_DIR}/one/${output}" "${WORK_DIR}/ranks/${output}"
                  RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${output} differs between one process and ${LAUNCH}")
  endif()
endforeach()
file(GLOB stray "${WORK_DIR}/ranks/*.tmp.*")
if(stray)
  message(FATAL_ERROR "temporary files left behind: ${stray}")
endif()
