# One-sided communication (docs/mpi.md "One-sided communication"): windows, RMA operations and
# their synchronization, on a mesh with a rank count that is not a power of two and on a whole
# torus, each giving the same trace_hash under fibers, --perturb and threads.
foreach(t IN ITEMS rma_fence)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
  mpi_test(${t}.mesh3x5_np7 ${t} --machine mesh:3x5 -np 7)
  mpi_test(${t}.torus4x4 ${t} --machine torus:4x4)
  add_test(NAME mpi.determinism.${t} COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_${t}> mesh:3x5 -np 7)
endforeach()
