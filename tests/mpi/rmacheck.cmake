# Checks of one-sided communication (docs/debugging.md, "One-sided communication"): epochs a
# fence began, conflicting accesses (errors under --check), buffers a pending RMA operation owns,
# stores into window bytes an RMA access reached, MPI_Sendrecv's disjoint buffers. Each erroneous
# mode's report is asserted whole (call, rank, source lines: the programs are built with -g); the
# correct program passes plain and under --check, where any finding would end the run.
foreach(t IN ITEMS rmacheck_errors rmacheck_correct)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra -g)
endforeach()
set(rma_errors --machine mesh:2x3 -np 5 $<TARGET_FILE:mpi_test_rmacheck_errors>)

# NAME REPORT MODES...: mode NAME of rmacheck_errors exits with status 2 and its error report, after
# the rank and the virtual time it failed at, is exactly REPORT, in each of MODES: "check" (mpirun
# --check) and "plain" (test NAME.plain).
function(rma_report name report)
  string(REGEX REPLACE "([][+.*()^$?{}|\\\\])" "\\\\\\1" escaped "${report}")
  foreach(mode IN LISTS ARGN)
    set(test mpi.rmacheck.${name})
    set(flags --check)
    if(mode STREQUAL "plain")
      set(test mpi.rmacheck.${name}.plain)
      set(flags)
    endif()
    add_test(NAME ${test} COMMAND ${here}/expect.sh 2 "^rank [0-9]+ failed at t=[0-9.]+ us: ${escaped}$"
             ${ts} mpirun ${flags} ${rma_errors} ${name})
    set_tests_properties(${test} PROPERTIES TIMEOUT 60)
  endforeach()
endfunction()
set(win_fatal "; the window's error handler MPI_ERRORS_ARE_FATAL ends the run")
set(comm_fatal "; the default error handler MPI_ERRORS_ARE_FATAL ends the run")

rma_report(free_open "MPI_Win_free on rank 2: MPI_Win_free inside the access epoch that the last MPI_Win_fence \
began: this rank made RMA calls since that fence, and no fence completed them (RMA call outside its \
synchronization)${win_fatal}" check plain)
rma_report(lock_after_calls "MPI_Win_lock on rank 2: MPI_Win_lock inside the access epoch that MPI_Win_fence began \
(this rank made RMA calls in it): end it with a fence first (MPI_MODE_NOSUCCEED when no epoch is to follow) (RMA \
call outside its synchronization)${win_fatal}" check plain)
rma_report(lock_in_fence "MPI_Win_fence on rank 4: the previous MPI_Win_fence began an access epoch (RMA calls \
followed it before this fence, MPI-3.1 11.5.1), and MPI_Win_lock_all at rmacheck_errors.c:33 took a lock inside \
it: a passive-target epoch may not be inside an active-target one (end it with MPI_Win_fence(MPI_MODE_NOSUCCEED) \
before the lock) (RMA call outside its synchronization)${win_fatal}" check plain)
rma_report(conflict "MPI_Win_fence on rank 0: rank 2's put and rank 4's put (world ranks) both reach bytes [12, \
16) of rank 0's window in one fence epoch: conflicting accesses (MPI-3.1 11.7) (conflicting accesses to a \
window)${win_fatal}" check)
rma_report(send_get_buffer "MPI_Send on rank 2: the send buffer of MPI_Send at rmacheck_errors.c:46 reads bytes \
that the result buffer of the MPI_Get at rmacheck_errors.c:45 (to rank 0) holds, which belongs to that operation \
until it completes (the epoch's synchronization or a flush, MPI-3.1 11.3) (invalid buffer)${comm_fatal}"
           check plain)
rma_report(recv_put_origin "MPI_Recv on rank 2: the receive buffer of MPI_Recv at rmacheck_errors.c:54 takes bytes \
that the origin buffer of the MPI_Put at rmacheck_errors.c:53 (to rank 0) holds, which belongs to that operation \
until it completes (the epoch's synchronization or a flush, MPI-3.1 11.3) (invalid buffer)${comm_fatal}"
           check plain)
rma_report(recv_window "MPI_Recv on rank 0: the receive buffer of MPI_Recv at rmacheck_errors.c:66 writes bytes \
[20, 24) of rank 0's window, which rank 2's put (world rank) reaches in a fence epoch not yet ended: conflicting \
accesses (MPI-3.1 11.7) (conflicting accesses to a window)${comm_fatal}" check)
rma_report(own_get "MPI_Get on rank 0: the result buffer of MPI_Get at rmacheck_errors.c:81 takes bytes [8, 16) of \
rank 0's window, which rank 2's put (world rank) reaches in the same passive-target epoch (both held locks): \
conflicting accesses (MPI-3.1 11.7) (conflicting accesses to a window)${win_fatal}" check)
rma_report(store "MPI_Win_unlock on rank 2: bytes [0, 8) of rank 0's window, which rank 2's put (world rank) \
reached in a passive-target epoch (both held locks), changed before the epoch ended by no RMA operation: a store \
of rank 0 (or an MPI call other than RMA) into its window memory and the put: conflicting accesses (MPI-3.1 11.7) \
(conflicting accesses to a window)${win_fatal}" check)
rma_report(put_origin_store "MPI_Win_fence on rank 2: the origin buffer of the MPI_Put at rmacheck_errors.c:101 \
was written to before the operation completed (it belongs to the operation until the epoch's synchronization or a \
flush, MPI-3.1 11.3) (invalid buffer)${win_fatal}" check)
rma_report(sendrecv "MPI_Sendrecv on rank 2: the receive buffer (2 x MPI_INT) shares bytes [4, 8) of the send \
buffer (2 x MPI_INT): they must be disjoint (MPI-3.1 3.10; MPI_Sendrecv_replace sends and receives in one buffer) \
(invalid buffer)${comm_fatal}" check plain)
rma_report(two_gets "MPI_Get on rank 2: the result buffer of MPI_Get at rmacheck_errors.c:111 takes bytes that the \
result buffer of the pending MPI_Get at rmacheck_errors.c:110 (to rank 0) takes too: two gets write them \
concurrently, conflicting accesses (conflicting accesses to a window)${win_fatal}" check)

# Without --check a conflict is a warning (the run goes on), and stores are not looked for.
add_test(NAME mpi.rmacheck.conflict.warning COMMAND ${here}/expect.sh 0 "warning: rank 0: rank 2's put and rank 4's \
put \\(world ranks\\) both reach bytes \\[12, 16\\) of rank 0's window in one fence epoch: conflicting accesses \
\\(MPI-3.1 11.7\\); MPI-3.1 leaves their outcome undefined" ${ts} mpirun ${rma_errors} conflict)
add_test(NAME mpi.rmacheck.recv_window.warning COMMAND ${here}/expect.sh 0 "warning: rank 0: the receive buffer of \
MPI_Recv at rmacheck_errors.c:66 writes bytes \\[20, 24\\) of rank 0's window, which rank 2's put \\(world rank\\) \
reaches in a fence epoch not yet ended" ${ts} mpirun ${rma_errors} recv_window)
add_test(NAME mpi.rmacheck.two_gets.warning COMMAND ${here}/expect.sh 0 "warning: rank 2: the result buffer of \
MPI_Get at rmacheck_errors.c:111 takes bytes that the result buffer of the pending MPI_Get at rmacheck_errors.c:110 \
\\(to rank 0\\) takes too: two gets write them concurrently, conflicting accesses; MPI-3.1 leaves their outcome \
undefined" ${ts} mpirun ${rma_errors} two_gets)
mpi_test(rmacheck.correct rmacheck_correct --machine mesh:2x3 -np 5)
mpi_test(rmacheck.correct.check rmacheck_correct --check --machine mesh:2x3 -np 5)
add_test(NAME mpi.determinism.rmacheck_correct COMMAND ${here}/determinism.sh ${ts}
         $<TARGET_FILE:mpi_test_rmacheck_correct> mesh:2x3 -np 5 --check)
