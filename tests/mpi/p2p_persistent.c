/* Persistent requests: a ring started again and again with MPI_Startall (standard, synchronous,
 * ready and buffered sends), on the world and on a sub-communicator; inactive requests in the
 * completion calls; starting an active request; MPI_Request_free. Needs at least 2 ranks. */
#include <stdlib.h>

#include "check.h"

enum { ROUNDS = 6, N = 5 };

/* Round k: each rank sends N ints (rank, k, ...) to the next rank and receives the previous one's.
 * The send buffer changes between starts: a persistent send reads it when started. */
static void ring(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out[4][N], in[4][N];
  MPI_Request req[8];
  int bsize = 2 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* attached = malloc((size_t)bsize);
  MPI_Buffer_attach(attached, bsize);
  MPI_Send_init(out[0], N, MPI_INT, next, 10, comm, &req[0]);
  MPI_Ssend_init(out[1], N, MPI_INT, next, 11, comm, &req[1]);
  MPI_Bsend_init(out[2], N, MPI_INT, next, 12, comm, &req[2]);
  MPI_Rsend_init(out[3], N, MPI_INT, next, 13, comm, &req[3]);
  for (int m = 0; m < 4; ++m) MPI_Recv_init(in[m], N, MPI_INT, prev, 10 + m, comm, &req[4 + m]);
  for (int k = 0; k < ROUNDS; ++k) {
    for (int m = 0; m < 4; ++m)
      for (int i = 0; i < N; ++i) out[m][i] = 1000 * rank + 100 * m + 10 * k + i;
    /* Receives first, then a barrier: the ready send's receive is posted before it starts. */
    MPI_Startall(4, &req[4]);
    MPI_Barrier(comm);
    MPI_Startall(4, req);
    MPI_Status st[8];
    MPI_Waitall(8, req, st);
    for (int m = 0; m < 8; ++m) CHECK(req[m] != MPI_REQUEST_NULL); /* inactive, not freed */
    for (int m = 0; m < 4; ++m) {
      CHECK_EQ(st[4 + m].MPI_SOURCE, prev);
      CHECK_EQ(st[4 + m].MPI_TAG, 10 + m);
      int count;
      MPI_Get_count(&st[4 + m], MPI_INT, &count);
      CHECK_EQ(count, N);
      for (int i = 0; i < N; ++i) CHECK_EQ(in[m][i], 1000 * prev + 100 * m + 10 * k + i);
    }
  }
  /* One more round completed one request at a time with MPI_Waitany: each index once, then the
   * inactive requests count as null. */
  MPI_Startall(4, &req[4]);
  MPI_Barrier(comm);
  MPI_Startall(4, req);
  int seen[8] = {0};
  for (int j = 0; j < 8; ++j) {
    int index;
    MPI_Status st;
    MPI_Waitany(8, req, &index, &st);
    CHECK(index >= 0 && index < 8);
    CHECK_EQ(seen[index], 0);
    seen[index] = 1;
  }
  int index = 0, flag = 0, outcount = 0, indices[8];
  MPI_Status st;
  MPI_Waitany(8, req, &index, &st);
  CHECK_EQ(index, MPI_UNDEFINED);
  CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
  MPI_Testany(8, req, &index, &flag, &st);
  CHECK_EQ(flag, 1);
  CHECK_EQ(index, MPI_UNDEFINED);
  MPI_Waitsome(8, req, &outcount, indices, MPI_STATUSES_IGNORE);
  CHECK_EQ(outcount, MPI_UNDEFINED);
  MPI_Testsome(8, req, &outcount, indices, MPI_STATUSES_IGNORE);
  CHECK_EQ(outcount, MPI_UNDEFINED);
  MPI_Test(&req[4], &flag, &st); /* an inactive request: complete at once, with an empty status */
  CHECK_EQ(flag, 1);
  CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK_EQ(count, 0);
  MPI_Wait(&req[0], &st);
  CHECK(req[0] != MPI_REQUEST_NULL);
  for (int m = 0; m < 8; ++m) {
    MPI_Request_free(&req[m]);
    CHECK(req[m] == MPI_REQUEST_NULL);
  }
  void* back;
  int back_size;
  MPI_Buffer_detach(&back, &back_size);
  CHECK(back == attached);
  CHECK_EQ(back_size, bsize);
  free(attached);
}

/* Starting an active request is MPI_ERR_REQUEST, as are starting MPI_REQUEST_NULL and a request
 * that is not persistent; MPI_PROC_NULL persistent requests complete at once, again and again. */
static void errors_and_proc_null(int rank, int size) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = rank, y = -1;
  MPI_Request r, s, nul = MPI_REQUEST_NULL;
  MPI_Recv_init(&y, 1, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, &r);
  CHECK_EQ(MPI_Start(&r), MPI_SUCCESS);
  int code = MPI_Start(&r), klass;
  MPI_Error_class(code, &klass);
  CHECK_EQ(klass, MPI_ERR_REQUEST);
  CHECK_EQ(MPI_Startall(1, &r), MPI_ERR_REQUEST);
  MPI_Request twice[2];
  MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &twice[0]);
  twice[1] = twice[0];
  CHECK_EQ(MPI_Startall(2, twice), MPI_ERR_REQUEST); /* the same request twice: none is started */
  CHECK_EQ(MPI_Start(&twice[0]), MPI_SUCCESS);
  MPI_Wait(&twice[0], MPI_STATUS_IGNORE);
  MPI_Request_free(&twice[0]);
  CHECK_EQ(MPI_Start(&nul), MPI_ERR_REQUEST);
  MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &s);
  CHECK_EQ(MPI_Start(&s), MPI_ERR_REQUEST);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(y, (rank + size - 1) % size);
  MPI_Request_free(&r);
  MPI_Request p[2];
  MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[0]);
  MPI_Recv_init(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[1]);
  for (int k = 0; k < 3; ++k) {
    MPI_Status st[2];
    MPI_Startall(2, p);
    int flag = 0;
    MPI_Testall(2, p, &flag, st);
    CHECK_EQ(flag, 1);
    CHECK_EQ(st[1].MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st[1].MPI_TAG, MPI_ANY_TAG);
  }
  MPI_Request_free(&p[0]);
  MPI_Request_free(&p[1]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A persistent send and receive of a strided type whose handle is freed right after the _init
 * calls: the requests keep the type they were made with, started again and again. */
static void freed_type(int rank, int size) {
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Datatype every_other;
  MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int out[6], in[6];
  MPI_Request r[2];
  MPI_Send_init(out, 1, every_other, next, 20, MPI_COMM_WORLD, &r[0]);
  MPI_Recv_init(in, 1, every_other, prev, 20, MPI_COMM_WORLD, &r[1]);
  MPI_Type_free(&every_other);
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 6; ++i) out[i] = 100 * rank + 10 * k + i, in[i] = -1;
    CHECK_EQ(MPI_Startall(2, r), MPI_SUCCESS);
    CHECK_EQ(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 6; ++i) CHECK_EQ(in[i], i % 2 ? -1 : 100 * prev + 10 * k + i);
  }
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  ring(MPI_COMM_WORLD);
  freed_type(rank, size);
  /* The ring again on the odd and the even ranks (a sub-communicator of one rank sends to itself). */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  ring(half);
  MPI_Comm_free(&half);
  errors_and_proc_null(rank, size);
  MPI_Finalize();
  if (rank == 0) printf("p2p_persistent: all checks passed on %d ranks\n", size);
  return 0;
}
