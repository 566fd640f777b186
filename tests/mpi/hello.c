/* Output of several ranks: each writes one line in two pieces with a barrier between them (other
 * ranks write in between). With `mpirun --tag-output` every line comes out whole, prefixed with
 * its rank. `hello buffered` first makes stdout fully buffered (as a program may, with setvbuf),
 * `hello line` line-buffered: the lines are each rank's all the same. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "buffered")) setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  if (argc > 1 && !strcmp(argv[1], "line")) setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("piece one, ");
  MPI_Barrier(MPI_COMM_WORLD);
  printf("piece two from %d of %d\n", rank, size);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("no newline at the end from %d", rank);
  MPI_Finalize();
  return 0;
}
