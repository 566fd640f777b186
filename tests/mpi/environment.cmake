# Error classes, codes and strings added by the program, MPI_Comm_call_errhandler, MPI_Pcontrol and
# MPI_Type_match_size (error_classes.c).
touchstone_add_mpi_program(mpi_test_error_classes error_classes.c)
mpi_test(error_classes.mesh2x3_np5 error_classes --machine mesh:2x3 -np 5)
# Under the default handler, an added code raised with MPI_Comm_call_errhandler ends the run with
# the report naming the rank, the call and the code's string.
add_test(NAME mpi.error_classes.fatal COMMAND ${here}/expect.sh 2
         "MPI_Comm_call_errhandler on rank 1: the program raised error code [0-9]+ \\(the disk is on fire\\) \\(a code of error class [0-9]+ added by the program\\)"
         ${ts} mpirun --machine mesh:2x2 $<TARGET_FILE:mpi_test_error_classes> fatal)

# The profiling interface (PMPI_ names) and the Fortran forms of handles and statuses.
touchstone_add_mpi_program(mpi_test_profiling profiling.c)
mpi_test(profiling.mesh2x3_np5 profiling --machine mesh:2x3 -np 5)

# The tool information interface: control and performance variables, exact over a ring exchange.
touchstone_add_mpi_program(mpi_test_tool_interface tool_interface.c)
target_link_libraries(mpi_test_tool_interface PRIVATE m)
mpi_test(tool_interface.mesh3x5_np7 tool_interface --machine mesh:3x5 -np 7)
mpi_test(tool_interface.torus2x2_threads tool_interface --machine torus:2x2 --execution threads)
mpi_test(tool_interface.delta4x4 tool_interface --machine delta:4x4)
add_test(NAME mpi.tool_interface.compute_host COMMAND ${here}/expect.sh 0 "all checks passed" ${ts} mpirun
         --machine mesh:2x2 --compute host:1 $<TARGET_FILE:mpi_test_tool_interface> compute)
add_test(NAME mpi.determinism.tool_interface
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_tool_interface> mesh:2x3 -np 5)
