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
