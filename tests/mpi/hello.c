/* Output of several ranks: each writes one line in two pieces with a barrier between them (other
 * ranks write in between). With `mpirun --tag-output` every line comes out whole, prefixed with
 * its rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
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
