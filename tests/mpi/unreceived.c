/* A run that ends with messages nobody received (docs/mpi.md, "Exit status"): every rank sends six
 * to the next rank, which never receives them, so the run fails after every rank finished, and
 * its report lists the first 20 of the 5 x 6 in rank order. Split over processes, each finds those
 * of its own ranks, and the report is still the one process's (tests/CMakeLists.txt).
 *   unreceived */
#include <stdio.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int tag = 0; tag < 6; ++tag) {
    const int payload = 100 * rank + tag;
    CHECK_EQ(MPI_Send(&payload, 1, MPI_INT, (rank + 1) % size, tag, MPI_COMM_WORLD), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("unreceived: rank %d sent its six\n", rank);
  MPI_Finalize();
  return 0;
}
