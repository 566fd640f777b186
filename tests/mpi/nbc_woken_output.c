/* Output written in a turn that its own instant woke: each even rank starts a nonblocking barrier on
 * MPI_COMM_SELF and waits for it. The barrier's task completes it at t = 0, the same instant, so the
 * rank's program goes on at t = 0 after its task's turn, which comes after every rank's first turn
 * (docs/model.md 1.3): the odd ranks' lines, written in their first turns, come first, then the even
 * ranks' in rank order (expected/nbc_woken_output.txt). A run split over processes writes them in
 * the same order (tests/distributed). `nbc_woken_output abort`: rank 0 aborts after its line, so
 * one process never runs ranks 2 and 4 past their waits, and a split run drops what they wrote
 * there, but keeps the odd ranks' lines, written before. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank % 2 == 0) {
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_SELF, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    printf("rank %d at t = %.0f us, after its own barrier\n", rank, MPI_Wtime() * 1e6);
    if (argc > 1 && !strcmp(argv[1], "abort") && rank == 0) MPI_Abort(MPI_COMM_WORLD, 3);
  } else {
    printf("rank %d at t = %.0f us, in its first turn\n", rank, MPI_Wtime() * 1e6);
  }
  MPI_Finalize();
  return 0;
}
