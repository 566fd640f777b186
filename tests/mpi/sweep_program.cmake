# `touchstone sweep --program` (docs/benchmarking.md): an MPI program's measured region beside the
# catalog's algorithms, and an OSU-style program under every algorithm of a collective.
touchstone_add_mpi_program(mpi_test_alltoall_xor ${PROJECT_SOURCE_DIR}/examples/mpi_alltoall_xor.c)
touchstone_add_mpi_program(mpi_test_osu_alltoall osu_alltoall.c)
set(sweep_dir ${CMAKE_CURRENT_BINARY_DIR}/sweep_program)
add_test(NAME mpi.sweep_program.mpi_and_catalog_1_lev_xor_same_makespan
         COMMAND ${here}/sweep_program.sh same-makespan ${ts} $<TARGET_FILE:mpi_test_alltoall_xor> ${sweep_dir})
add_test(NAME mpi.sweep_program.catalog_pays_the_own_block_copy
         COMMAND ${here}/sweep_program.sh copy-cost ${ts} $<TARGET_FILE:mpi_test_alltoall_xor> ${sweep_dir})
add_test(NAME mpi.sweep_program.osu_style_one_row_per_algorithm
         COMMAND ${here}/sweep_program.sh per-algorithm ${ts} $<TARGET_FILE:mpi_test_osu_alltoall> ${sweep_dir})
set_tests_properties(mpi.sweep_program.mpi_and_catalog_1_lev_xor_same_makespan
                     mpi.sweep_program.osu_style_one_row_per_algorithm PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
# A failed run of the program is a failed cell with its error, and the sweep exits 2: on 3 ranks
# the power-of-two algorithms refuse.
add_test(NAME mpi.sweep_program.failed_runs_reported COMMAND ${here}/expect.sh 2
         "error: program:mpi_test_osu_alltoall\\[alltoall=cc-cube\\] size 0 on mesh:2x2: exit status 2: rank 0 failed .*cc-cube needs a power-of-two number of processors"
         ${ts} sweep --program $<TARGET_FILE:mpi_test_osu_alltoall> --coll alltoall=all --machine mesh:2x2 -np 3)
# Those runs end inside MPI_Alltoall, so the program never frees its buffers (as any aborted MPI
# program); under AddressSanitizer the leak report would change the runs' exit status.
set_tests_properties(mpi.sweep_program.failed_runs_reported PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
add_test(NAME mpi.sweep_program.failed_cell COMMAND ${here}/expect.sh 2
         "program:mpi_test_osu_alltoall\\[alltoall=cc-cube\\] +failed"
         ${ts} sweep --program $<TARGET_FILE:mpi_test_osu_alltoall> --coll alltoall=all --machine mesh:2x2 -np 3)
add_test(NAME mpi.determinism.osu_alltoall
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_osu_alltoall> torus:3x3 --coll alltoall=1-lev-xor)
# The program's run writes its result in a folder of its own under $TMPDIR: a $TMPDIR that is no
# folder is named in the cell's error, and so it is for mpirun's copies of the program.
add_test(NAME mpi.sweep_program.temporary_folder_named COMMAND ${here}/expect.sh 2
         "error: program:mpi_test_alltoall_xor size 16 on mesh:2x2: the folder for temporary files, [^ ]*/no-such-folder \\(\\$TMPDIR\\), does not exist"
         env TMPDIR=${CMAKE_CURRENT_BINARY_DIR}/no-such-folder
         ${ts} sweep --program $<TARGET_FILE:mpi_test_alltoall_xor> --args "{size}" --machine mesh:2x2 --sizes 16)
add_test(NAME mpi.launcher.temporary_folder_named COMMAND ${here}/expect.sh 1
         "^error: the folder for temporary files, [^ ]*/CMakeLists.txt \\(\\$TMPDIR\\), is not a folder$"
         env TMPDIR=${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt ${ts} mpirun --machine mesh:2x2 $<TARGET_FILE:mpi_test_alltoall_xor> 16)
