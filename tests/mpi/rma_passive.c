/* Passive-target one-sided communication (MPI-3.1 11.5.3-11.5.4): exclusive and shared locks,
 * lock_all, the flushes, the request-based operations, MPI_Fetch_and_op and MPI_Compare_and_swap
 * (a mutex every rank takes in turn), and progress at a target that waits in MPI_Recv while the
 * others' operations reach its window. */
#include <stdlib.h>

#include "check.h"
#include "rma_window.h"

/* A counter on rank 0 that every rank increments under an exclusive lock, by get and put: the
 * lock makes the read-modify-write whole, so no increment is lost. */
static void exclusive_counter(MPI_Comm comm) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  MPI_Win win;
  int* mem = zeroed_window(comm, sizeof(int), sizeof(int), &win);
  MPI_Barrier(comm);
  for (int k = 0; k < 2; ++k) {
    CHECK_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), MPI_SUCCESS);
    int v = -1;
    MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    CHECK_EQ(MPI_Win_flush(0, win), MPI_SUCCESS);
    ++v;
    MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    CHECK_EQ(MPI_Win_unlock(0, win), MPI_SUCCESS);
  }
  MPI_Barrier(comm);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_EQ(*mem, 2 * size);
    MPI_Win_unlock(0, win);
  }
  MPI_Win_free(&win);
}

/* Fetch-and-op tickets and a compare-and-swap mutex guarding a plain put. */
static void atomics(MPI_Comm comm) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  long* mem; /* [0] ticket counter, [1] mutex (-1 free), [2] guarded value */
  MPI_Win win;
  MPI_Win_allocate(3 * sizeof(long), sizeof(long), MPI_INFO_NULL, comm, &mem, &win);
  mem[0] = 0;
  mem[1] = -1;
  mem[2] = 0;
  MPI_Barrier(comm);
  MPI_Win_lock_all(0, win);
  const long one = 1;
  long ticket = -1;
  MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 0, MPI_SUM, win);
  MPI_Win_flush(0, win);
  CHECK(ticket >= 0 && ticket < size);
  const long me = rank, free_ = -1;
  long was = 0;
  do {  /* take the mutex */
    MPI_Compare_and_swap(&me, &free_, &was, MPI_LONG, 0, 1, win);
    MPI_Win_flush(0, win);
  } while (was != -1);
  long v = -1;
  MPI_Get(&v, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win);
  MPI_Win_flush(0, win);
  v += rank + 1;
  MPI_Put(&v, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win);
  MPI_Win_flush(0, win);
  MPI_Compare_and_swap(&free_, &me, &was, MPI_LONG, 0, 1, win); /* release */
  MPI_Win_flush(0, win);
  CHECK_EQ(was, rank);
  MPI_Win_unlock_all(win);
  MPI_Barrier(comm);
  if (rank == 0) {
    CHECK_EQ(mem[0], size);
    CHECK_EQ(mem[1], -1);
    CHECK_EQ(mem[2], (long)size * (size + 1) / 2);
  }
  MPI_Win_free(&win);
}

/* MPI_Rput, MPI_Rget, MPI_Raccumulate and MPI_Rget_accumulate with waits, tests and waitall;
 * MPI_Win_flush_local and flush_local_all; shared locks on every rank. */
static void request_based(MPI_Comm comm) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  MPI_Win win;
  int* mem = zeroed_window(comm, 4 * sizeof(int), sizeof(int), &win);
  MPI_Barrier(comm);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  const int v = 10 + rank;
  MPI_Request rq[3];
  CHECK_EQ(MPI_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq[0]), MPI_SUCCESS);
  CHECK_EQ(MPI_Raccumulate(&v, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win, &rq[1]), MPI_SUCCESS);
  CHECK_EQ(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  MPI_Win_flush(right, win);
  int got = -1, old = -1;
  CHECK_EQ(MPI_Rget(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq[0]), MPI_SUCCESS);
  int flag = 0;
  while (!flag) MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
  CHECK_EQ(got, v);
  const int two = 2;
  MPI_Rget_accumulate(&two, 1, MPI_INT, &old, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_PROD, win, &rq[2]);
  int index = -1;
  MPI_Waitany(1, &rq[2], &index, MPI_STATUS_IGNORE);
  CHECK_EQ(index, 0);
  CHECK_EQ(old, v);
  MPI_Win_unlock(right, win);
  MPI_Barrier(comm);
  CHECK_EQ(mem[0], 10 + left);
  CHECK_EQ(mem[1], 2 * (10 + left));
  /* lock_all: a get from every rank, complete at flush_local_all. */
  MPI_Win_lock_all(0, win);
  int* all = malloc((size_t)size * sizeof(int));
  for (int t = 0; t < size; ++t) MPI_Get(&all[t], 1, MPI_INT, t, 0, 1, MPI_INT, win);
  MPI_Win_flush_local(right, win);
  CHECK_EQ(all[right], 10 + rank);
  MPI_Win_flush_local_all(win);
  for (int t = 0; t < size; ++t) CHECK_EQ(all[t], 10 + (t + size - 1) % size);
  MPI_Win_flush_all(win);
  MPI_Win_sync(win);
  MPI_Win_unlock_all(win);
  free(all);
  MPI_Win_free(&win);
}

/* Rank 0 waits in MPI_Recv for a message the others send only after their passive-target
 * epochs at rank 0 are over: their operations complete without rank 0 making any RMA call, as the
 * handlers serve its window whatever it is doing (passive-target progress). */
static void progress_while_waiting(MPI_Comm comm) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  MPI_Win win;
  int* mem = zeroed_window(comm, (MPI_Aint)size * sizeof(int), sizeof(int), &win);
  MPI_Barrier(comm);
  if (rank == 0) {
    for (int i = 1; i < size; ++i) MPI_Recv(NULL, 0, MPI_INT, i, 0, comm, MPI_STATUS_IGNORE);
    for (int i = 1; i < size; ++i) CHECK_EQ(mem[i], 100 + i);
  } else {
    const int v = 100 + rank;
    int back = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
    MPI_Get(&back, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
    CHECK_EQ(back, v);
    MPI_Send(NULL, 0, MPI_INT, 0, 0, comm);
  }
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  exclusive_counter(MPI_COMM_WORLD);
  atomics(MPI_COMM_WORLD);
  request_based(MPI_COMM_WORLD);
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 0, rank, &sub);
  exclusive_counter(sub);
  atomics(sub);
  request_based(sub);
  MPI_Comm_free(&sub);
  progress_while_waiting(MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) printf("all checks passed\n");
  return 0;
}
