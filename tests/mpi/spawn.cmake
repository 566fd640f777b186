# Starting processes (MPI-3.1 10.3, spawn.c): MPI_Comm_spawn and MPI_Comm_spawn_multiple on the
# machine's VPs beyond -np, talking to their parents, MPI_APPNUM, MPI_UNIVERSE_SIZE and the errors.
# Included by CMakeLists.txt, which defines here, ts and mpi_test.
touchstone_add_mpi_program(mpi_test_spawn spawn.c)
target_compile_options(mpi_test_spawn PRIVATE -Wall -Wextra -Wno-discarded-qualifiers)

mpi_test(spawn.mesh3x3_np4 spawn --machine mesh:3x3 -np 4)
mpi_test(spawn.torus4x4_np7 spawn --machine torus:4x4 -np 7)
mpi_test(spawn.switch8_np1 spawn --machine switch:8 -np 1)
mpi_test(spawn.mesh3x3_threads spawn --machine mesh:3x3 -np 4 --execution threads)

# The same trace_hash under fibers, --perturb and --execution threads.
add_test(NAME mpi.determinism.spawn COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_spawn> mesh:3x3 -np 4)

# A spawned process that returns without MPI_Init leaves its parents waiting in MPI_Comm_spawn: the
# deadlock report names the call and the finished process it waits for.
add_test(NAME mpi.spawn.noinit
         COMMAND ${here}/expect.sh 2 "rank 0 waits in MPI_Comm_spawn on MPI_COMM_WORLD( at spawn.c:[0-9]+)? for rank\\(s\\) 2, finished"
         ${ts} mpirun --machine mesh:2x2 -np 2 $<TARGET_FILE:mpi_test_spawn> spawn-noinit)
# A spawned process's exit status is the job's.
add_test(NAME mpi.spawn.status
         COMMAND ${here}/expect.sh 3 "spawned process 2 \\(rank 0 of its MPI_COMM_WORLD, [^)]*\\) exited with status 3"
         ${ts} mpirun --machine mesh:2x2 -np 2 $<TARGET_FILE:mpi_test_spawn> spawn-status)
# No VP left for it: MPI_ERR_SPAWN, fatal by default, saying why.
add_test(NAME mpi.spawn.no_free_vp
         COMMAND ${here}/expect.sh nonzero "MPI_Comm_spawn.*1 process\\(es\\) cannot be started: the machine has 4 processors and 4 of them run processes"
         ${ts} mpirun --machine mesh:2x2 $<TARGET_FILE:mpi_test_spawn> spawn-status)
set_tests_properties(mpi.spawn.noinit mpi.spawn.status mpi.spawn.no_free_vp PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
