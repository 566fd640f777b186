# `touchstone mpirun` as mpirun (docs/mpi.md, "Running"): what each rank owns of the C library, how
# every run ends, and how a module run directly explains itself.
touchstone_add_mpi_program(mpi_test_rank_libc rank_libc.c)
target_compile_options(mpi_test_rank_libc PRIVATE -Wall -Wextra)

# getopt, rand, strtok and errno per rank, with the ranks interleaved in the middle of each; rand
# draws exactly glibc's numbers for the rank's seed, the same on every run.
add_test(NAME mpi.rank_libc.mesh2x3_np5 COMMAND ${here}/expect.sh 0 "rank_libc: all checks passed on 5 ranks"
         ${ts} mpirun --machine mesh:2x3 -np 5 $<TARGET_FILE:mpi_test_rank_libc> input -v -n 5 --name=abc -qw rest -- -x)
add_test(NAME mpi.rank_libc.threads COMMAND ${here}/expect.sh 0 "rank_libc: all checks passed on 7 ranks"
         ${ts} mpirun --machine torus:3x3 -np 7 --execution threads
         $<TARGET_FILE:mpi_test_rank_libc> input -v -n 5 --name=abc -qw rest -- -x)

# A module run directly says how to run it, and fails.
add_test(NAME mpi.module_run_directly COMMAND ${here}/expect.sh 1
         "^  touchstone mpirun \\[--machine SPEC\\] \\[-np N\\] [^ ]*mpi_test_hello \\[ARGS...\\]"
         $<TARGET_FILE:mpi_test_hello>)
