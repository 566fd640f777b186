# MPI-IO (MPI-3.1 chapter 13, file_io.c): explicit offsets, views, individual and shared file
# pointers, nonblocking and split collective accesses, the end of file, error classes and file error
# handlers. Included by CMakeLists.txt, which defines mpi_test, here and ts.
touchstone_add_mpi_program(mpi_test_file_io file_io.c)
target_compile_options(mpi_test_file_io PRIVATE -Wall -Wextra)

# NAME MPIRUN-ARGS...: mpi_test's check, the program given a directory of the test's own for its
# files (mpi_test passes the program no argument), so that tests run at once never share a file.
function(file_io_test name)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/file_io_${name})
  file(MAKE_DIRECTORY ${dir})
  add_test(NAME mpi.file_io.${name} COMMAND ${here}/expect.sh 0 "all checks passed"
           ${ts} mpirun ${ARGN} $<TARGET_FILE:mpi_test_file_io> ${dir})
  set_tests_properties(mpi.file_io.${name} PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
endfunction()

file_io_test(mesh3x5_np7 --machine mesh:3x5 -np 7)
file_io_test(torus2x2 --machine torus:2x2)
file_io_test(switch5_threads --machine switch:5 --execution threads)

# Determinism: the same trace_hash under fibers, --perturb and --execution threads. determinism.sh
# passes the program no argument: its files go to the test's working directory, of its own.
set(file_io_dir ${CMAKE_CURRENT_BINARY_DIR}/file_io_determinism)
file(MAKE_DIRECTORY ${file_io_dir})
add_test(NAME mpi.determinism.file_io
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_file_io> mesh:2x3 -np 5)
set_tests_properties(mpi.determinism.file_io PROPERTIES WORKING_DIRECTORY ${file_io_dir})

# Under MPI_ERRORS_ARE_FATAL, set on MPI_FILE_NULL, rank 1's opening a missing file ends the run with
# the report naming the call and the file.
set(file_io_dir ${CMAKE_CURRENT_BINARY_DIR}/file_io_fatal)
file(MAKE_DIRECTORY ${file_io_dir})
add_test(NAME mpi.file_io.fatal COMMAND ${here}/expect.sh 2 "MPI_File_open on rank 1: .*fatal_missing\\.dat"
         ${ts} mpirun --machine mesh:2x2 -np 3 $<TARGET_FILE:mpi_test_file_io> ${file_io_dir} fatal)
