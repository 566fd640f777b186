/* Collective consistency (docs/debugging.md, "Collectives that do not match"): each mode makes one
 * erroneous call on one rank; the consistency check reports it at entry, naming both calls
 * (check.cmake asserts the reports). Run on 5 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  int rank, data[8] = {0}, out[64] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(mode, "kind")) {  /* rank 3 calls another collective */
    if (rank == 3) MPI_Allgather(data, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    else MPI_Allreduce(MPI_IN_PLACE, data, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "root")) {  /* on a split communicator, one member names another root */
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
    MPI_Bcast(data, 2, MPI_INT, rank == 4 ? 1 : 0, odd);
    MPI_Comm_free(&odd);
  } else if (!strcmp(mode, "op")) {
    MPI_Allreduce(MPI_IN_PLACE, data, 2, MPI_INT, rank == 2 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "count")) {
    MPI_Reduce(rank ? data : MPI_IN_PLACE, data, rank == 1 ? 3 : 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "type")) {  /* the same bytes, another type */
    MPI_Bcast(data, 2, rank == 2 ? MPI_FLOAT : MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "order")) {  /* rank 1 enters them in the other order */
    if (rank == 1) {
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Bcast(data, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else {
      MPI_Bcast(data, 1, MPI_INT, 0, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "gatherv")) {  /* the root expects 2 from rank 3, which sends 3 */
    int counts[5] = {1, 1, 1, 2, 1}, displs[5] = {0, 1, 2, 3, 5};
    MPI_Gatherv(data, rank == 3 ? 3 : counts[rank], MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "nonblocking")) {  /* a nonblocking collective never matches a blocking one */
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 4) MPI_Ibcast(data, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    else MPI_Bcast(data, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (!strcmp(mode, "inter")) {  /* an intercommunicator between even and odd ranks */
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
    if (rank == 3) MPI_Allreduce(MPI_IN_PLACE, data, 1, MPI_INT, MPI_SUM, inter);
    else MPI_Barrier(inter);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  } else if (!strcmp(mode, "returns")) {  /* MPI_ERRORS_RETURN: the rank that finds it gets the code */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = MPI_Allreduce(MPI_IN_PLACE, data, 2, MPI_INT, rank == 2 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
      int cls = 0;
      MPI_Error_class(rc, &cls);
      printf("rank %d: MPI_Allreduce returned %s\n", rank, cls == MPI_ERR_OP ? "MPI_ERR_OP" : "another error");
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 5);
    }
  } else if (!strcmp(mode, "alltoallv")) {  /* rank 2 sends rank 4 two ints, rank 4 expects one */
    int sc[5] = {1, 1, 1, 1, 1}, rc[5] = {1, 1, 1, 1, 1}, d[5] = {0, 2, 4, 6, 8};
    if (rank == 2) sc[4] = 2;
    MPI_Alltoallv(data, sc, d, MPI_INT, out, rc, d, MPI_INT, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
