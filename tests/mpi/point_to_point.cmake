# Point-to-point beyond the basics (docs/mpi.md): persistent requests, buffered mode and MPI-4.1's
# flushes of it, cancellation, matched probes, request status, MPI-4.0's MPI_Isendrecv(_replace) and
# partitioned communication. Each
# program runs on a mesh with a rank count that is not a power of two and on a whole torus, and gives
# the same trace_hash under fibers, --perturb and threads.
foreach(t IN ITEMS p2p_persistent p2p_bsend p2p_bsend_flush p2p_cancel p2p_mprobe p2p_status p2p_isendrecv
               p2p_partitioned)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
  mpi_test(${t}.mesh3x5_np7 ${t} --machine mesh:3x5 -np 7)
  mpi_test(${t}.torus4x4 ${t} --machine torus:4x4)
  add_test(NAME mpi.determinism.${t} COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_${t}> mesh:3x5)
endforeach()
# A buffered send's virtual time: the send's, plus the copy into the buffer at the machine's copy costs.
add_test(NAME mpi.p2p_bsend.copy_cost COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine mesh:3x5,copy_ns_per_byte=2,copy_ns_per_piece=50 -np 7
         $<TARGET_FILE:mpi_test_p2p_bsend> 2000 50000)
# The Delta preset copies at 8.106 ns per byte and 2.828 us per piece (machines/src/delta.cpp).
add_test(NAME mpi.p2p_bsend.copy_cost_delta COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine delta:4x4 $<TARGET_FILE:mpi_test_p2p_bsend> 8106 2828000)

# MPI_Isendrecv under --check (no request freed while active there; sends synchronous, receive
# buffers owned), and its request in MPI_Finalize's, deadlock and buffer reports, each asserted
# whole with its source lines (the program is built with -g).
target_compile_options(mpi_test_p2p_isendrecv PRIVATE -g)
set(isendrecv $<TARGET_FILE:mpi_test_p2p_isendrecv>)
add_test(NAME mpi.p2p_isendrecv.check_mesh3x5_np7 COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine mesh:3x5 -np 7 --check ${isendrecv} checked)
add_test(NAME mpi.p2p_isendrecv.check_torus4x4_threads COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine torus:4x4 --check --execution threads ${isendrecv} checked)
set(pair "MPI_Isendrecv\\(dest=0, sendtag=5, source=MPI_PROC_NULL, recvtag=6, MPI_COMM_WORLD\\) at p2p_isendrecv.c:481")
add_test(NAME mpi.p2p_isendrecv.leak COMMAND ${here}/expect_lines.sh 0
         "touchstone mpirun: warning: rank 1 at MPI_Finalize: the request of ${pair} was never completed \
\\(MPI_Wait, MPI_Test, ...\\)"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 ${isendrecv} leak)
add_test(NAME mpi.p2p_isendrecv.deadlock COMMAND ${here}/expect_lines.sh 2
         "  rank 0 waits in MPI_Wait at p2p_isendrecv.c:489 for MPI_Isendrecv\\(dest=1, sendtag=7, source=1, \
recvtag=8, MPI_COMM_WORLD\\) at p2p_isendrecv.c:488 for rank 1"
         "  a message from rank 1 to rank 0 on MPI_COMM_WORLD, tag 7, 4 bytes, sent by MPI_Isendrecv at \
p2p_isendrecv.c:488, arrived t=[0-9.]+ us \\(the receive wants tag 8\\)"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 ${isendrecv} deadlock)
add_test(NAME mpi.p2p_isendrecv.owned_send_buffer COMMAND ${here}/expect_lines.sh 2
         "rank 0 failed at t=[0-9.]+ us: MPI_Wait on rank 0: the send buffer \\(16 bytes\\) of MPI_Isendrecv\\(dest=1, \
tag=3, MPI_COMM_WORLD\\) at p2p_isendrecv.c:496 was written while the send was pending, found when MPI_Wait at \
p2p_isendrecv.c:498 completed it \\(a nonblocking send owns its buffer until it completes\\) \\(invalid buffer\\); \
the default error handler MPI_ERRORS_ARE_FATAL ends the run"
         -- ${ts} mpirun --machine mesh:2x2 -np 3 ${isendrecv} owned)
set_tests_properties(mpi.p2p_isendrecv.check_mesh3x5_np7 mpi.p2p_isendrecv.check_torus4x4_threads
                     PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
set_tests_properties(mpi.p2p_isendrecv.leak mpi.p2p_isendrecv.deadlock mpi.p2p_isendrecv.owned_send_buffer
                     PROPERTIES TIMEOUT 60)
