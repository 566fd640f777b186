/* An all-to-all benchmark in the style of the OSU micro-benchmarks: it chooses its own sizes (16 to
 * 256 bytes per pair, doubling), times one MPI_Alltoall per size between MPI_Barrier and the end,
 * and prints a line per size. Each timed all-to-all is a measured region (MPI_Pcontrol(1) ...
 * MPI_Pcontrol(0)): `touchstone sweep --program` without {size} in --args reports the regions'
 * total, and `--coll alltoall=all` runs it once per catalog algorithm (docs/benchmarking.md). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, p;
  init_world(&argc, &argv, &rank, &p);
  const int max = 256;
  char* s = malloc((size_t)max * (size_t)p);
  char* r = malloc((size_t)max * (size_t)p);
  for (int i = 0; i < max * p; ++i) s[i] = (char)(rank + i);
  if (rank == 0) printf("# size  time (us)\n");
  for (int L = 16; L <= max; L *= 2) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Pcontrol(1);
    MPI_Alltoall(s, L, MPI_CHAR, r, L, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Pcontrol(0);
    const double t = MPI_Wtime() - t0;
    for (int from = 0; from < p; ++from) CHECK(r[from * L + L - 1] == (char)(from + rank * L + L - 1));
    if (rank == 0) printf("%6d  %10.3f\n", L, t * 1e6);
  }
  free(s);
  free(r);
  if (rank == 0) printf("all checks passed\n");
  MPI_Finalize();
  return 0;
}
