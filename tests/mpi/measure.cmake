# Measuring a region (docs/mpi.md): MPI_Pcontrol(1) ... MPI_Pcontrol(0), reported by --summary and
# written by --result for `touchstone sweep --program`.
touchstone_add_mpi_program(mpi_test_measured_region measured_region.c)
set(measured $<TARGET_FILE:mpi_test_measured_region>)
add_test(NAME mpi.measured_region.is_the_catalog_makespan
         COMMAND ${here}/measured_time.sh ${ts} ${measured} delta:4x4 1-lev-xor 256 ${CMAKE_CURRENT_BINARY_DIR}/measured.json)
add_test(NAME mpi.measured_region.on_a_non_power_of_two
         COMMAND ${here}/measured_time.sh ${ts} ${measured} mesh:3x5 1-lev-lin 100 ${CMAKE_CURRENT_BINARY_DIR}/measured_np15.json)
add_test(NAME mpi.measured_region.summary_sums_the_regions COMMAND ${here}/expect.sh 0
         "makespan ([0-9.]+) us, measured ([0-9.]+) us over 2 region\\(s\\)"
         ${ts} mpirun --machine mesh:2x2 --summary ${measured} 64 twice)
add_test(NAME mpi.measured_region.never_ended COMMAND ${here}/expect.sh 1
         "no measured region: rank 1 began a measured region with MPI_Pcontrol at t=[0-9.]+ us and never ended it"
         ${ts} mpirun --machine mesh:2x2 ${measured} 64 unended)
add_test(NAME mpi.measured_region.uneven COMMAND ${here}/expect.sh 1
         "no measured region: rank 0 marked 1 measured region\\(s\\) with MPI_Pcontrol and rank 1 marked 2"
         ${ts} mpirun --machine mesh:2x2 ${measured} 64 uneven)
