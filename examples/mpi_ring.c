/* An MPI program for Touchstone: a token goes once around the ranks, then all sum their ranks.
 * Build: touchstone-mpicc mpi_ring.c -o mpi_ring (or touchstone_add_mpi_program);
 * run:   touchstone mpirun --machine torus:4x4 ./mpi_ring */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, token = 0, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    MPI_Send(&token, 1, MPI_INT, 1 % size, 0, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token += rank;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
  }
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("token %d after %d ranks, sum of ranks %d, at t=%.3f us\n", token, size, sum, MPI_Wtime() * 1e6);
  MPI_Finalize();
  return 0;
}
