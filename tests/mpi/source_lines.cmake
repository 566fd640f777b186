# Reports that name the program's lines (docs/debugging.md, "Source lines"), here deadlocks through
# nonblocking collectives: the rank's wait names the collective with its arguments and line, the
# collective's own progress the ranks it waits for, and the wait-for cycle runs through it. Built
# with -g; each line asserted exactly. The lines themselves come from the runtime's source_line
# (libdw): tests/runtime/test_source_lines.cpp.
touchstone_add_mpi_program(mpi_test_nbc_deadlock nbc_deadlock.c)
target_compile_options(mpi_test_nbc_deadlock PRIVATE -Wall -Wextra -g)
set(nbc $<TARGET_FILE:mpi_test_nbc_deadlock>)
set(t "[0-9.]+")
set(ibcast_world "MPI_Ibcast\\(count=1, MPI_INT, root=0\\) on MPI_COMM_WORLD at nbc_deadlock\\.c:22")
set(even "the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0")
set(ibcast_even "MPI_Ibcast\\(count=1, MPI_INT, root=0\\) on ${even} at nbc_deadlock\\.c:29")

add_test(NAME mpi.source_lines.ibcast_deadlock COMMAND ${here}/expect_lines.sh 2
         "  rank 0 blocked since t=${t} us in MPI_Recv\\(source=2, tag=5, MPI_COMM_WORLD\\) at nbc_deadlock\\.c:21"
         "  rank 1 blocked since t=${t} us in MPI_Wait at nbc_deadlock\\.c:23 for ${ibcast_world}"
         "  rank 1's ${ibcast_world} is blocked since t=${t} us, waiting for rank 0"
         "Wait-for cycle \\(2 rank\\(s\\)\\):"
         "  rank 0 waits in MPI_Recv\\(source=2, tag=5, MPI_COMM_WORLD\\) at nbc_deadlock\\.c:21 for rank 2"
         "  rank 2 waits in MPI_Wait at nbc_deadlock\\.c:23 for ${ibcast_world} for rank 0"
         -- ${ts} mpirun --machine mesh:2x3 -np 5 ${nbc} world)
# On a sub-communicator: the report names it by how it was made.
add_test(NAME mpi.source_lines.ibcast_deadlock_split COMMAND ${here}/expect_lines.sh 2
         "  rank 4 blocked since t=${t} us in MPI_Wait at nbc_deadlock\\.c:30 for ${ibcast_even}"
         "  rank 2's ${ibcast_even} is blocked since t=${t} us, waiting for rank 0"
         "  rank 0 waits in MPI_Recv\\(source=2, tag=5, ${even}\\) at nbc_deadlock\\.c:28 for rank 4"
         "  rank 4 waits in MPI_Wait at nbc_deadlock\\.c:30 for ${ibcast_even} for rank 0"
         -- ${ts} mpirun --machine mesh:2x3 -np 5 ${nbc} split)
# No runtime words are left: no "recv(", "a task of".
add_test(NAME mpi.source_lines.ibcast_no_runtime_words COMMAND sh -c
         "! ${ts} mpirun --machine mesh:2x3 -np 5 ${nbc} world 2>&1 | grep -E '(^| )recv\\(|a task of'")
set_tests_properties(mpi.source_lines.ibcast_deadlock mpi.source_lines.ibcast_deadlock_split
                     mpi.source_lines.ibcast_no_runtime_words PROPERTIES TIMEOUT 60)
mpi_test(source_lines.ibcast_correct nbc_deadlock --machine mesh:2x3 -np 5 --check)
add_test(NAME mpi.determinism.nbc_deadlock COMMAND ${here}/determinism.sh ${ts} ${nbc} mesh:2x3 --check)
