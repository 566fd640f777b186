/* A harmful race (docs/debugging.md, "Harmful and harmless races"): ranks 1 and 2 send their rank
 * to rank 0, which receives them with MPI_ANY_SOURCE and prints the first minus the second. The
 * result depends on which message comes first: the run completes either way, but another match
 * prints another line, so `mpirun --explore` (or --races=error) calls the race harmful and exits
 * with status 3. */
#include "check.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  if (rank == 0) {
    int first = 0, second = 0;
    MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&second, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("races_harmful: first minus second is %d; all checks passed\n", first - second);
  } else if (rank <= 2) {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
