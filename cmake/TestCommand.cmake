# cmake -DCOMMAND="prog;arg;..." -DEXPECT_CODE=n [-DEXPECT_OUTPUT=regex] [-DREJECT_OUTPUT=regex]
#       -P TestCommand.cmake
# Passes when the command exits with EXPECT_CODE, its combined output matches EXPECT_OUTPUT and
# does not match REJECT_OUTPUT.
list(FILTER COMMAND EXCLUDE REGEX "^$")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT "${code}" STREQUAL "${EXPECT_CODE}")
  message(FATAL_ERROR "exit status ${code}, expected ${EXPECT_CODE}")
endif()
if(EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUTPUT}'")
endif()
if(REJECT_OUTPUT AND "${out}${err}" MATCHES "${REJECT_OUTPUT}")
  message(FATAL_ERROR "output matches '${REJECT_OUTPUT}', which it must not")
endif()
