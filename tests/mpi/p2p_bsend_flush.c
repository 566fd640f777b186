/* MPI-4.1's MPI_Buffer_flush and MPI_Buffer_iflush: once they complete, every message buffered
 * before them has left the attached buffer, which stays attached and takes as many new messages
 * again (no detach); the nonblocking flush completes through MPI_Wait, an MPI_Test loop and
 * MPI_Waitall beside receives; a flush with nothing buffered, or with no buffer, returns at once.
 * Each rank sends rounds of K messages around a ring, the buffer holding exactly one round. */
#include <stdlib.h>

#include "check.h"

enum { K = 4, N = 300, ROUNDS = 5 };

/* The value i of message m of round `round` from rank `from`: every one distinct. */
static int value(int from, int round, int m, int i) { return ((from * ROUNDS + round) * K + m) * N + i; }

/* A flush of the round's messages, a different way each round. */
static void flush(int round, MPI_Request recvs[K]) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (round == 0) {
    CHECK_EQ(MPI_Buffer_flush(), MPI_SUCCESS);
    return;
  }
  CHECK_EQ(MPI_Buffer_iflush(&r), MPI_SUCCESS);
  CHECK(r != MPI_REQUEST_NULL);
  if (round == 1) {
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  } else if (round == 2) {
    int done = 0;
    /* The rank's own receives are posted, so the sends complete and the loop ends. */
    while (!done) CHECK_EQ(MPI_Test(&r, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
  } else {
    MPI_Request all[K + 1];
    for (int m = 0; m < K; ++m) all[m] = recvs[m];
    all[K] = r;
    CHECK_EQ(MPI_Waitall(K + 1, all, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int m = 0; m <= K; ++m) CHECK(all[m] == MPI_REQUEST_NULL);
    for (int m = 0; m < K; ++m) recvs[m] = MPI_REQUEST_NULL;
    r = all[K];
  }
  CHECK(r == MPI_REQUEST_NULL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* With no buffer attached, both flushes have nothing to wait for. */
  CHECK_EQ(MPI_Buffer_flush(), MPI_SUCCESS);
  MPI_Request none;
  CHECK_EQ(MPI_Buffer_iflush(&none), MPI_SUCCESS);
  int done = 0;
  CHECK_EQ(MPI_Test(&none, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK(done && none == MPI_REQUEST_NULL);

  const int capacity = K * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* buffer = malloc((size_t)capacity);
  CHECK_EQ(MPI_Buffer_attach(buffer, capacity), MPI_SUCCESS);
  static int out[K][N], in[K][N];
  for (int round = 0; round < ROUNDS; ++round) {
    MPI_Request recvs[K];
    for (int m = 0; m < K; ++m) MPI_Irecv(in[m], N, MPI_INT, left, m, MPI_COMM_WORLD, &recvs[m]);
    for (int m = 0; m < K; ++m) {
      for (int i = 0; i < N; ++i) out[m][i] = value(rank, round, m, i);
      CHECK_EQ(MPI_Bsend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    /* The copies are in the buffer: the user's message buffers may change at once. */
    for (int m = 0; m < K; ++m) out[m][0] = -1;
    flush(round, recvs);
    CHECK_EQ(MPI_Waitall(K, recvs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int m = 0; m < K; ++m)
      for (int i = 0; i < N; ++i) CHECK_EQ(in[m][i], value(left, round, m, i));
  }

  /* Everything has left: another flush returns at once, at the same virtual time. */
  const double t0 = MPI_Wtime();
  CHECK_EQ(MPI_Buffer_flush(), MPI_SUCCESS);
  MPI_Request r;
  CHECK_EQ(MPI_Buffer_iflush(&r), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK(MPI_Wtime() == t0);

  /* The buffer stayed attached all along: detach gives it back whole. */
  void* back = NULL;
  int back_size = 0;
  CHECK_EQ(MPI_Buffer_detach(&back, &back_size), MPI_SUCCESS);
  CHECK(back == buffer);
  CHECK_EQ(back_size, capacity);
  free(buffer);
  return all_checks_passed("p2p_bsend_flush");
}
