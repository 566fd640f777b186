# docs/mpi.md's coverage table is generated from <mpi.h> (mpi/coverage.py): it must match the header,
# and every function the header declares must exist (the generated program takes the address of each
# one and is linked with --no-undefined, so a declared but undefined function fails the build).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME mpi.coverage_table COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/mpi/coverage.py --check)
set(coverage_c ${CMAKE_CURRENT_BINARY_DIR}/every_declared_function.c)
add_custom_command(OUTPUT ${coverage_c}
                   COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/mpi/coverage.py --link-check ${coverage_c}
                   DEPENDS ${PROJECT_SOURCE_DIR}/mpi/coverage.py ${PROJECT_SOURCE_DIR}/mpi/include/mpi.h
                           ${PROJECT_SOURCE_DIR}/mpi/standard_functions.txt)
touchstone_add_mpi_program(mpi_test_every_declared_function ${coverage_c})
add_test(NAME mpi.coverage_link COMMAND ${ts} mpirun --machine mesh:1x1 $<TARGET_FILE:mpi_test_every_declared_function>)
