/* Deadlocks through nonblocking collectives, reported in MPI's terms (docs/debugging.md): a rank
 * waiting for an MPI_Ibcast names it with its arguments and line, the collective's own progress
 * names the ranks it waits for, and the wait-for cycle goes through it (source_lines.cmake asserts
 * the lines). The correct mode runs the same collectives to completion. Run on 5 ranks.
 *   nbc_deadlock world|split|correct */
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  const char* mode = argc > 1 ? argv[1] : "correct";
  const int correct = strcmp(mode, "correct") == 0;
  MPI_Comm even; /* world ranks 0, 2, 4 are its ranks 0, 1, 2; 1 and 3 another communicator's */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &even);
  int v = rank == 0 ? 42 : -1, w = rank < 2 ? 7 : -1;
  MPI_Request r;
  if (!strcmp(mode, "world") || correct) {
    /* The root waits for a message no rank sends before it joins the broadcast. */
    if (rank == 0 && !correct) MPI_Recv(&v, 1, MPI_INT, 2, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(v, 42);
  }
  if (!strcmp(mode, "split") || correct) {
    /* The same on a sub-communicator: its root, world rank 0, waits for its rank 2 (world rank 4). */
    if (rank == 0 && !correct) MPI_Recv(&w, 1, MPI_INT, 2, 5, even, MPI_STATUS_IGNORE);
    MPI_Ibcast(&w, 1, MPI_INT, 0, even, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(w, 7);
  }
  MPI_Comm_free(&even);
  return all_checks_passed("nbc_deadlock");
}
