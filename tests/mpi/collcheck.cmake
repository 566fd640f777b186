# Collective consistency of intercommunicator, neighborhood and persistent v-collectives
# (docs/debugging.md, "Collectives that do not match"). Each erroneous program's report is asserted
# whole (call names and arguments, ranks, communicator, source lines: the programs are built with
# -g); the correct program passes under --check, where any finding would end the run.
foreach(t IN ITEMS collcheck collcheck_correct)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  # -O0: each call keeps its own line (optimized code may merge alike calls of two modes).
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra -g -O0)
endforeach()

# NAME STATUS REPORT MPIRUN-ARGS...: the run exits with STATUS and its error report, after the rank
# and the virtual time it failed at, is exactly REPORT.
function(collcheck_report name status report)
  string(REGEX REPLACE "([][+.*()^$?{}|\\\\])" "\\\\\\1" escaped "${report}")
  add_test(NAME mpi.collcheck.${name}
           COMMAND ${here}/expect.sh ${status} "^rank [0-9]+ failed at t=[0-9.]+ us: ${escaped}$" ${ts} mpirun ${ARGN})
  set_tests_properties(mpi.collcheck.${name} PROPERTIES TIMEOUT 60)
endfunction()
set(fatal "; the default error handler MPI_ERRORS_ARE_FATAL ends the run")
set(prog $<TARGET_FILE:mpi_test_collcheck>)

# Intercommunicators between the 3 even and the 2 odd ranks: the roots (one MPI_ROOT in the root's
# group, MPI_PROC_NULL in the rest of it, the other group naming the root's rank), operators, and
# the blocks between the groups (the root's against each member's, pairwise otherwise).
set(on_5 --machine mesh:2x3 -np 5)
# Neighborhood collectives on a periodic ring of 7 and a distributed graph (rank i sends to i + 1
# and i + 3): each block against the block the neighbour receives it in; persistent v-collectives
# at their MPI_Start, their counts filled after the init.
set(on_7 --machine mesh:3x3 -np 7)
collcheck_report(inter_named 2 "MPI_Bcast on rank 0: the roots differ on the communicator of MPI_Intercomm_create of \
the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: one group names root 1, while rank 0 of the other \
passes MPI_ROOT; rank 0 called MPI_Bcast(count=2, MPI_INT, root=MPI_ROOT) at collcheck.c:30 as its 1st collective on \
this communicator, while rank 0 (world rank 1) of the remote group called MPI_Bcast(count=2, MPI_INT, root=1) at \
collcheck.c:30 (invalid root)${fatal}" ${on_5} ${prog} inter_named)
collcheck_report(inter_two_roots 2 "MPI_Bcast on rank 0: the roots differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: two members of one group pass \
MPI_ROOT; rank 0 called MPI_Bcast(count=2, MPI_INT, root=MPI_ROOT) at collcheck.c:32 as its 1st collective on this \
communicator, while rank 2 (world rank 4) called MPI_Bcast(count=2, MPI_INT, root=MPI_ROOT) at collcheck.c:32 \
(invalid root)${fatal}" ${on_5} ${prog} inter_two_roots)
collcheck_report(inter_no_root 2 "MPI_Bcast on rank 2: the roots differ on the communicator of MPI_Intercomm_create \
of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: no member of the group that passes MPI_PROC_NULL \
passes MPI_ROOT; rank 1 (world rank 2) called MPI_Bcast(count=2, MPI_INT, root=MPI_PROC_NULL) at collcheck.c:34 as \
its 1st collective on this communicator, while rank 0 (world rank 1) of the remote group called MPI_Bcast(count=2, \
MPI_INT, root=0) at collcheck.c:34 (invalid root)${fatal}" ${on_5} ${prog} inter_no_root)
collcheck_report(inter_both_ranks 2 "MPI_Bcast on rank 4: the roots differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: both groups name a rank of \
the other group as the root; rank 2 (world rank 4) called MPI_Bcast(count=2, MPI_INT, root=0) at collcheck.c:36 as \
its 1st collective on this communicator, while rank 0 (world rank 1) of the remote group called MPI_Bcast(count=2, \
MPI_INT, root=0) at collcheck.c:36 (invalid root)${fatal}" ${on_5} ${prog} inter_both_ranks)
collcheck_report(inter_both_root_groups 2 "MPI_Bcast on rank 4: the roots differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: both groups pass MPI_ROOT or \
MPI_PROC_NULL; rank 2 (world rank 4) called MPI_Bcast(count=2, MPI_INT, root=MPI_PROC_NULL) at collcheck.c:38 as its \
1st collective on this communicator, while rank 0 (world rank 1) of the remote group called MPI_Bcast(count=2, \
MPI_INT, root=MPI_PROC_NULL) at collcheck.c:38 (invalid root)${fatal}" ${on_5} ${prog} inter_both_root_groups)
collcheck_report(inter_mixed 2 "MPI_Bcast on rank 3: the roots differ on the communicator of MPI_Intercomm_create of \
the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 1: one group passes both MPI_ROOT or MPI_PROC_NULL and a \
rank of the other group; rank 1 (world rank 3) called MPI_Bcast(count=2, MPI_INT, root=MPI_PROC_NULL) at \
collcheck.c:40 as its 1st collective on this communicator, while rank 0 (world rank 1) called MPI_Bcast(count=2, \
MPI_INT, root=0) at collcheck.c:40 (invalid root)${fatal}" ${on_5} ${prog} inter_mixed)
collcheck_report(inter_gather 2 "MPI_Gather on rank 0: the type signatures differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: rank 0 called \
MPI_Gather(recvcount=1, MPI_INT, root=MPI_ROOT) at collcheck.c:42 as its 1st collective on this communicator, while \
rank 1 (world rank 3) of the remote group called MPI_Gather(sendcount=2, MPI_INT, root=0) at collcheck.c:42 (invalid \
count)${fatal}" ${on_5} ${prog} inter_gather)
collcheck_report(inter_reduce_op 2 "MPI_Reduce on rank 3: the operators differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 1: rank 1 (world rank 3) called \
MPI_Reduce(count=2, MPI_INT, MPI_MAX, root=0) at collcheck.c:44 as its 1st collective on this communicator, while \
rank 0 (world rank 1) called MPI_Reduce(count=2, MPI_INT, MPI_SUM, root=0) at collcheck.c:44 (invalid reduction \
operation)${fatal}" ${on_5} ${prog} inter_reduce_op)
collcheck_report(inter_allreduce 2 "MPI_Allreduce on rank 4: the type signatures differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: rank 2 (world rank 4) called \
MPI_Allreduce(count=2, MPI_INT, MPI_SUM) at collcheck.c:46 as its 1st collective on this communicator, while rank 0 \
(world rank 1) of the remote group called MPI_Allreduce(count=3, MPI_INT, MPI_SUM) at collcheck.c:46 (invalid \
count)${fatal}" ${on_5} ${prog} inter_allreduce)
collcheck_report(inter_allgatherv 2 "MPI_Allgatherv on rank 4: the type signatures differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: rank 2 (world rank 4) sends 1 \
x MPI_INT to rank 0 (world rank 1) of the remote group, which receives 2 x MPI_INT from it; rank 2 (world rank 4) \
called MPI_Allgatherv(sendcount=1, MPI_INT, recvcounts={1,1}, MPI_INT) at collcheck.c:49 as its 1st collective on \
this communicator, while rank 0 (world rank 1) of the remote group called MPI_Allgatherv(sendcount=1, MPI_INT, \
recvcounts={1,1,2}, MPI_INT) at collcheck.c:49 (invalid count)${fatal}" ${on_5} ${prog} inter_allgatherv)
collcheck_report(inter_reduce_scatter 2 "MPI_Reduce_scatter on rank 4: the type signatures differ on the \
communicator of MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: rank 2 (world \
rank 4) called MPI_Reduce_scatter(recvcounts={2,2,2}, MPI_INT, MPI_SUM) at collcheck.c:52 as its 1st collective on \
this communicator, while rank 0 (world rank 1) of the remote group called MPI_Reduce_scatter(recvcounts={2,2}, \
MPI_INT, MPI_SUM) at collcheck.c:52 (invalid count)${fatal}" ${on_5} ${prog} inter_reduce_scatter)
collcheck_report(inter_ialltoall 2 "MPI_Ialltoall on rank 2: the type signatures differ on the communicator of \
MPI_Intercomm_create of the communicator of MPI_Comm_split of MPI_COMM_WORLD, color 0: rank 0 (world rank 1) of the \
remote group sends 1 x MPI_INT to rank 1 (world rank 2), which receives 1 x MPI_FLOAT from it; rank 1 (world rank 2) \
called MPI_Ialltoall(sendcount=1, MPI_INT, recvcount=1, MPI_FLOAT) at collcheck.c:55 as its 1st collective on this \
communicator, while rank 0 (world rank 1) of the remote group called MPI_Ialltoall(sendcount=1, MPI_INT, \
recvcount=1, MPI_INT) at collcheck.c:55 (invalid datatype)${fatal}" ${on_5} ${prog} inter_ialltoall)
collcheck_report(cart_alltoall 2 "MPI_Neighbor_alltoall on rank 2: the type signatures differ on the communicator of \
MPI_Cart_create of MPI_COMM_WORLD: rank 3 sends 2 x MPI_INT to rank 2, which receives 1 x MPI_INT from it; rank 2 \
called MPI_Neighbor_alltoall(sendcount=1, MPI_INT, recvcount=1, MPI_INT) at collcheck.c:73 as its 1st collective on \
this communicator, while rank 3 called MPI_Neighbor_alltoall(sendcount=2, MPI_INT, recvcount=1, MPI_INT) at \
collcheck.c:73 (invalid count)${fatal}" ${on_7} ${prog} cart_alltoall)
collcheck_report(cart_allgather 2 "MPI_Neighbor_allgather on rank 6: the type signatures differ on the communicator \
of MPI_Cart_create of MPI_COMM_WORLD: rank 6 sends 1 x MPI_INT to rank 5, which receives 1 x MPI_FLOAT from it; rank \
6 called MPI_Neighbor_allgather(sendcount=1, MPI_INT, recvcount=1, MPI_INT) at collcheck.c:75 as its 1st \
collective on this communicator, while rank 5 called MPI_Neighbor_allgather(sendcount=1, MPI_INT, recvcount=1, \
MPI_FLOAT) at collcheck.c:75 (invalid datatype)${fatal}" ${on_7} ${prog} cart_allgather)
collcheck_report(graph_alltoallv 2 "MPI_Neighbor_alltoallv on rank 4: the type signatures differ on the communicator \
of MPI_Dist_graph_create_adjacent of MPI_COMM_WORLD: rank 1 sends 1 x MPI_INT to rank 4, which receives 2 x MPI_INT \
from it; rank 4 called MPI_Neighbor_alltoallv(sendcounts={1,1}, MPI_INT, recvcounts={1,2}, MPI_INT) at \
collcheck.c:78 as its 1st collective on this communicator, while rank 1 called \
MPI_Neighbor_alltoallv(sendcounts={1,1}, MPI_INT, recvcounts={1,1}, MPI_INT) at collcheck.c:78 (invalid \
count)${fatal}" ${on_7} ${prog} graph_alltoallv)
collcheck_report(graph_alltoallv_init 2 "MPI_Start on rank 4: the type signatures differ on the communicator of \
MPI_Dist_graph_create_adjacent of MPI_COMM_WORLD: rank 1 sends 1 x MPI_INT to rank 4, which receives 2 x MPI_INT \
from it; rank 4 called MPI_Neighbor_alltoallv_init(sendcounts={1,1}, MPI_INT, recvcounts={1,2}, MPI_INT) at \
collcheck.c:82 and started it the 1st time with MPI_Start at collcheck.c:85, while rank 1 called \
MPI_Neighbor_alltoallv_init(sendcounts={1,1}, MPI_INT, recvcounts={1,1}, MPI_INT) at collcheck.c:82 (invalid \
count)${fatal}" ${on_7} ${prog} graph_alltoallv_init)
collcheck_report(allgatherv_init 2 "MPI_Start on rank 2: the counts differ on MPI_COMM_WORLD: rank 2 called \
MPI_Allgatherv_init(sendcount=1, MPI_INT, recvcounts={1,1,1,1,2,1,1}, MPI_INT) at collcheck.c:108 and started it the \
1st time with MPI_Start at collcheck.c:111, while rank 1 called MPI_Allgatherv_init(sendcount=1, MPI_INT, \
recvcounts={1,1,1,1,1,1,1}, MPI_INT) at collcheck.c:108 (invalid count)${fatal}" ${on_7} ${prog} allgatherv_init)
# The block a rank sends itself (MPI_Alltoallw; a Cartesian dimension of one process) against the one it
# receives from itself, on that rank.
collcheck_report(alltoallw_self 2 "MPI_Alltoallw on rank 3: the block the rank sends itself (2 x MPI_INT) and the \
block it receives (1 x MPI_INT) differ in type signature (message truncated)${fatal}" ${on_7} ${prog} alltoallw_self)
collcheck_report(self_cart 2 "MPI_Neighbor_alltoallv on rank 4: the block the rank sends itself (3 x MPI_INT) and \
the block it receives (4 x MPI_INT) differ in type signature (message truncated)${fatal}" ${on_7} ${prog} self_cart)
# The report does not depend on how the host runs the ranks.
add_test(NAME mpi.collcheck.same_output COMMAND ${here}/same_output.sh ${ts} ${on_7} ${prog} graph_alltoallv)
# Without the check the longer block is found only when it arrives, as a truncation that does not name
# the call of its sender.
add_test(NAME mpi.collcheck.no_check COMMAND ${here}/expect.sh 2 "truncated"
         ${ts} mpirun ${on_7} --no-check ${prog} cart_alltoall)

# Correct programs are not blamed: no error and, under --check, no finding.
mpi_test(collcheck.correct_mesh3x3_np7 collcheck_correct --machine mesh:3x3 -np 7 --check)
mpi_test(collcheck.correct_np5_threads collcheck_correct --machine torus:3x3 -np 5 --check --execution threads)
mpi_test(collcheck.correct_switch7_mpich collcheck_correct --machine switch:7 --check --coll-selector mpich)
add_test(NAME mpi.determinism.collcheck_correct COMMAND ${here}/determinism.sh ${ts}
         $<TARGET_FILE:mpi_test_collcheck_correct> mesh:3x3 --check)
