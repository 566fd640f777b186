/* A wildcard race in an MPI program (docs/debugging.md, "MPI programs"), the MPI twin of
 * bugs::wildcard_collect: ranks 1..3 each send 100 * rank to rank 0, which receives them with
 * MPI_ANY_SOURCE and stores each in the slot of its arrival instead of the slot of its source. On
 * mesh:1x4 rank r is r hops away and the results arrive in rank order, so the run passes; forcing
 * another match (mpirun --explore, --schedule) fails the check. A global counts the runs this
 * process made of main: each explored run must be a fresh process (it checks that it is the first). */
#include "check.h"

static int runs_of_main = 0;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(++runs_of_main, 1);
  if (rank == 0) {
    int slot[64] = {0};
    for (int i = 1; i < size && i < 64; ++i)
      MPI_Recv(&slot[i], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 1; i < size && i < 64; ++i) CHECK_EQ(slot[i], 100 * i);
    printf("wildcard_race: all checks passed on %d ranks\n", size);
  } else {
    const int value = 100 * rank;
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
