# Buffer ownership of nonblocking collectives and started persistent requests (docs/debugging.md,
# "Buffers owned by nonblocking operations"): a send buffer written while the operation is pending
# (always checked), a receive buffer (under --check), each report asserted whole; the correct
# program runs every form, writing what the operations do not own, with and without --check, and
# its trace hash is the same under --perturb and threads.
touchstone_add_mpi_program(mpi_test_collective_ownership collective_ownership.c)
target_compile_options(mpi_test_collective_ownership PRIVATE -Wall -Wextra -g -O0)
set(cown $<TARGET_FILE:mpi_test_collective_ownership>)
set(cown_on ${ts} mpirun --machine mesh:2x4 -np 7)
set(odd "the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 1")
set(fatal "; the default error handler MPI_ERRORS_ARE_FATAL ends the run")
# One report: rank, completing call and line, what was written, the operation and its line.
function(ownership_test name rank what op post wait owner mode)
  string(JOIN " " rule ${ARGN})
  add_test(NAME mpi.ownership.${name} COMMAND ${here}/expect_lines.sh 2
           "rank ${rank} failed at t=[0-9.]+ us: MPI_Wait on rank ${rank}: the ${what} of ${op} at \
collective_ownership.c:${post} was written while the ${owner} was pending, found when MPI_Wait at \
collective_ownership.c:${wait} completed it \\(a ${rule} until it completes\\) \\(invalid \
buffer\\)${fatal}"
           -- ${cown_on} ${OWNERSHIP_OPTIONS} ${cown} ${mode})
  set_tests_properties(mpi.ownership.${name} PROPERTIES TIMEOUT 60)
endfunction()
ownership_test(icoll_send 5 "send buffer \\(4 bytes\\)" "MPI_Iallgather\\(sendcount=1, MPI_INT, recvcount=1, MPI_INT\\) on ${odd}" 210 212 collective icoll_send
               nonblocking collective owns its buffers)
ownership_test(pcoll_send 5 "send buffer \\(4 bytes\\)" "MPI_Allreduce_init\\(count=1, MPI_INT, MPI_SUM\\) on ${odd}" 226 231 collective pcoll_send
               started persistent collective owns its buffers)
ownership_test(psend 1 "send buffer \\(4 bytes\\)" "MPI_Send_init\\(dest=1, tag=8, ${odd}\\)" 236 239 send psend
               started persistent send owns its buffer)
set(OWNERSHIP_OPTIONS --check)
ownership_test(icoll_recv 1 "receive buffer \\(the block of 4 bytes at offset 8\\)" "MPI_Igatherv\\(recvcounts=\\{1,1,1\\}, MPI_INT, root=0\\) on ${odd}" 220 222
               collective icoll_recv nonblocking collective owns its buffers)
ownership_test(precv 3 "receive buffer \\(4 bytes\\)" "MPI_Recv_init\\(source=0, tag=9, ${odd}\\)" 246 249 receive
               precv started persistent receive owns its buffer)
# Receive buffers are owned under --check only.
foreach(mode IN ITEMS icoll_recv precv)
  add_test(NAME mpi.ownership.${mode}_unchecked COMMAND ${here}/expect.sh 0 "^$" ${cown_on} ${cown} ${mode})
  set_tests_properties(mpi.ownership.${mode}_unchecked PROPERTIES TIMEOUT 60)
endforeach()
mpi_test(ownership.correct collective_ownership --machine mesh:2x4 -np 7)
mpi_test(ownership.correct_check collective_ownership --machine torus:3x3 -np 7 --check)
mpi_test(ownership.correct_check_threads collective_ownership --machine mesh:3x3 -np 9 --check --execution threads)
add_test(NAME mpi.determinism.collective_ownership COMMAND ${here}/determinism.sh ${ts} ${cown} mesh:2x4 --check)
