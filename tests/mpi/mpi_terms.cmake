# Reports in MPI's terms (docs/debugging.md, "Reports in MPI's terms"): a deadlock names each
# blocked rank's MPI call with its communicator (by name or by how it was made), the source or
# destination and tag the program gave, and the line; unreceived messages are named in their
# communicator's ranks with the call that sent them; MPI_Abort names its communicator. Each
# erroneous mode's report lines are asserted exactly (the program is built with -g); the correct
# mode runs the same patterns to completion under --check.
touchstone_add_mpi_program(mpi_test_mpi_terms mpi_terms.c)
target_compile_options(mpi_test_mpi_terms PRIVATE -Wall -Wextra -g)
set(terms $<TARGET_FILE:mpi_test_mpi_terms>)
set(on_5 --machine mesh:2x3 -np 5)
set(t "[0-9.]+")
set(split "the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 1")

add_test(NAME mpi.terms.deadlock_recv COMMAND ${here}/expect_lines.sh 2
         "  rank 3 blocked since t=${t} us in MPI_Recv\\(source=0, tag=7, ${split}\\) at mpi_terms.c:22"
         "  rank 3 waits in MPI_Recv\\(source=0, tag=7, ${split}\\) at mpi_terms.c:22 for rank\\(s\\) 1, finished"
         "  a message from rank 0 \\(world rank 1\\) to rank 1 \\(world rank 3\\) on ${split}, tag 8, 16 bytes, sent \
by MPI_Send at mpi_terms.c:21, arrived t=${t} us \\(the receive wants tag 7\\)"
         -- ${ts} mpirun ${on_5} ${terms} recv)
add_test(NAME mpi.terms.deadlock_waitall COMMAND ${here}/expect_lines.sh 2
         "  rank 0 blocked since t=${t} us in MPI_Waitall at mpi_terms.c:34 for MPI_Irecv\\(source=1, tag=2, ring\\) \
at mpi_terms.c:31 \\(one of 3 requests\\)"
         "  rank 4 waits in MPI_Waitall at mpi_terms.c:34 for MPI_Irecv\\(source=0, tag=2, ring\\) at mpi_terms.c:31 \
\\(one of 3 requests\\) for rank 0"
         "No unmatched messages."
         -- ${ts} mpirun ${on_5} ${terms} waitall)
add_test(NAME mpi.terms.deadlock_collective COMMAND ${here}/expect_lines.sh 2
         "  rank 0 blocked since t=${t} us in MPI_Bcast on MPI_COMM_WORLD at mpi_terms.c:43"
         "  rank 2 blocked since t=${t} us in MPI_Recv\\(source=0, tag=5, MPI_COMM_WORLD\\) at mpi_terms.c:39"
         "  rank 4 waits in MPI_Bcast on MPI_COMM_WORLD at mpi_terms.c:43 for rank 2"
         "  rank 2 waits in MPI_Recv\\(source=0, tag=5, MPI_COMM_WORLD\\) at mpi_terms.c:39 for rank 0"
         -- ${ts} mpirun ${on_5} ${terms} collective)
# A rank that went past an error returned to it (MPI_ERRORS_RETURN): the report says which.
add_test(NAME mpi.terms.deadlock_after_returned_error COMMAND ${here}/expect_lines.sh 2
         "  rank 4 waits in MPI_Scatterv on MPI_COMM_WORLD at mpi_terms.c:63 for rank\\(s\\) 3, finished"
         "  rank 3 finished: the last error returned to it: MPI_Scatterv on MPI_COMM_WORLD at mpi_terms.c:63: \
sendcounts, an array of 5 entries, is a null pointer \\(invalid argument, error code 13\\)"
         -- ${ts} mpirun ${on_5} ${terms} refused)
add_test(NAME mpi.terms.abort COMMAND ${here}/expect_lines.sh 7
         "touchstone mpirun: rank 2 called MPI_Abort\\(MPI_COMM_WORLD, error code 7\\) at mpi_terms.c:47; the run is \
ended"
         -- ${ts} mpirun ${on_5} ${terms} abort)
# A race in a split communicator: the receive with its line, the senders (world ranks 4 and 2) in
# the communicator's ranks, and rank 2's one extra hop on mesh:2x3 as the margin.
add_test(NAME mpi.terms.race COMMAND ${here}/expect_lines.sh 0
         "race: rank 0 receive #[0-9]+: MPI_Recv\\(source=MPI_ANY_SOURCE, tag=9, the communicator of MPI_Comm_split of \
MPI_COMM_WORLD, color 0\\) at mpi_terms.c:52, posted t=${t} us, took the message from rank 2 \\(tag 9, arrived \
t=${t} us\\); it could also have matched:"
         "  the message from rank 1 \\(tag 9, arrived t=${t} us\\), which lost by 1\\.440000 us"
         -- ${ts} mpirun ${on_5} --races ${terms} race)
# No runtime words are left in these reports: no "recv(", "waitall on", "message #".
add_test(NAME mpi.terms.no_runtime_words COMMAND sh -c
         "! ${ts} mpirun --machine mesh:2x3 -np 5 ${terms} waitall 2>&1 | grep -E '(^| )recv\\(|waitall on|message \
#|send of message'")
add_test(NAME mpi.terms.race_no_runtime_words COMMAND sh -c
         "! ${ts} mpirun --machine mesh:2x3 -np 5 --races ${terms} race 2>&1 | grep -E '(^| )recv\\(|message #|source=any'")
set_tests_properties(mpi.terms.race mpi.terms.deadlock_recv mpi.terms.deadlock_waitall mpi.terms.deadlock_collective
                     mpi.terms.deadlock_after_returned_error mpi.terms.abort
                     mpi.terms.no_runtime_words mpi.terms.race_no_runtime_words PROPERTIES TIMEOUT 60)
mpi_test(terms.correct mpi_terms --machine mesh:2x3 -np 5 --check)
mpi_test(terms.correct_threads mpi_terms --machine mesh:2x3 -np 5 --check --execution threads)
add_test(NAME mpi.determinism.mpi_terms COMMAND ${here}/determinism.sh ${ts} ${terms} mesh:2x3 --check)

# Buffer ownership: a nonblocking send's buffer written before the send completes (always
# checked), a nonblocking receive's (under --check, where such a receive cannot be freed while
# active); the correct program completes its requests every way and writes its buffers only after.
touchstone_add_mpi_program(mpi_test_buffer_ownership buffer_ownership.c)
target_compile_options(mpi_test_buffer_ownership PRIVATE -Wall -Wextra -g)
set(owner $<TARGET_FILE:mpi_test_buffer_ownership>)
set(fatal "; the default error handler MPI_ERRORS_ARE_FATAL ends the run")
add_test(NAME mpi.terms.send_buffer_written COMMAND ${here}/expect_lines.sh 2
         "rank 0 failed at t=${t} us: MPI_Wait on rank 0: the send buffer \\(16 bytes\\) of MPI_Isend\\(dest=1, \
tag=3, MPI_COMM_WORLD\\) at buffer_ownership.c:19 was written while the send was pending, found when MPI_Wait at \
buffer_ownership.c:21 completed it \\(a nonblocking send owns its buffer until it completes\\) \\(invalid \
buffer\\)${fatal}"
         -- ${ts} mpirun ${on_5} ${owner} send)
add_test(NAME mpi.terms.recv_buffer_written COMMAND ${here}/expect_lines.sh 2
         "rank 1 failed at t=${t} us: MPI_Wait on rank 1: the receive buffer \\(16 bytes\\) of MPI_Irecv\\(source=0, \
tag=5, MPI_COMM_WORLD\\) at buffer_ownership.c:27 was written while the receive was pending, found when MPI_Wait at \
buffer_ownership.c:29 completed it \\(a nonblocking receive owns its buffer until it completes\\) \\(invalid \
buffer\\)${fatal}"
         -- ${ts} mpirun ${on_5} --check ${owner} recv)
add_test(NAME mpi.terms.recv_buffer_unchecked COMMAND ${here}/expect.sh 0 "^$" ${ts} mpirun ${on_5} ${owner} recv)
add_test(NAME mpi.terms.free_active_recv COMMAND ${here}/expect_lines.sh 2
         "rank 1 failed at t=0 us: MPI_Request_free on rank 1: the active receive MPI_Irecv\\(source=0, tag=5, \
MPI_COMM_WORLD\\) at buffer_ownership.c:35 is freed: nothing would then tell the program when its buffer holds the \
message \\(under --check a nonblocking receive must be completed with MPI_Wait, MPI_Test, ...\\) \\(invalid \
request\\)${fatal}"
         -- ${ts} mpirun ${on_5} --check ${owner} free_recv)
add_test(NAME mpi.terms.free_active_recv_warns COMMAND ${here}/expect_lines.sh 0
         "touchstone mpirun: warning: rank 1 at MPI_Finalize: the request of MPI_Irecv\\(source=0, tag=5, \
MPI_COMM_WORLD\\) at buffer_ownership.c:35 was freed while active \\(MPI_Request_free at buffer_ownership.c:36\\)"
         -- ${ts} mpirun ${on_5} ${owner} free_recv)
add_test(NAME mpi.terms.request_used_after_free COMMAND ${here}/expect_lines.sh 2
         "rank 0 failed at t=${t} us: MPI_Wait on rank 0: request 1 \\(of MPI_Isend at buffer_ownership.c:42\\) was \
already completed and freed by MPI_Wait at buffer_ownership.c:44, which set its handle to MPI_REQUEST_NULL; the copy \
of it used at buffer_ownership.c:45 is no longer valid \\(invalid request\\)${fatal}"
         -- ${ts} mpirun ${on_5} ${owner} twice)
set_tests_properties(mpi.terms.request_used_after_free mpi.terms.send_buffer_written mpi.terms.recv_buffer_written
                     mpi.terms.recv_buffer_unchecked
                     mpi.terms.free_active_recv mpi.terms.free_active_recv_warns PROPERTIES TIMEOUT 60)
mpi_test(terms.buffer_ownership_correct buffer_ownership --machine mesh:2x3 -np 5)
mpi_test(terms.buffer_ownership_correct_check buffer_ownership --machine torus:3x3 -np 7 --check)
add_test(NAME mpi.determinism.buffer_ownership COMMAND ${here}/determinism.sh ${ts} ${owner} mesh:2x3 --check)
