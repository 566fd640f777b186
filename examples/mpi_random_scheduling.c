/* Paper 003's distributed random scheduling of an all-to-all-v (section 5, Fig. 4) written with
 * MPI one-sided communication, the catalog's alltoallv/random-scheduling (algorithms/alltoallv.cpp)
 * as an MPI program. Every rank owns a busy lock, one long in a window. After pre-posting its
 * receives, each rank picks a destination it still owes at random, takes the destination's lock
 * with MPI_Fetch_and_op(1, MPI_REPLACE) (the paper's test-and-set: one round trip) and, if it was
 * free, sends the whole message (taking the messages that arrive meanwhile) and frees the lock
 * with MPI_Accumulate(-1, MPI_SUM) (one one-way message); if it was busy, it picks again.
 *
 *   touchstone mpirun --machine cm5:32 ./example_mpi_random_scheduling M.csv [SEED]
 *
 * M.csv is the traffic matrix (row i: the bytes rank i sends to each rank), as `touchstone run
 * --traffic file=M.csv` takes it; SEED is the run's seed (`--seed`, 1 by default). The random
 * choices are the catalog's (the same generator, seeded alike), so where the operations cost what
 * the catalog's active messages cost, the schedule and the times of every send and receive are
 * the catalog's (tests/mpi/rma_random_scheduling.sh compares them). Prints the time from the barrier that
 * starts the exchange to the last rank's end, and the number of busy answers. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The catalog's generator (SplitMix64). */
static uint64_t next(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The n x n matrix of the CSV file, or NULL. */
static long* read_matrix(const char* path, int n) {
  FILE* f = fopen(path, "r");
  if (!f) return NULL;
  long* m = malloc(sizeof(long) * (size_t)n * (size_t)n);
  for (int k = 0; k < n * n; ++k)
    if (fscanf(f, " %ld ,", &m[k]) != 1) {
      free(m);
      m = NULL;
      break;
    }
  fclose(f);
  return m;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long* m = argc > 1 ? read_matrix(argv[1], n) : NULL;
  if (!m) {
    if (me == 0) fprintf(stderr, "usage: mpi_random_scheduling M.csv [SEED], M.csv a %dx%d matrix\n", n, n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  /* Send and receive buffers: the blocks in rank order. */
  long *so = calloc((size_t)n + 1, sizeof(long)), *ro = calloc((size_t)n + 1, sizeof(long));
  for (int j = 0; j < n; ++j) so[j + 1] = so[j] + m[me * n + j];
  for (int i = 0; i < n; ++i) ro[i + 1] = ro[i] + m[i * n + me];
  char *send = malloc((size_t)so[n] + 1), *recv = malloc((size_t)ro[n] + 1);
  for (long k = 0; k < so[n]; ++k) send[k] = (char)(me + k);

  long* busy;
  MPI_Win win;
  MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &busy, &win);
  *busy = 0;
  /* "pre-allocate receiving buffers according to receive vector recv" */
  MPI_Request* incoming = malloc(sizeof(MPI_Request) * (size_t)n); /* and the send under way */
  int posted = 0;
  for (int i = 0; i < n; ++i)
    if (i != me && m[i * n + me] > 0)
      MPI_Irecv(recv + ro[i], (int)m[i * n + me], MPI_BYTE, i, 0, MPI_COMM_WORLD, &incoming[posted++]);
  memcpy(recv + ro[me], send + so[me], (size_t)m[me * n + me]);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win); /* passive target, no lock messages */
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();

  int* owe = malloc(sizeof(int) * (size_t)n);
  int owed = 0;
  for (int j = 0; j < n; ++j)
    if (j != me && m[me * n + j] > 0) owe[owed++] = j;
  uint64_t rng = seed * 0x2545f4914f6cdd1dULL + (uint64_t)me;
  const long one = 1, minus_one = -1;
  long refused = 0;
  while (owed > 0) {
    const int pick = (int)(next(&rng) % (uint64_t)owed), j = owe[pick];
    long was = -1;
    MPI_Fetch_and_op(&one, &was, MPI_LONG, j, 0, MPI_REPLACE, win); /* test-and-set */
    MPI_Win_flush_local(j, win);
    if (was != 0) {
      ++refused;
      continue;
    }
    /* The implementation polls (section 5): while its message leaves, the rank takes the messages
     * that arrive for its pre-posted receives, each completing when it is in. */
    MPI_Isend(send + so[j], (int)m[me * n + j], MPI_BYTE, j, 0, MPI_COMM_WORLD, &incoming[posted]);
    int done;
    do
      MPI_Waitany(posted + 1, incoming, &done, MPI_STATUS_IGNORE);
    while (done != posted);
    MPI_Accumulate(&minus_one, 1, MPI_LONG, j, 0, 1, MPI_LONG, MPI_SUM, win); /* release */
    owe[pick] = owe[--owed];
  }
  MPI_Waitall(posted, incoming, MPI_STATUSES_IGNORE);
  double mine = (MPI_Wtime() - t0) * 1e6, last = 0;
  MPI_Barrier(MPI_COMM_WORLD); /* every release sent before the unlock's flushes */
  MPI_Win_unlock_all(win);

  int errors = 0;
  /* Rank i's block for this rank starts at i's send offset of this rank. */
  for (int i = 0; i < n; ++i) {
    long start = 0;
    for (int j = 0; j < me; ++j) start += m[i * n + j];
    for (long k = 0; k < m[i * n + me]; ++k)
      if (recv[ro[i] + k] != (char)(i + start + k)) ++errors;
  }
  long all_refused = 0;
  int all_errors = 0;
  MPI_Reduce(&mine, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&refused, &all_refused, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0)
    printf("random scheduling on %d ranks: %.3f us from the barrier, %ld busy answers, %s\n", n, last, all_refused,
           all_errors ? "WRONG DATA" : "data checked");
  MPI_Win_free(&win);
  free(owe);
  free(incoming);
  free(send);
  free(recv);
  free(so);
  free(ro);
  free(m);
  MPI_Finalize();
  return all_errors != 0;
}
