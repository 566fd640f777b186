/* Calls an MPI function Touchstone does not provide: linking it must fail, naming the function. */
#include <mpi.h>
#include <stddef.h>

int MPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm* intercomm, int array_of_errcodes[]);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm child;
  MPI_Comm_spawn("worker", NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, NULL);
  MPI_Finalize();
  return 0;
}
