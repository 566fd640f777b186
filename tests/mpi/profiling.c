/* The profiling interface and the Fortran forms of handles: the program wraps MPI_Send in a function
 * of its own that counts calls and forwards to PMPI_Send, as a profiling tool does; every handle's
 * Fortran integer converts back to the same handle, and a status survives MPI_Status_c2f/f2c. */
#include "check.h"

static int sends;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  ++sends;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  int value = rank, got = -1;
  MPI_Status st;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  if (rank % 2 == 0) {
    MPI_Send(&value, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
    MPI_Recv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &st);
  } else {
    MPI_Recv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &st);
    MPI_Send(&value, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
  }
  CHECK_EQ(got, prev);
  CHECK_EQ(sends, 1);

  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM);
  CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL);
  CHECK(PMPI_Message_f2c(PMPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL);
  MPI_Group g;
  MPI_Comm_group(MPI_COMM_WORLD, &g);
  CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g);
  MPI_Group_free(&g);

  MPI_Fint f[MPI_STATUS_SIZE];
  MPI_Status back;
  CHECK_EQ(MPI_Status_c2f(&st, f), MPI_SUCCESS);
  CHECK_EQ(MPI_Status_f2c(f, &back), MPI_SUCCESS);
  int count = -1;
  MPI_Get_count(&back, MPI_INT, &count);
  CHECK_EQ(back.MPI_SOURCE, prev);
  CHECK_EQ(back.MPI_TAG, 5);
  CHECK_EQ(count, 1);

  int total = 0;
  PMPI_Allreduce(&sends, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(total, size);
  if (rank == 0) printf("profiling: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
