/* Lifecycle at MPI_Finalize (docs/debugging.md, "What MPI_Finalize finds"): a communicator, a group,
 * a datatype, an operation, an attached buffer, a request never completed, a persistent request never
 * freed and a request freed while active; warnings by default, an error under --check. */
#include <mpi.h>
#include <stdlib.h>

static void add(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)in, (void)inout, (void)len, (void)t;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 0, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Datatype t;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Op op;
    MPI_Op_create(add, 1, &op);
    static char buffer[1024];
    MPI_Buffer_attach(buffer, sizeof buffer);
    MPI_Request never, persistent, freed;
    MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &never);
    MPI_Send_init(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &persistent);
    MPI_Isend(&y, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &freed);
    MPI_Request_free(&freed);
  }
  if (rank == 0) {
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&y, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
