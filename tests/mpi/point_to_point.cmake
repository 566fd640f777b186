# Point-to-point beyond the basics (docs/mpi.md): persistent requests, buffered mode, cancellation,
# matched probes, request status. Each program runs on a mesh with a rank count that is not a
# power of two and on a whole torus, and gives the same trace_hash under fibers, --perturb and
# threads.
foreach(t IN ITEMS p2p_persistent p2p_bsend p2p_cancel p2p_mprobe p2p_status)
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
