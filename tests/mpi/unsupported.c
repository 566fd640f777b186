/* Calls an MPI function Touchstone does not provide: linking it must fail, naming the function. */
#include <mpi.h>

int MPI_File_sync(int fh);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_File_sync(0);
  MPI_Finalize();
  return 0;
}
