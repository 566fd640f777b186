# Process topologies and neighborhood collectives (docs/mpi.md, "Process topologies"): Cartesian
# grids on 12 ranks, graphs and distributed graphs on 7, neighborhood collectives on both, rank
# placement on a 4x4 mesh and torus, error classes, and determinism.
foreach(t IN ITEMS topo_cart topo_graph topo_neighbor topo_map topo_errors)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
endforeach()

mpi_test(topo_cart.mesh3x4 topo_cart --machine mesh:3x4)
mpi_test(topo_cart.torus4x4_np12 topo_cart --machine torus:4x4 -np 12)
mpi_test(topo_cart.switch12 topo_cart --machine switch:12)
mpi_test(topo_graph.torus3x3_np7 topo_graph --machine torus:3x3 -np 7)
mpi_test(topo_graph.cm5_np7 topo_graph --machine cm5:32 -np 7)
mpi_test(topo_neighbor.mesh3x4 topo_neighbor --machine mesh:3x4)
mpi_test(topo_neighbor.torus3x3_np7 topo_neighbor --machine torus:3x3 -np 7)
mpi_test(topo_neighbor.switch5 topo_neighbor --machine switch:5)
# --no-check: the truncated neighbour block is the body's MPI_ERR_TRUNCATE here; the consistency check
# would find it first, at entry, as MPI_ERR_COUNT (tests/mpi/collcheck.cmake).
mpi_test(topo_errors.mesh3x3_np7 topo_errors --machine mesh:3x3 -np 7 --no-check)
# reorder=1 on the 4x4 mesh and torus: the exact mapping, every Cartesian neighbour one hop away.
add_test(NAME mpi.topo_map.mesh4x4 COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine mesh:4x4 $<TARGET_FILE:mpi_test_topo_map> mesh)
add_test(NAME mpi.topo_map.torus4x4 COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine torus:4x4 $<TARGET_FILE:mpi_test_topo_map> torus)
# A query on a communicator without a topology, under MPI_ERRORS_ARE_FATAL: the report names it.
add_test(NAME mpi.topo_errors.fatal COMMAND ${here}/expect.sh 2
         "MPI_Cart_shift on rank 0: the communicator has no Cartesian topology \\(invalid topology\\)"
         ${ts} mpirun --machine mesh:2x2 $<TARGET_FILE:mpi_test_topo_errors> fatal)
# A null array argument is named as the standard names it.
add_test(NAME mpi.topo_errors.fatal_null_array COMMAND ${here}/expect.sh 2
         "MPI_Cart_create on rank 0: dims, an array of 2 entries, is a null pointer \\(invalid argument\\)"
         ${ts} mpirun --machine mesh:2x2 $<TARGET_FILE:mpi_test_topo_errors> fatal_dims)
add_test(NAME mpi.determinism.topo_neighbor COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_topo_neighbor> mesh:3x4)
add_test(NAME mpi.determinism.topo_map COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_topo_map> mesh:4x4)
