/* MPI_Abort on one rank ends the run with its error code as the exit status, while the other
 * ranks wait in a barrier. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 2) MPI_Abort(MPI_COMM_WORLD, 7);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
