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

# A module run directly says how to run it, and fails. Not under a sanitizer: a sanitized module
# run as an executable stops at once because the sanitizer's runtime is not loaded first.
if(NOT TOUCHSTONE_ASAN AND NOT TOUCHSTONE_TSAN)
  add_test(NAME mpi.module_run_directly COMMAND ${here}/expect.sh 1
           "^  touchstone mpirun \\[--machine SPEC\\] \\[-np N\\] [^ ]*mpi_test_hello \\[ARGS...\\]"
           $<TARGET_FILE:mpi_test_hello>)
endif()
touchstone_add_mpi_program(mpi_test_endings endings.c)
# -g: the watchdog's stacks name its lines (mpi.endings.wall_limit_lines).
target_compile_options(mpi_test_endings PRIVATE -Wall -Wextra -g)

# Every ending explained: the rank, the call, what to do, and mpirun's exit status.
function(ending name status regex)
  add_test(NAME mpi.endings.${name} COMMAND ${here}/expect.sh ${status} "${regex}"
           ${ts} mpirun ${ARGN})
  set_tests_properties(mpi.endings.${name} PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
endfunction()
set(endings $<TARGET_FILE:mpi_test_endings>)
touchstone_add_mpi_program(mpi_test_unreceived unreceived.c)
# Messages nobody received fail a run that otherwise ended well: the first 20 of 30 named, in rank
# order (the 20th rank 3's second), then how many more; each send's source line where the program
# has debug information (the sanitized builds).
ending(unreceived 2 "the run finished with 30 message\\(s\\) never received:\n  a message from rank 4 to rank 0 on MPI_COMM_WORLD, tag 0, 4 bytes, sent by MPI_Send( at unreceived.c:[0-9]+)?, arrived t=[0-9.]+ us\n(  a message [^\n]*\n){18}  a message from rank 2 to rank 3 on MPI_COMM_WORLD, tag 1, [^\n]*\n  \\.\\.\\.\n"
       --machine mesh:1x5 $<TARGET_FILE:mpi_test_unreceived>)
ending(exit 3 "^touchstone mpirun: rank 1 called exit\\(3\\) at t=[0-9.]+ us without calling MPI_Finalize \\(its last MPI call was MPI_Barrier\\): a rank that ends before MPI_Finalize ends the job"
       --machine mesh:2x3 -np 5 ${endings} exit)
ending(return 4 "^touchstone mpirun: rank 2 returned 4 from main at t=[0-9.]+ us without calling MPI_Finalize"
       --machine mesh:2x3 -np 5 ${endings} return)
ending(exit_after_finalize 5 "^touchstone mpirun: rank 2 exited with status 5$" --machine mesh:2x3 -np 5 ${endings} exit_after_finalize)
ending(abort 134 "^touchstone: the program of rank 1 died of SIGABRT" --machine mesh:2x2 ${endings} abort)
# A process that died so leaves its program's copies behind; the next run removes them.
add_test(NAME mpi.endings.copies_of_an_aborted_run_removed_by_the_next
         COMMAND ${here}/copies_of_ended_runs.sh ${ts} ${endings} $<TARGET_FILE:mpi_test_hello>)
# Its stack names the program's line (looked up in a child process: the handler cannot allocate;
# sanitized builds print the plain frames).
if(NOT (TOUCHSTONE_ASAN OR TOUCHSTONE_TSAN))
  ending(abort_lines 134 "^  #[0-9]+ main(\\.cold)? at /.*/tests/mpi/endings\\.c:59 \\(" --machine mesh:2x2 ${endings} abort)
endif()
# AddressSanitizer reports a stack overflow itself after the runtime's message and aborts (134);
# ThreadSanitizer reports it too and exits with its own status (66).
if(TOUCHSTONE_ASAN)
  set(overflow_status 134)
elseif(TOUCHSTONE_TSAN)
  set(overflow_status 66)
else()
  set(overflow_status 139)
endif()
ending(stack_overflow ${overflow_status} "^touchstone: the VP of rank 2 overflowed its stack of 64 KiB \\(give VPs larger stacks with --stack-kb"
       --machine mesh:2x2 --stack-kb 64 ${endings} overflow)
# An MPI program's ranks get 1 MiB stacks (the catalog's VPs 128 KiB): every rank's 512 KiB local
# array fits, run by mpirun and by sweep --program, whose child mpirun keeps that default.
ending(deep_stack 0 "^endings: all checks passed$" --machine mesh:2x2 ${endings} deep_stack)
# With a smaller stack the array's frame, written page by page (-fstack-clash-protection), meets
# the guard page: reported, not written over the next rank's stack. Every rank overflows; the
# report names the first the barrier lets go, rank 1, on any number of host cores.
ending(deep_stack_overflow ${overflow_status} "^touchstone: the VP of rank 1 overflowed its stack of 128 KiB"
       --machine mesh:2x2 --stack-kb 128 ${endings} deep_stack)
# Ranks overflowing at once on four host cores, rank 0 last by host time: the report names rank 0,
# the one a single host core meets first, and no other.
ending(overflow_at_once ${overflow_status} "^touchstone: the VP of rank 0 overflowed its stack of 128 KiB"
       --machine mesh:2x2 --stack-kb 128 --host-cores 4 ${endings} overflow_at_once)
if(TOUCHSTONE_ASAN)  # its report ends in an abort only with abort_on_error, whoever runs the test
  set_tests_properties(mpi.endings.stack_overflow mpi.endings.deep_stack_overflow mpi.endings.overflow_at_once
                       PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1")
endif()
add_test(NAME mpi.endings.deep_stack_in_sweep COMMAND ${here}/expect.sh 0 "^program:mpi_test_endings  *[0-9]"
         ${ts} sweep --machine mesh:2x2 --program ${endings} --args deep_stack)
# The spinning rank's stack, sampled by a signal. Not under ThreadSanitizer: it holds a signal
# until the thread calls into its runtime, which a rank spinning in uninstrumented code never does
# (the report then says its stack could not be taken, as wall_limit_names_rank still checks).
if(NOT TOUCHSTONE_TSAN)
  ending(wall_limit 2 "^  #0 spin_forever at /.*/tests/mpi/endings\\.c:34 \\(" --machine mesh:2x2 --wall-limit 0.5 ${endings} spin)
  # A return address names the line of its call: main's call of spin_forever.
  ending(wall_limit_lines 2 "^  #1 main at /.*/tests/mpi/endings\\.c:62 \\(" --machine mesh:2x2 --wall-limit 0.5 ${endings} spin)
endif()
ending(wall_limit_names_rank 2 "^Rank 1 was running its own code and made no call to Touchstone since" --machine mesh:2x2 --wall-limit 0.5 ${endings} spin)
# The same when the rank spins past its MPI_Send on another host core while the event loop waits
# for it (docs/parallel.md, "Programs that go on past their sends").
ending(wall_limit_past_send 2 "^Rank 1 was running its own code and made no call to Touchstone since" --machine mesh:2x2
       --wall-limit 0.5 --host-cores 2 --parallel-programs-from-us 0 ${endings} spin_past_send)
# What a rank printed survives a run the watchdog ends (stdout is a pipe here: fully buffered by
# default, but flushed whenever a rank blocks).
ending(output_survives 2 "^endings: rank 0 printed this before rank 1 spun$" --machine mesh:2x2 --wall-limit 0.5 ${endings} spin)
ending(wall_limit_summary 2 "^touchstone mpirun: mesh:2x2, 4 ranks: ended by the watchdog" --machine mesh:2x2 --wall-limit 0.5 --summary ${endings} spin)
ending(sigint 130 "^interrupted by SIGINT: rank 1 was calling the runtime at t=[0-9.]+ us\\.$" --machine mesh:2x2 ${endings} sigint)
ending(wtime_busy_wait 2 "MPI_Wtime on rank 0: called 16777216 times in a row at t=[0-9.]+ us with no time passing"
       --machine mesh:2x2 ${endings} wtime)
ending(impossible_count 2 "MPI_Send on rank 0: count 2147483647 of 8-byte elements is 17179869176 bytes from address 0x[0-9a-f]+, but not all of them are memory: is the count larger than the buffer\\? \\(invalid buffer\\)"
       --machine mesh:2x2 ${endings} bigcount)
ending(summary_on_failure 3 "^touchstone mpirun: mesh:2x3, 5 ranks: ended with exit status 3, trace_hash [0-9a-f]+"
       --machine mesh:2x3 -np 5 --summary ${endings} exit)

# What the ranks share as one process, said when the program changed it.
ending(shared_directory 0 "^touchstone mpirun: note: the program changed the current directory from [^ ]+ to /. every rank saw the change"
       --machine mesh:2x2 ${endings} shared)
ending(shared_environment 0 "^touchstone mpirun: note: the program changed the environment variable\\(s\\) ENDINGS_SET_BY_RANK_2. every rank saw"
       --machine mesh:2x2 ${endings} shared)

# --compute: free by default (deterministic), the host's CPU time when asked.
ending(compute_zero 0 "^busy: zero$" --machine mesh:2x2 ${endings} busy)
ending(compute_host 0 "^busy: positive$" --machine mesh:2x2 --compute host:0.5 ${endings} busy)
# With host compute each MPI_Wtime charges the CPU time since the last: the busy-wait for one virtual
# second ends (after a tenth of a host CPU second at FACTOR 10).
ending(compute_host_wtime 0 "^endings: all checks passed$" --machine mesh:2x2 --compute host:10 ${endings} wtime)
ending(compute_bad 1 "--compute: expected zero, host or host:FACTOR with FACTOR a positive number, got 'host:-1'"
       --machine mesh:2x2 --compute host:-1 ${endings} busy)

# Each rank's C library state does not depend on how the host runs the ranks: one trace_hash over
# fibers, --perturb and threads.
set(rank_libc_run "$<TARGET_FILE:mpi_test_rank_libc> input -v -n 5 --name=abc -qw rest -- -x")
add_test(NAME mpi.determinism.rank_libc_perturb COMMAND ${here}/same_hash.sh ${ts} "${rank_libc_run}"
         "--machine mesh:2x3 -np 5" "--machine mesh:2x3 -np 5 --perturb 7")
add_test(NAME mpi.determinism.rank_libc_threads COMMAND ${here}/same_hash.sh ${ts} "${rank_libc_run}"
         "--machine mesh:2x3 -np 5" "--machine mesh:2x3 -np 5 --execution threads --perturb 3")

# --eager-limit is the machine option eager_limit=.
add_test(NAME mpi.eager_limit_option COMMAND ${here}/same_hash.sh ${ts} $<TARGET_FILE:mpi_test_p2p>
         "--machine mesh:2x3,eager_limit=64 -np 5" "--machine mesh:2x3 -np 5 --eager-limit 64")

# --help in plain words: no CLI11 type notation, every algorithm (parameterised ones too).
add_test(NAME mpi.help COMMAND ${here}/expect.sh 0 "alltoall: .*pipelined-cc-cube\\(N\\)" ${ts} mpirun --help)
set_tests_properties(mpi.help PROPERTIES FAIL_REGULAR_EXPRESSION "UINT|INT:|FLOAT|TEXT|\\{false\\}|\\{report\\}|0\\.\\.18446744073709551615")

# --wall-limit is a number of host seconds, 0 or more, on run and mpirun alike.
add_test(NAME tools.run_wall_limit_bad COMMAND ${here}/expect.sh 1 "^error: --wall-limit: -1 is outside 0\\.\\.1000000000"
         ${ts} run --machine mesh:2x2 --algorithm alltoall/1-lev-xor --size 8 --wall-limit -1)
add_test(NAME tools.mpirun_wall_limit_bad COMMAND ${here}/expect.sh 1 "^error: --wall-limit: 'abc' is not a decimal number"
         ${ts} mpirun --wall-limit abc $<TARGET_FILE:mpi_test_endings>)

# The progress line, on a terminal (script(1) gives the run one) once the run passes three seconds.
find_program(SCRIPT_PROGRAM script)
if(SCRIPT_PROGRAM)
  add_test(NAME mpi.progress_line COMMAND ${here}/expect.sh 2
           "touchstone: t=42\\.960 us virtual, 8 messages, [0-9.]+ host s \\([0-9.e+]+ virtual us per host s\\)"
           ${SCRIPT_PROGRAM} -qec "${ts} mpirun --machine mesh:2x2 --wall-limit 4.5 $<TARGET_FILE:mpi_test_endings> spin"
           /dev/null)
  set_tests_properties(mpi.progress_line PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
endif()

# The module's getopt_long is glibc's in behaviour: compared call by call on 100 parses.
add_executable(getopt_matches_glibc getopt_matches_glibc.c rank_libc_renamed.c)
target_include_directories(getopt_matches_glibc PRIVATE ${PROJECT_SOURCE_DIR})
add_test(NAME mpi.getopt_matches_glibc COMMAND ${here}/expect.sh 0 "^getopt: 0 of 100 argument lists parse differently from glibc$"
         $<TARGET_FILE:getopt_matches_glibc>)
