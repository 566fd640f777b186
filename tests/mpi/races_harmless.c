/* A harmless race (docs/debugging.md, "Harmful and harmless races"): every other rank sends its
 * rank to rank 0, which receives them with MPI_ANY_SOURCE and adds them up. The order of arrival
 * is decided by timing, but the sum is the same whichever message comes first: `mpirun --races
 * --explore` lists the races and classifies each as harmless, and --races=error exits 0. */
#include "check.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  if (rank == 0) {
    int sum = 0;
    for (int i = 1; i < size; ++i) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += value;
    }
    CHECK_EQ(sum, size * (size - 1) / 2);
    printf("races_harmless: sum %d; all checks passed\n", sum);
  } else {
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
