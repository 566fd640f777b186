/* Buffer ownership (docs/debugging.md): a nonblocking send owns its buffer until it completes, and
 * under --check so does a nonblocking receive; a write of the program meanwhile is an error named
 * at the completing call. The erroneous modes write into the buffer; "correct" writes only after
 * completion, in a sub-communicator and with requests completed by MPI_Waitall, MPI_Test and
 * MPI_Waitany; "twice" waits on a copy of a request's handle after MPI_Wait freed the request.
 * Run on 3 ranks or more. */
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  const char* mode = argc > 1 ? argv[1] : "correct";
  int out[4] = {1, 2, 3, 4}, in[4] = {0};
  MPI_Request r;
  if (!strcmp(mode, "send")) {
    if (rank == 0) {
      MPI_Isend(out, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &r);
      out[2] = 9; /* the send still owns it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(in, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "recv")) {
    if (rank == 1) {
      MPI_Irecv(in, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
      in[0] = 7; /* the receive still owns it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
      MPI_Send(out, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "free_recv")) {
    if (rank == 1) {
      MPI_Irecv(in, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
      MPI_Request_free(&r);
    } else if (rank == 0) {
      MPI_Send(out, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "twice")) { /* a copy of a handle that MPI_Wait freed */
    if (rank == 0) {
      MPI_Isend(out, 4, MPI_INT, 1, 6, MPI_COMM_WORLD, &r);
      MPI_Request copy = r;
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Wait(&copy, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(in, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else {
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
    int me, n;
    MPI_Comm_rank(odd, &me);
    MPI_Comm_size(odd, &n);
    MPI_Request q[2];
    for (int round = 0; round < 3; ++round) {
      for (int k = 0; k < 4; ++k) out[k] = 100 * round + 10 * me + k;
      MPI_Irecv(in, 4, MPI_INT, (me + n - 1) % n, round, odd, &q[0]);
      MPI_Isend(out, 4, MPI_INT, (me + 1) % n, round, odd, &q[1]);
      if (round == 0) {
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
      } else if (round == 1) {
        int done = 0;
        while (!done) MPI_Testall(2, q, &done, MPI_STATUSES_IGNORE);
      } else {
        int i;
        MPI_Waitany(2, q, &i, MPI_STATUS_IGNORE);
        MPI_Waitany(2, q, &i, MPI_STATUS_IGNORE);
      }
      const int from = (me + n - 1) % n;
      for (int k = 0; k < 4; ++k) CHECK_EQ(in[k], 100 * round + 10 * from + k);
      in[0] = -1; /* the buffers are the program's again */
      out[0] = -1;
    }
    MPI_Comm_free(&odd);
    if (rank == 0) printf("buffer_ownership: all checks passed on %d ranks\n", size);
  }
  MPI_Finalize();
  return 0;
}
