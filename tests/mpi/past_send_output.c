/* A rank whose code runs on past its MPI_Send (docs/parallel.md, "Programs that go on past their
 * sends") prints there, and the run fails before that send completes: what it printed never
 * happened in the sequential order and is not shown, as on one host core. Rank 2 aborts at once;
 * rank 0's send (long enough to take a while) is still on its way. Run by programs_at_once.sh,
 * which compares the whole output on 1, 2 and 4 host cores. */
#include <stdlib.h>

#include "check.h"

static double busy_work(void) {
  volatile double x = 0;
  for (int i = 0; i < 2000000; ++i) x += i * 0.5;
  return x;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  static char data[1 << 16];
  if (rank == 0) {
    printf("rank 0 before its send\n");
    MPI_Send(data, (int)sizeof data, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
    printf("rank 0 past its send\n");
    fflush(stdout);
    busy_work();
    MPI_Send(data, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(data, (int)sizeof data, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(data, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 2) {
    fprintf(stderr, "rank 2 gives up\n");
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  MPI_Finalize();
  return 0;
}
