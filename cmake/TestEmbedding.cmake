# Installs the Kosmos build in KOSMOS_BINARY_DIR into WORK_DIR/prefix, then configures, builds and
# runs the downstream application in EXAMPLE_SOURCE_DIR with find_package(Kosmos).
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${KOSMOS_BINARY_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE code OUTPUT_QUIET)
if(code)
  message(FATAL_ERROR "installing Kosmos failed (${code})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${EXAMPLE_SOURCE_DIR}" -B "${WORK_DIR}/build"
                  "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
                RESULT_VARIABLE code)
if(code)
  message(FATAL_ERROR "configuring the embedding example failed (${code})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE code)
if(code)
  message(FATAL_ERROR "building the embedding example failed (${code})")
endif()
execute_process(COMMAND "${WORK_DIR}/build/embed_kosmos" RESULT_VARIABLE code)
if(code)
  message(FATAL_ERROR "the embedding example exited with ${code}")
endif()
