/* Every nonblocking collective (MPI_Ixxx) with its results checked: all seventeen in flight at
 * once on MPI_COMM_WORLD and on a split communicator, blocking collectives started between them,
 * completed by MPI_Waitall, MPI_Waitany, MPI_Testall and MPI_Waitsome in turn; then many
 * instances of one collective in flight on one communicator, and a nonblocking barrier that must
 * progress while its rank is blocked in a receive. */
#include <string.h>

#include "nbc_cases.h"

static void complete(int how, int n, MPI_Request* rs) {
  if (how == 0) {
    CHECK_EQ(MPI_Waitall(n, rs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  } else if (how == 1) {
    for (int done = 0; done < n; ++done) {
      int index = -1;
      CHECK_EQ(MPI_Waitany(n, rs, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
      CHECK(index >= 0 && index < n && rs[index] == MPI_REQUEST_NULL);
    }
  } else if (how == 2) {
    int flag = 0;
    while (!flag) CHECK_EQ(MPI_Testall(n, rs, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  } else {
    int left = n, out = 0;
    int* idx = malloc(sizeof(int) * (size_t)n);
    while (left > 0) {
      CHECK_EQ(MPI_Waitsome(n, rs, &out, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
      CHECK(out >= 1);
      left -= out;
    }
    free(idx);
  }
  for (int i = 0; i < n; ++i) CHECK(rs[i] == MPI_REQUEST_NULL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  /* "world": the second communicator is a duplicate of MPI_COMM_WORLD, so that the catalog's
   * whole-machine algorithms (--coll) serve both */
  const int world_only = argc > 1 && strcmp(argv[1], "world") == 0;
  MPI_Comm half;
  if (world_only) MPI_Comm_dup(MPI_COMM_WORLD, &half);
  else MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half); /* reversed rank order */
  static NbcBufs w, h;
  nbc_setup(&w, MPI_COMM_WORLD);
  nbc_setup(&h, half);
  for (int k = 0; k < 4; ++k) {
    nbc_fill(&w, k);
    nbc_fill(&h, k);
    MPI_Request rs[2 * NBC_COUNT];
    for (int i = 0; i < NBC_COUNT; ++i) {
      nbc_post(&w, i, 0, &rs[i]);
      if (i == 8) { /* a blocking collective between nonblocking ones on the same communicator */
        int x = rank + k, sum = 0;
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_EQ(sum, size * (size - 1) / 2 + size * k);
      }
    }
    for (int i = 0; i < NBC_COUNT; ++i) nbc_post(&h, (i + k) % NBC_COUNT, 0, &rs[NBC_COUNT + (i + k) % NBC_COUNT]);
    int b = h.rank == 0 ? 42 + k : -1;
    MPI_Bcast(&b, 1, MPI_INT, 0, half);
    CHECK_EQ(b, 42 + k);
    complete(k, 2 * NBC_COUNT, rs);
    nbc_check(&w, k);
    nbc_check(&h, k);
  }
  /* Twelve allreduces of one communicator in flight at once, completed in reverse order. */
  enum { M = 12 };
  int in[M], out[M];
  MPI_Request q[M];
  for (int j = 0; j < M; ++j) {
    in[j] = rank * (j + 1);
    CHECK_EQ(MPI_Iallreduce(&in[j], &out[j], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[j]), MPI_SUCCESS);
  }
  for (int j = M - 1; j >= 0; --j) {
    CHECK_EQ(MPI_Wait(&q[j], MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(out[j], (j + 1) * size * (size - 1) / 2);
  }
  /* A nonblocking barrier progresses while its rank blocks in a receive: each rank passes a token
   * around the ring between starting and completing it. */
  MPI_Request bar;
  CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &bar), MPI_SUCCESS);
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 9, &got, 1, MPI_INT, (rank + size - 1) % size, 9,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(got, (rank + size - 1) % size);
  MPI_Status st;
  CHECK_EQ(MPI_Wait(&bar, &st), MPI_SUCCESS);
  CHECK(bar == MPI_REQUEST_NULL);
  nbc_free(&w);
  nbc_free(&h);
  MPI_Comm_free(&half);
  return all_checks_passed("nbc_all");
}
