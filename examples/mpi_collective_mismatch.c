/* A bug example (docs/debugging.md, "Collectives that do not match"): every rank sums a vector with
 * MPI_Allreduce, but the last rank, on a path of its own, gathers instead. Without the check the
 * two collectives' messages meet and the run ends in a deadlock on internal messages; with it the
 * run ends at the last rank's call, naming both calls, ranks and lines.
 * Run: touchstone mpirun --machine mesh:2x3 -np 5 ./mpi_collective_mismatch */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, v[4] = {1, 2, 3, 4}, all[64];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Bcast(v, 4, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == size - 1)
    MPI_Allgather(v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  else
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("sum %d %d %d %d\n", v[0], v[1], v[2], v[3]);
  MPI_Finalize();
  return 0;
}
