# One-sided communication (docs/mpi.md "One-sided communication"): windows, RMA operations and
# their synchronization, on a mesh with a rank count that is not a power of two and on a whole
# torus, each giving the same trace_hash under fibers, --perturb and threads.
foreach(t IN ITEMS rma_fence rma_passive rma_windows rma_checks)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
  mpi_test(${t}.mesh3x5_np7 ${t} --machine mesh:3x5 -np 7)
  mpi_test(${t}.torus4x4 ${t} --machine torus:4x4)
  add_test(NAME mpi.determinism.${t} COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_${t}> mesh:3x5 -np 7)
endforeach()
# A dynamic window's target attaches or detaches memory while an origin puts into it, with no message
# between them: the order of the two calls decides (rma_dynamic_race.c; split over processes in
# tests/CMakeLists.txt).
touchstone_add_mpi_program(mpi_test_rma_dynamic_race rma_dynamic_race.c)
foreach(mode detach_before_put put_before_attach)
  add_test(NAME mpi.rma_dynamic_race.${mode} COMMAND ${here}/expect.sh 2
           "rank [01] failed at t=[0-9.]+ us: MPI_Put on rank [01]: address range .* is not attached to rank 3's"
           ${ts} mpirun --machine mesh:1x4 $<TARGET_FILE:mpi_test_rma_dynamic_race> ${mode})
endforeach()
foreach(mode put_before_detach attach_before_put attach_before_put_returns)
  add_test(NAME mpi.rma_dynamic_race.${mode} COMMAND ${here}/expect.sh 0 "^rank [01] put into rank 3$"
           ${ts} mpirun --machine mesh:1x4 $<TARGET_FILE:mpi_test_rma_dynamic_race> ${mode})
endforeach()
# The window returns the error to the call, and the program goes on.
add_test(NAME mpi.rma_dynamic_race.put_before_attach_returns COMMAND ${here}/expect.sh 0
         "^rank 0's put into rank 3 returned MPI_ERR_RMA_RANGE$"
         ${ts} mpirun --machine mesh:1x4 $<TARGET_FILE:mpi_test_rma_dynamic_race> put_before_attach_returns)

# The operations' virtual times, computed by hand in rma_time.c from docs/model.md 7.1.
touchstone_add_mpi_program(mpi_test_rma_time rma_time.c)
target_link_libraries(mpi_test_rma_time PRIVATE m)
set(rma_time_machine mesh:2x1,send_us=2,recv_us=3,send_ns_per_byte=0,recv_ns_per_byte=0,hop_ns=100)
string(APPEND rma_time_machine ,link_ns_per_byte=1,inject_ns_per_byte=1,eject_ns_per_byte=1,packet=4096+0)
string(APPEND rma_time_machine ,reduce_int_ns_per_byte=5)
mpi_test(rma_time rma_time --machine ${rma_time_machine})
# Paper 003's random scheduling as an MPI program gives the catalog's schedule and time where the
# costs agree, and the same trace_hash under --perturb and threads (rma_random_scheduling.sh).
if(TOUCHSTONE_BUILD_EXAMPLES)
  add_test(NAME mpi.rma_random_scheduling COMMAND ${here}/expect.sh 0 "same schedule, same time"
           ${here}/rma_random_scheduling.sh ${ts} $<TARGET_FILE:example_mpi_random_scheduling>
           ${PROJECT_SOURCE_DIR}/examples/mpi_random_scheduling.csv)
endif()
# Conflicting accesses are a warning unless the window's info asks for errors.
add_test(NAME mpi.rma_checks.warning COMMAND ${here}/expect.sh 0
         "warning: rank 0: rank 1's put and rank 2's put \\(world ranks\\) both reach bytes \\[0, 4\\) of rank 0's window"
         ${ts} mpirun --machine mesh:3x5 -np 7 $<TARGET_FILE:mpi_test_rma_checks> warn)
