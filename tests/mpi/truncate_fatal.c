/* Under the default error handler MPI_ERRORS_ARE_FATAL a truncated receive ends the run; the
 * report names the rank and the call (checked by tests/CMakeLists.txt). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, big[4] = {1, 2, 3, 4}, small[2];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) MPI_Send(big, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(small, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
