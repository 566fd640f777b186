# Runs PROGRAM (with ARGS) and compares its stdout, then its stderr, with the file EXPECTED, and
# its exit code with EXIT. On a mismatch prints both outputs and fails.
#   cmake -DPROGRAM=... -DARGS="a;b" -DEXIT=0 -DEXPECTED=x.out -P check_output.cmake
# Set UPDATE=1 to rewrite EXPECTED from the program's output instead (then review the diff).
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 120)
set(got "${out}${err}")
if(UPDATE)
  file(WRITE "${EXPECTED}" "${got}")
  return()
endif()
file(READ "${EXPECTED}" want)
if(NOT "${rc}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXIT}; output:\n${got}")
endif()
if(NOT "${got}" STREQUAL "${want}")
  message(FATAL_ERROR "output differs from ${EXPECTED}\n--- expected\n${want}--- got\n${got}")
endif()
