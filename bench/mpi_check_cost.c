/* What the checks that are on by default cost (docs/performance.md, "Checking MPI programs"):
 *   alltoall N L  N MPI_Alltoall of L bytes per pair on MPI_COMM_WORLD (one collective check per
 *                 call and rank, none per message: the algorithm's messages are the runtime's);
 *   ialltoall N L N MPI_Ialltoall + MPI_Wait of L bytes per pair (the collective check, and the
 *                 send buffer's checksum at the post and at completion: buffer ownership);
 *   p2p N L       N MPI_Sendrecv of L bytes around a ring (a signature recorded and compared per
 *                 message).
 * Run with and without --no-check:
 *   touchstone-mpicc -O2 bench/mpi_check_cost.c -o cost
 *   touchstone mpirun --machine mesh:16x16 -np 256 ./cost alltoall 20 1024 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int ialltoall = argc > 1 && !strcmp(argv[1], "ialltoall");
  const int alltoall = ialltoall || (argc > 1 && !strcmp(argv[1], "alltoall"));
  const int n = argc > 2 ? atoi(argv[2]) : 20, bytes = argc > 3 ? atoi(argv[3]) : 1024;
  const size_t total = (size_t)bytes * (alltoall ? (size_t)size : 1);
  char* s = calloc(total, 1);
  char* r = calloc(total, 1);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    if (ialltoall) {
      MPI_Request q;
      MPI_Ialltoall(s, bytes, MPI_CHAR, r, bytes, MPI_CHAR, MPI_COMM_WORLD, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else if (alltoall)
      MPI_Alltoall(s, bytes, MPI_CHAR, r, bytes, MPI_CHAR, MPI_COMM_WORLD);
    else
      MPI_Sendrecv(s, bytes, MPI_CHAR, (rank + 1) % size, 0, r, bytes, MPI_CHAR, (rank + size - 1) % size, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  const double t = MPI_Wtime() - t0;
  if (rank == 0)
    printf("%s: %d calls of %d bytes, %.3f virtual ms\n", ialltoall ? "ialltoall" : alltoall ? "alltoall" : "p2p", n,
           bytes, t * 1e3);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
