/* Unsafe programs (docs/debugging.md, "Checking for unsafe programs"): correct while the MPI
 * library buffers standard-mode sends and lets a collective's root leave early, deadlocked on an
 * MPI that does neither, which the standard allows. argv[1] picks the pattern:
 *   exchange: ranks 0 and 1 both MPI_Send to each other, then MPI_Recv;
 *   collective: rank 0 calls MPI_Bcast before receiving rank 1's message, rank 1 sends it first.
 * `mpirun --check` reports the deadlock with the calls that block. */
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 2 && argc == 2);
  int mine = rank, theirs = -1, shared = rank == 0 ? 42 : 0;
  if (strcmp(argv[1], "exchange") == 0 && rank <= 1) {
    MPI_Send(&mine, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
    MPI_Recv(&theirs, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(theirs, 1 - rank);
  } else if (strcmp(argv[1], "collective") == 0) {
    if (rank == 0) {
      MPI_Bcast(&shared, 1, MPI_INT, 0, MPI_COMM_WORLD);
      MPI_Recv(&theirs, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK_EQ(theirs, 1);
    } else {
      if (rank == 1) MPI_Send(&mine, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      MPI_Bcast(&shared, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    CHECK_EQ(shared, 42);
  }
  if (rank == 0) printf("races_unsafe %s: all checks passed\n", argv[1]);
  MPI_Finalize();
  return 0;
}
