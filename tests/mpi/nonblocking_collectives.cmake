# Nonblocking and persistent collectives (docs/mpi.md): every MPI_Ixxx and MPI_Xxx_init with its
# results, overlapping on one and on two communicators, under generic and catalog algorithms.
foreach(t IN ITEMS nbc_all)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
endforeach()
mpi_test(nbc_all.mesh3x5_np7 nbc_all --machine mesh:3x5 -np 7)
mpi_test(nbc_all.torus4x4 nbc_all --machine torus:4x4)
mpi_test(nbc_all.torus4x4_threads nbc_all --machine torus:4x4 --execution threads)
