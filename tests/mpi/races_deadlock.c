/* A race whose other outcome is a deadlock (docs/debugging.md): ranks 1 and 2 each send one
 * message to rank 0, which receives one with MPI_ANY_SOURCE and then one from the rank given as
 * argv[1]. When the wildcard takes the message of that very rank, the second receive waits for a
 * message that never comes while the other rank's message is never received. With argv[1] = 2 the
 * run completes (rank 1 is nearer and wins) and exploring names the deadlock; with argv[1] = 1 the
 * run itself deadlocks, the race report names the unreceived message as the alternative, and
 * exploring from the failed run finds the match that completes. */
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3 && argc == 2);
  const int second_source = atoi(argv[1]);
  if (rank == 0) {
    int a = 0, b = 0;
    MPI_Recv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&b, 1, MPI_INT, second_source, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(a + b, 3);
    printf("races_deadlock: all checks passed\n");
  } else if (rank <= 2) {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
