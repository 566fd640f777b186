/* Calls an MPI function Touchstone does not provide: linking it must fail, naming the function. */
#include <mpi.h>

int MPI_Win_fence(int assert, int win);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Win_fence(0, 0);
  MPI_Finalize();
  return 0;
}
