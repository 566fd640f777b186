/* An erroneous program: MPI_Finalize while a nonblocking collective is still active. The run must
 * end with an error naming the call (the collective would otherwise write into the program's
 * buffers after main returned), not a crash or a silent success. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int x = 1;
  MPI_Request q;
  MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &q);
  MPI_Finalize();
  return 0;
}
