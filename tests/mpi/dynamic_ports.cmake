# Establishing communication (MPI-3.1 10.4, dynamic_ports.c): ports, MPI_Comm_accept and
# MPI_Comm_connect between the halves of the world, in both orders and on two ports at once, the
# name service and its errors, MPI_Comm_disconnect. Included by CMakeLists.txt, which defines here
# and ts.
touchstone_add_mpi_program(mpi_test_dynamic_ports dynamic_ports.c)
target_compile_options(mpi_test_dynamic_ports PRIVATE -Wall -Wextra)

mpi_test(dynamic_ports.mesh2x2 dynamic_ports --machine mesh:2x2)
mpi_test(dynamic_ports.mesh3x3_np7 dynamic_ports --machine mesh:3x3 -np 7)
mpi_test(dynamic_ports.torus2x3_np5 dynamic_ports --machine torus:2x3 -np 5)
mpi_test(dynamic_ports.switch2_np2 dynamic_ports --machine switch:2)
mpi_test(dynamic_ports.mesh2x4_threads dynamic_ports --machine mesh:2x4 --execution threads)

# The same trace_hash under fibers, --perturb and --execution threads.
add_test(NAME mpi.determinism.dynamic_ports
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_dynamic_ports> mesh:2x3 -np 6)

# Under MPI_ERRORS_ARE_FATAL, an accept on a port never opened ends the run with a report naming the
# call, the rank and the port.
add_test(NAME mpi.dynamic_ports.fatal
         COMMAND ${here}/expect.sh 2 "MPI_Comm_accept on rank 0: port 'touchstone-port:0:5' is not open"
         ${ts} mpirun --machine mesh:2x2 -np 3 $<TARGET_FILE:mpi_test_dynamic_ports> fatal)
# A connect that no accept answers is a deadlock, reported in MPI's terms: the blocked call and the
# unreceived request to the port (with its source line where the program has debug information:
# the sanitized builds).
add_test(NAME mpi.dynamic_ports.unaccepted
         COMMAND ${here}/expect.sh 2 "rank 2 blocked since t=[0-9.]+ us in MPI_Comm_connect on MPI_COMM_SELF( at dynamic_ports.c:[0-9]+)?
(.*\n)*  MPI_Comm_connect's request to port 'touchstone-port:0:0' from rank 2 to rank 0, "
         ${ts} mpirun --machine mesh:2x2 -np 3 $<TARGET_FILE:mpi_test_dynamic_ports> unaccepted)
set_tests_properties(mpi.dynamic_ports.fatal mpi.dynamic_ports.unaccepted PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
