/* One MPI_Allreduce (MPI_SUM on MPI_LONG, 8-byte integer elements, as the catalog's harness
 * combines) of argv[1] bytes; rank 0 prints the longest time any rank spent in it. algorithms.cmake
 * checks that it is exactly the makespan of `touchstone run` of the catalog algorithm that --coll
 * or --coll-selector chooses, gamma included: MPI adds no virtual time of its own. */
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(argc > 1);
  const int n = atoi(argv[1]) / (int)sizeof(long);
  long* s = calloc((size_t)n + 1, sizeof(long));
  long* r = calloc((size_t)n + 1, sizeof(long));
  for (int j = 0; j < n; ++j) s[j] = rank + j;
  const double t0 = MPI_Wtime();
  MPI_Allreduce(s, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const double d = MPI_Wtime() - t0;
  for (int j = 0; j < n; ++j) CHECK_EQ(r[j], (long)size * (size - 1) / 2 + (long)size * j);
  print_makespan(d);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
