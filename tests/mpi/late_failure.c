/* A run whose rank 0 prints its success line before rank 1 fails a check: the test harness must
 * judge such a run by every rank's exit status, not by rank 0's line (tests/mpi/CMakeLists.txt). */
#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  if (rank == 0) {
    printf("late_failure: all checks passed on %d ranks\n", size);
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) CHECK_EQ(rank, 0);
  MPI_Finalize();
  return 0;
}
