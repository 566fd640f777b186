# Communicators and groups (docs/mpi.md): group algebra, MPI_Comm_create_group/idup/split_type,
# names, attributes with callbacks, MPI_Info, intercommunicators with point-to-point and
# collectives, MPI-4 sessions. Included by CMakeLists.txt, which defines mpi_test.
foreach(t IN ITEMS comm_groups comm_attrs comm_info comm_inter comm_inter_nbc sessions)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
endforeach()

mpi_test(comm_groups.mesh3x5_np13 comm_groups --machine mesh:3x5 -np 13)
mpi_test(comm_groups.switch7 comm_groups --machine switch:7)
# MPI_UNIVERSE_SIZE is the machine's VP count (9 and 6), where spawns may start processes.
foreach(case "torus3x3_np7 9 --machine torus:3x3 -np 7" "threads 6 --machine mesh:2x3 -np 5 --execution threads")
  separate_arguments(args UNIX_COMMAND "${case}")
  list(POP_FRONT args name universe)
  add_test(NAME mpi.comm_attrs.${name} COMMAND ${here}/expect.sh 0 "all checks passed"
           ${ts} mpirun ${args} $<TARGET_FILE:mpi_test_comm_attrs> ${universe})
  set_tests_properties(mpi.comm_attrs.${name} PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
endforeach()
mpi_test(comm_info.mesh2x3_np5 comm_info --machine mesh:2x3 -np 5)
# Intercommunicators: groups of 3 and 4, 5 and 6 ranks.
mpi_test(comm_inter.mesh2x4_np7 comm_inter --machine mesh:2x4 -np 7)
mpi_test(comm_inter.switch8 comm_inter --machine switch:8)
mpi_test(comm_inter.torus3x3 comm_inter --machine torus:3x3)
mpi_test(comm_inter.cm5_np7_threads comm_inter --machine cm5:32 -np 7 --execution threads)
# Nonblocking and persistent collectives and MPI_Alltoallw on intercommunicators.
mpi_test(comm_inter_nbc.mesh2x4_np7 comm_inter_nbc --machine mesh:2x4 -np 7)
mpi_test(comm_inter_nbc.mesh2x4_np7_threads comm_inter_nbc --machine mesh:2x4 -np 7 --execution threads)
mpi_test(comm_inter_nbc.torus3x3 comm_inter_nbc --machine torus:3x3)
# Sessions, without MPI_Init and beside it.
mpi_test(sessions.mesh3x5_np7 sessions --machine mesh:3x5 -np 7)
add_test(NAME mpi.sessions.torus2x2_world COMMAND ${here}/expect.sh 0 "all checks passed"
         ${ts} mpirun --machine torus:2x2 $<TARGET_FILE:mpi_test_sessions> world)
mpi_test(sessions.switch5_threads sessions --machine switch:5 --execution threads)
add_test(NAME mpi.sessions.null_session COMMAND ${here}/expect.sh nonzero
         "MPI_Session_get_num_psets on rank 0: the session is MPI_SESSION_NULL \\(invalid session\\)"
         ${ts} mpirun --machine mesh:2x2 -np 3 $<TARGET_FILE:mpi_test_sessions> null)
add_test(NAME mpi.sessions.used_after_the_last_session COMMAND ${here}/expect.sh nonzero
         "MPI_Comm_size called after the last MPI_Session_finalize on rank 0"
         ${ts} mpirun --machine mesh:2x2 -np 3 $<TARGET_FILE:mpi_test_sessions> after)

# Determinism: the same trace_hash under fibers, --perturb and --execution threads.
add_test(NAME mpi.determinism.comm_inter
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_comm_inter> mesh:7x1)
add_test(NAME mpi.determinism.comm_inter_nbc
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_comm_inter_nbc> mesh:2x4 -np 7)
add_test(NAME mpi.determinism.comm_groups
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_comm_groups> torus:2x3)
add_test(NAME mpi.determinism.sessions
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_sessions> mesh:2x3 -np 5)
