/* A bug example (docs/debugging.md, "Messages received as another type"): a halo of four ints goes
 * to the right neighbour on a split communicator, which receives it as floats. The bytes fit, so
 * nothing else would say so; the check ends the run at the receive, naming both ends.
 * Run: touchstone mpirun --machine mesh:2x3 -np 6 ./mpi_type_mismatch */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, halo[4] = {1, 2, 3, 4};
  float in[4];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm row;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 3, rank, &row);
  MPI_Comm_rank(row, &rank);
  MPI_Comm_size(row, &size);
  MPI_Request r;
  MPI_Irecv(in, 4, MPI_FLOAT, (rank + size - 1) % size, 0, row, &r);
  MPI_Send(halo, 4, MPI_INT, (rank + 1) % size, 0, row);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Comm_free(&row);
  MPI_Finalize();
  return 0;
}
