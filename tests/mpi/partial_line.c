/* Every rank writes the start of a line, then calls a collective; the last rank calls another
 * one, which fails the run (collectives that do not match). The unfinished lines were written
 * before the failure and come out at the run's end, each rank's whole with `mpirun --tag-output`:
 * on one host core and several, and split over processes (where the failing rank's call returns
 * and its program goes on before the mismatch is found). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, v = 1, all[64];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("rank %d starts", rank);
  if (rank == size - 1)
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  else
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf(" and ends\n");
  MPI_Finalize();
  return 0;
}
