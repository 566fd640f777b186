# Checking MPI programs (docs/debugging.md, "Checking MPI programs"): collectives that do not match,
# messages received as another type, what MPI_Finalize finds. Each erroneous program's report is
# asserted whole (its call names, ranks, communicator and source lines: the programs are built
# with -g); the correct program passes under --check, where any finding would end the run.
foreach(t IN ITEMS check_collectives check_types check_leaks check_correct)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra -g)
endforeach()

# NAME STATUS REPORT MPIRUN-ARGS...: the run exits with STATUS and its error report, after the rank
# and the virtual time it failed at, is exactly REPORT.
function(check_report name status report)
  string(REGEX REPLACE "([][+.*()^$?{}|\\\\])" "\\\\\\1" escaped "${report}")
  add_test(NAME mpi.check.${name} COMMAND ${here}/expect.sh ${status} "^rank [0-9]+ failed at t=[0-9.]+ us: ${escaped}$"
           ${ts} mpirun ${ARGN})
  set_tests_properties(mpi.check.${name} PROPERTIES TIMEOUT 60)
endfunction()
set(fatal "; the default error handler MPI_ERRORS_ARE_FATAL ends the run")

set(coll $<TARGET_FILE:mpi_test_check_collectives>)
set(on_5 --machine mesh:2x3 -np 5)
check_report(collective_kind 2 "MPI_Allgather on rank 3: collectives do not match on MPI_COMM_WORLD: rank 3 called \
MPI_Allgather(sendcount=1, MPI_INT, recvcount=1, MPI_INT) at check_collectives.c:15 as its 2nd collective on this \
communicator, while rank 0 called MPI_Allreduce(count=4, MPI_INT, MPI_SUM) at check_collectives.c:16 (other error)${fatal}"
             ${on_5} ${coll} kind)
check_report(collective_root 2 "MPI_Bcast on rank 0: the roots differ on the communicator of MPI_Comm_split of \
MPI_COMM_WORLD, color 0: rank 0 called MPI_Bcast(count=2, MPI_INT, root=0) at check_collectives.c:20 as its 1st \
collective on this communicator, while rank 2 (world rank 4) called MPI_Bcast(count=2, MPI_INT, root=1) at \
check_collectives.c:20 (invalid root)${fatal}" ${on_5} ${coll} root)
check_report(collective_op 2 "MPI_Allreduce on rank 2: the operators differ on MPI_COMM_WORLD: rank 2 called \
MPI_Allreduce(count=2, MPI_INT, MPI_MAX) at check_collectives.c:23 as its 2nd collective on this communicator, while \
rank 0 called MPI_Allreduce(count=2, MPI_INT, MPI_SUM) at check_collectives.c:23 (invalid reduction operation)${fatal}"
             ${on_5} ${coll} op)
check_report(collective_count 2 "MPI_Reduce on rank 1: the type signatures differ on MPI_COMM_WORLD: rank 1 called \
MPI_Reduce(count=3, MPI_INT, MPI_SUM, root=0) at check_collectives.c:25 as its 2nd collective on this communicator, \
while rank 0 called MPI_Reduce(count=4, MPI_INT, MPI_SUM, root=0) at check_collectives.c:25 (invalid count)${fatal}"
             ${on_5} ${coll} count)
check_report(collective_type 2 "MPI_Bcast on rank 2: the type signatures differ on MPI_COMM_WORLD: rank 2 called \
MPI_Bcast(count=2, MPI_FLOAT, root=0) at check_collectives.c:27 as its 2nd collective on this communicator, while \
rank 0 called MPI_Bcast(count=2, MPI_INT, root=0) at check_collectives.c:27 (invalid datatype)${fatal}"
             ${on_5} ${coll} type)
check_report(collective_order 2 "MPI_Barrier on rank 1: collectives do not match on MPI_COMM_WORLD: rank 1 called \
MPI_Barrier() at check_collectives.c:30 as its 2nd collective on this communicator, while rank 0 called \
MPI_Bcast(count=1, MPI_INT, root=0) at check_collectives.c:33 (other error)${fatal}" ${on_5} ${coll} order)
check_report(collective_gatherv 2 "MPI_Gatherv on rank 3: the type signatures differ on MPI_COMM_WORLD: rank 3 called \
MPI_Gatherv(sendcount=3, MPI_INT, root=0) at check_collectives.c:38 as its 2nd collective on this communicator, while \
root 0 called MPI_Gatherv(recvcounts={1,1,1,2,1}, MPI_INT, root=0) at check_collectives.c:38 (invalid count)${fatal}"
             ${on_5} ${coll} gatherv)
check_report(collective_nonblocking 2 "MPI_Ibcast on rank 4: collectives do not match on MPI_COMM_WORLD: rank 4 \
called MPI_Ibcast(count=1, MPI_INT, root=0) at check_collectives.c:41 as its 2nd collective on this communicator, \
while rank 0 called MPI_Bcast(count=1, MPI_INT, root=0) at check_collectives.c:42 (other error)${fatal}"
             ${on_5} ${coll} nonblocking)
check_report(collective_inter 2 "MPI_Allreduce on rank 3: collectives do not match on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 1: rank 1 (world rank 3) called \
MPI_Allreduce(count=1, MPI_INT, MPI_SUM) at check_collectives.c:48 as its 1st collective on this communicator, while rank 0 (world rank 1) \
called MPI_Barrier() at check_collectives.c:49 (other error)${fatal}" ${on_5} ${coll} inter)
check_report(collective_alltoallv 2 "MPI_Alltoallv on rank 4: the type signatures differ on MPI_COMM_WORLD: rank 2 \
sends 2 x MPI_INT to rank 4, which receives 1 x MPI_INT from it; rank 4 called MPI_Alltoallv(sendcounts={1,1,1,1,1}, \
MPI_INT, recvcounts={1,1,1,1,1}, MPI_INT) at check_collectives.c:65 as its 2nd collective on this communicator, while \
rank 2 called MPI_Alltoallv(sendcounts={1,1,1,1,2}, MPI_INT, recvcounts={1,1,1,1,1}, MPI_INT) at \
check_collectives.c:65 (invalid count)${fatal}" ${on_5} ${coll} alltoallv)
# MPI_ERRORS_RETURN: the rank that finds the mismatch gets its class back (and aborts here).
add_test(NAME mpi.check.collective_errors_return COMMAND ${here}/expect.sh 5 "^rank 2: MPI_Allreduce returned MPI_ERR_OP$"
         ${ts} mpirun ${on_5} ${coll} returns)
# Without the check, the same program's wrong collective is not named (here it ends in a deadlock).
add_test(NAME mpi.check.collective_no_check COMMAND ${here}/expect.sh 2 "deadlock"
         ${ts} mpirun ${on_5} --no-check ${coll} kind)
# The report does not depend on how the host runs the ranks.
add_test(NAME mpi.check.collective_same_output COMMAND ${here}/same_output.sh ${ts} ${on_5} ${coll} root)

set(types $<TARGET_FILE:mpi_test_check_types>)
check_report(types_recv 2 "MPI_Recv on rank 1: type signatures do not match on MPI_COMM_WORLD, tag 7: rank 0 sent \
4 x MPI_INT with MPI_Send at check_types.c:15, and rank 1 receives it as 4 x MPI_FLOAT with MPI_Recv at \
check_types.c:16 (invalid datatype)${fatal}" --machine mesh:2x2 ${types} recv)
check_report(types_irecv 2 "MPI_Wait on rank 3: type signatures do not match on MPI_COMM_WORLD, tag 1: rank 2 sent \
2 x MPI_DOUBLE with MPI_Ssend at check_types.c:19, and rank 3 receives it as 4 x MPI_INT with MPI_Irecv at \
check_types.c:21 (invalid datatype)${fatal}" --machine mesh:2x2 ${types} irecv)
check_report(types_derived 2 "MPI_Recv on rank 3: type signatures do not match on the communicator of MPI_Comm_split of \
MPI_COMM_WORLD, color 1, tag 4: rank 0 (world rank 2) sent 1 x datatype (1 x MPI_INT, 1 x MPI_DOUBLE) with \
MPI_Send at check_types.c:33, and rank 1 (world rank 3) receives it as 3 x MPI_INT with MPI_Recv at \
check_types.c:34 (invalid datatype)${fatal}" --machine mesh:2x2 ${types} derived)
check_report(types_longer 2 "MPI_Recv on rank 1: type signatures do not match on MPI_COMM_WORLD, tag 2: rank 0 sent \
4 x MPI_INT with MPI_Send at check_types.c:49, and rank 1 receives it as 1 x MPI_DOUBLE with MPI_Recv at \
check_types.c:50 (invalid datatype)${fatal}" --machine mesh:2x2 ${types} longer)
add_test(NAME mpi.check.types_errors_return COMMAND ${here}/expect.sh 6 "rank 1 called MPI_Abort\\(MPI_COMM_WORLD, error code 6\\)"
         ${ts} mpirun --machine mesh:2x2 ${types} returns)
add_test(NAME mpi.check.types_no_check COMMAND ${here}/expect.sh 0 "^$"
         ${ts} mpirun --machine mesh:2x2 --no-check ${types} recv)
add_test(NAME mpi.check.types_same_output COMMAND ${here}/same_output.sh ${ts} --machine mesh:2x2 ${types} derived)

# MPI_Finalize's findings: warnings (exit status 0), or the error of --check.
set(leaks $<TARGET_FILE:mpi_test_check_leaks>)
add_test(NAME mpi.check.leaks_warn COMMAND ${here}/expect_output.sh 0 ${here}/check_leaks.out
         ${ts} mpirun --machine mesh:2x2 -np 3 ${leaks})
check_report(leaks_error 2 "MPI_Finalize on rank 1: 8 finding(s) of the lifecycle check (--check): the communicator \
of MPI_Comm_dup of MPI_COMM_SELF at check_leaks.c:17 was never freed (MPI_Comm_free); the group made by MPI_Comm_group \
of MPI_COMM_WORLD at check_leaks.c:19 was never freed (MPI_Group_free); the datatype (3 x MPI_INT) made by \
MPI_Type_contiguous at check_leaks.c:21 was never freed (MPI_Type_free); the user operation made by MPI_Op_create at \
check_leaks.c:23 was never freed (MPI_Op_free); the buffer of 1024 bytes attached at check_leaks.c:25 was never \
detached (MPI_Buffer_detach); the request of MPI_Isend(dest=0, tag=0, MPI_COMM_WORLD) at check_leaks.c:27 was never \
completed (MPI_Wait, MPI_Test, ...); the persistent request of MPI_Send_init(dest=0, tag=1, MPI_COMM_WORLD) at \
check_leaks.c:28 was never freed (MPI_Request_free); the request of MPI_Isend(dest=0, tag=2, MPI_COMM_WORLD) at \
check_leaks.c:29 was freed while active (MPI_Request_free at check_leaks.c:30) (other error)${fatal}"
             --machine mesh:2x2 -np 3 --check ${leaks})

# Correct programs are not blamed: no error and, under --check, no finding.
set(correct check_correct)
mpi_test(check.correct_mesh3x3_np7 ${correct} --machine mesh:3x3 -np 7 --check)
mpi_test(check.correct_np2 ${correct} --machine mesh:1x2 --check)
mpi_test(check.correct_torus4x4_threads ${correct} --machine torus:4x4 --check --execution threads)
mpi_test(check.correct_switch5_mpich ${correct} --machine switch:5 --check --coll-selector mpich)
add_test(NAME mpi.determinism.check_correct COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_check_correct>
         mesh:3x4 --check)
