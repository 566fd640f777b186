/* A safe program (docs/debugging.md, "Checking for unsafe programs"): the same exchange and
 * broadcast as races_unsafe.c written so that no conforming MPI can deadlock them (MPI_Sendrecv;
 * receives posted before the collective), on a sub-communicator of the even ranks as well, so
 * that `mpirun --check` passes. */
#include "check.h"

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  const int peer = rank ^ 1;
  if (peer < size) {
    int theirs = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, peer, 0, &theirs, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(theirs, peer);
  }
  MPI_Comm evens;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &evens);
  int shared = rank == 0 ? 42 : 0, from_one = -1;
  MPI_Request r = MPI_REQUEST_NULL;
  if (rank == 0) MPI_Irecv(&from_one, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
  if (rank == 1) MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  MPI_Bcast(&shared, 1, MPI_INT, 0, evens);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (rank == 0) CHECK_EQ(from_one, 1);
  CHECK_EQ(shared, rank % 2 == 0 ? 42 : 0);
  int total = 0;
  MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(total, size * (size - 1) / 2);
  MPI_Comm_free(&evens);
  if (rank == 0) printf("races_safe: all checks passed\n");
  MPI_Finalize();
  return 0;
}
