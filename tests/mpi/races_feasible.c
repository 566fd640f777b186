/* Forced choices that an earlier choice makes impossible (docs/debugging.md, "Infeasible
 * schedules"): ranks 1 and 2 each send two messages to rank 0, which receives all four with
 * MPI_ANY_SOURCE and adds them up, the same sum in every order. Exploring drops the later choices
 * of a run when it changes an earlier one, so it reports no deadlock; a schedule that forces three
 * receives to take rank 2's two messages cannot be followed and is reported as infeasible. */
#include "check.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  if (rank == 0) {
    int sum = 0;
    for (int i = 0; i < 4; ++i) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += value;
    }
    CHECK_EQ(sum, 2 * (1 + 2));
    printf("races_feasible: all checks passed\n");
  } else if (rank <= 2) {
    for (int i = 0; i < 2; ++i) MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
