# CTest check: fails when `hart ARGS...` fails or no longer prints the committed file EXPECTED.
# cmake -DHART=<hart binary> -DARGS="ops;--backend;et;..." [-DEXPECTED=<file>] [-DREQUIRES=<file>] -P check_generated.cmake
# REQUIRES: an input the command reads (the shared test data); without it the check prints SKIP
# (the test's SKIP_REGULAR_EXPRESSION).
if(DEFINED REQUIRES AND NOT EXISTS "${REQUIRES}")
  message("SKIP: ${REQUIRES} is absent (the shared test data)")
  return()
endif()
execute_process(COMMAND ${HART} ${ARGS} OUTPUT_VARIABLE got RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hart ${ARGS} failed (exit ${rc}):\n${got}")
endif()
if(NOT DEFINED EXPECTED)
  return()
endif()
file(READ ${EXPECTED} want)
if(NOT got STREQUAL want)
  string(REPLACE ";" " " cmd "${ARGS}")
  message(FATAL_ERROR "${EXPECTED} is out of date; regenerate it with:\n  hart ${cmd} > ${EXPECTED}")
endif()
