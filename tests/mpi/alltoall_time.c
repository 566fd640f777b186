/* One MPI_Alltoall of argv[1] bytes per pair; rank 0 prints the longest time any rank spent in it
 * (MPI_Wtime is virtual time). tests/CMakeLists.txt checks that it is exactly the makespan of
 * `touchstone run` of the same catalog algorithm: the MPI call adds no virtual time of its own. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(argc > 1);
  const int L = atoi(argv[1]);
  char* s = calloc((size_t)L * (size_t)size, 1);
  char* r = calloc((size_t)L * (size_t)size, 1);
  const double t0 = MPI_Wtime();
  MPI_Alltoall(s, L, MPI_CHAR, r, L, MPI_CHAR, MPI_COMM_WORLD);
  print_makespan(MPI_Wtime() - t0);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
