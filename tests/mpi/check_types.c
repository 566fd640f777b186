/* Type signatures of messages (docs/debugging.md, "Messages received as another type"): each mode
 * receives one message as a type whose signature differs from the sender's; check.cmake asserts
 * the reports. Run on 4 ranks. */
#include <mpi.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  int rank, ints[8] = {0};
  float floats[8];
  double doubles[8];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!strcmp(mode, "recv")) {
    if (rank == 0) MPI_Send(ints, 4, MPI_INT, 1, 7, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(floats, 4, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (!strcmp(mode, "irecv")) {  /* reported by the completing call, naming the posting one */
    MPI_Request r;
    if (rank == 2) MPI_Ssend(doubles, 2, MPI_DOUBLE, 3, 1, MPI_COMM_WORLD);
    if (rank == 3) {
      MPI_Irecv(ints, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "derived")) {  /* a struct of (int, double) received as two ints */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank >= 2, rank, &sub);
    struct { int i; double d; } s = {1, 2.0};
    int len[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, pair;
    MPI_Type_create_struct(2, len, disp, types, &pair);
    MPI_Type_commit(&pair);
    if (rank == 2) MPI_Send(&s, 1, pair, 1, 4, sub);
    if (rank == 3) MPI_Recv(ints, 3, MPI_INT, 0, 4, sub, MPI_STATUS_IGNORE);
    MPI_Type_free(&pair);
    MPI_Comm_free(&sub);
  } else if (!strcmp(mode, "returns")) {  /* MPI_ERRORS_RETURN: the receive returns MPI_ERR_TYPE */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) MPI_Send(ints, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) {
      MPI_Status st;
      const int rc = MPI_Recv(floats, 1, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, &st);
      int cls = 0;
      MPI_Error_class(rc, &cls);
      if (cls != MPI_ERR_TYPE) MPI_Abort(MPI_COMM_WORLD, 4);
      MPI_Abort(MPI_COMM_WORLD, 6);  /* the expected ending */
    }
  } else if (!strcmp(mode, "longer")) {  /* longer than the receive, and another type: the type is named */
    if (rank == 0) MPI_Send(ints, 4, MPI_INT, 1, 2, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(doubles, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
