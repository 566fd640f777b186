/* Reports in MPI's terms (docs/debugging.md): each erroneous mode ends in a report that names the
 * MPI call, its communicator, the program's source and tag and the line (mpi_terms.cmake asserts it),
 * as --races names the race mode's race; the correct mode runs every pattern to completion. 5 ranks. */
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "correct";
  const int wrong = strcmp(mode, "correct") != 0;
  int buf[8] = {0}, in[8] = {0};
  MPI_Comm half;  /* world ranks 1 and 3 are ranks 0 and 1 of color 1 */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int hrank;
  MPI_Comm_rank(half, &hrank);
  if (!strcmp(mode, "recv") || !wrong) {  /* a tag the receive does not want */
    if (rank % 2 == 1 && hrank == 0) MPI_Send(buf, 4, MPI_INT, 1, wrong ? 8 : 7, half);
    if (rank % 2 == 1 && hrank == 1) MPI_Recv(in, 4, MPI_INT, 0, 7, half, MPI_STATUS_IGNORE);
  }
  if (!strcmp(mode, "waitall") || !wrong) {  /* a ring whose second message is never sent */
    MPI_Comm ring;
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    MPI_Comm_set_name(ring, "ring");
    MPI_Request r[3];
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Irecv(in, 1, MPI_INT, left, 1, ring, &r[0]);
    MPI_Irecv(in + 1, 1, MPI_INT, right, 2, ring, &r[1]);
    MPI_Isend(buf, 1, MPI_INT, right, 1, ring, &r[2]);
    if (!wrong) MPI_Send(buf + 1, 1, MPI_INT, left, 2, ring);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&ring);
  }
  if (!strcmp(mode, "collective") || !wrong) {  /* the root receives what comes after the broadcast */
    if (rank == 2) {
      if (wrong) MPI_Recv(in, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Bcast(buf, 8, MPI_INT, 2, MPI_COMM_WORLD);
      if (!wrong) MPI_Recv(in, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Bcast(buf, 8, MPI_INT, 2, MPI_COMM_WORLD);
      if (rank == 0) MPI_Send(buf, 1, MPI_INT, 2, 5, MPI_COMM_WORLD);
    }
  }
  if (!strcmp(mode, "abort") && rank == 2) MPI_Abort(MPI_COMM_WORLD, 7);
  if (!strcmp(mode, "race") || !wrong) {  /* world ranks 2 and 4 send to 0 in color 0: a wildcard race */
    if (rank % 2 == 0 && hrank == 0) {
      int sum = 0;
      for (int i = 0; i < 2; ++i) {
        MPI_Recv(in, 1, MPI_INT, MPI_ANY_SOURCE, 9, half, MPI_STATUS_IGNORE);
        sum += in[0];
      }
      CHECK(sum == 3);
    } else if (rank % 2 == 0) {
      MPI_Send(&hrank, 1, MPI_INT, 0, 9, half);
    }
  }
  if (!strcmp(mode, "refused") || !wrong) {  /* the root's scatter is refused, and it goes on to the end */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int counts[8] = {1, 1, 1, 1, 1, 1, 1, 1}, displs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    MPI_Scatterv(buf, wrong ? NULL : counts, displs, MPI_INT, in, 1, MPI_INT, 3, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  MPI_Comm_free(&half);
  if (rank == 0) printf("mpi_terms: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
