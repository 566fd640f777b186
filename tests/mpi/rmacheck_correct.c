/* The legal neighbours of rmacheck_errors.c's modes, which the checks of one-sided communication
 * must leave alone: rmacheck.cmake runs it under mpirun --check, where any finding ends the run.
 * Run on 5 ranks: each window is made on the even world ranks 0, 2 and 4 (ranks 0, 1, 2 of it). */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

static MPI_Comm even;
static int rank;

static MPI_Win window(int* mem) {
  MPI_Win win;
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  MPI_Win_create(mem, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, even, &win);
  return win;
}

/* A fence that ends the last epoch and begins none may precede locks: the last one before
 * MPI_Win_free, or one with MPI_MODE_NOSUCCEED. */
static void fences_then_locks(void) {
  int mem[8], v = 10 + rank;
  MPI_Win win = window(mem);
  MPI_Win_fence(0, win);
  if (rank == 1) MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win); /* no RMA call follows it before another fence: it begins no epoch */
  MPI_Win_lock_all(0, win);
  if (rank == 2) MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(even);
  if (rank == 0) CHECK(mem[0] == 11 && mem[1] == 12);
  MPI_Win_free(&win);

  win = window(mem);
  MPI_Win_fence(0, win);
  if (rank == 1) MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  MPI_Put(&v, 1, MPI_INT, 0, 2 + rank, 1, MPI_INT, win);
  MPI_Win_unlock(0, win);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int got = 0;
  MPI_Get(&got, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  CHECK_EQ(got, 10);
  MPI_Win_free(&win);
}

/* Accumulates of two ranks into one location are no conflict, and the bytes they change are no
 * store; the target stores into bytes no access reaches and loads bytes only gets reach. */
static void compatible_accesses(void) {
  int mem[8], one = 1, got = -1;
  MPI_Win win = window(mem);
  mem[4] = 44;
  MPI_Win_fence(0, win);
  if (rank > 0) {
    MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&rank, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
    MPI_Get(&got, 1, MPI_INT, 0, 4, 1, MPI_INT, win);
  } else {
    mem[7] = 7;
    CHECK_EQ(mem[4], 44);
  }
  MPI_Win_fence(0, win);
  if (rank == 0) CHECK(mem[0] == 2 && mem[1] == 1 && mem[2] == 2 && mem[7] == 7);
  if (rank > 0) CHECK_EQ(got, 44);
  MPI_Win_free(&win);
}

/* A get's result buffer is the program's again once the fence or a flush completed it; a put's
 * origin buffer may be read (sent) meanwhile. */
static void buffers_after_completion(void) {
  int mem[8], got[2] = {0, 0}, v[2] = {5, 6}, in = 0;
  MPI_Win win = window(mem);
  mem[0] = 100 + rank;
  MPI_Win_fence(0, win);
  if (rank == 1) {
    MPI_Get(got, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Put(v, 2, MPI_INT, 2, 4, 2, MPI_INT, win);
    MPI_Send(v, 2, MPI_INT, 2, 0, even);
  }
  if (rank == 2) MPI_Recv(got, 2, MPI_INT, 1, 0, even, MPI_STATUS_IGNORE);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 1) {
    CHECK_EQ(got[0], 100);
    MPI_Send(got, 1, MPI_INT, 2, 1, even);
    MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
    MPI_Get(got + 1, 1, MPI_INT, 2, 0, 1, MPI_INT, win);
    MPI_Win_flush_local(2, win);
    MPI_Send(got + 1, 1, MPI_INT, 2, 2, even);
    MPI_Win_unlock(2, win);
  }
  if (rank == 2) {
    CHECK(got[0] == 5 && got[1] == 6 && mem[4] == 5 && mem[5] == 6);
    MPI_Recv(&in, 1, MPI_INT, 1, 1, even, MPI_STATUS_IGNORE);
    CHECK_EQ(in, 100);
    MPI_Recv(&in, 1, MPI_INT, 1, 2, even, MPI_STATUS_IGNORE);
    CHECK_EQ(in, 102);
  }
  MPI_Win_free(&win);
}

/* The target writes bytes a put reached once the put's epoch is over there: after the origin's
 * flush (then told so by a message), after the fence, after MPI_Win_wait. */
static void writes_after_the_epoch(void) {
  int mem[8], v[2] = {1, 2}, token = 0;
  MPI_Win win = window(mem);
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Put(v, 2, MPI_INT, 0, 0, 2, MPI_INT, win);
    MPI_Win_flush(0, win);
    MPI_Send(&token, 1, MPI_INT, 0, 0, even);
    MPI_Recv(&token, 1, MPI_INT, 0, 0, even, MPI_STATUS_IGNORE);
    MPI_Win_unlock(0, win);
  }
  if (rank == 0) {
    MPI_Recv(&token, 1, MPI_INT, 1, 0, even, MPI_STATUS_IGNORE);
    CHECK_EQ(mem[1], 2);
    mem[1] = 20;
    MPI_Send(&token, 1, MPI_INT, 1, 0, even);
  }
  MPI_Win_fence(0, win);
  if (rank == 1) MPI_Put(v, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Recv(mem + 5, 1, MPI_INT, 2, 3, even, MPI_STATUS_IGNORE);
  if (rank == 2) MPI_Send(v + 1, 1, MPI_INT, 0, 3, even);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == 0) CHECK(mem[1] == 20 && mem[5] == 2);
  MPI_Group all, target, origins;
  MPI_Comm_group(even, &all);
  const int zero = 0, pair[2] = {1, 2};
  MPI_Group_incl(all, 1, &zero, &target);
  MPI_Group_incl(all, 2, pair, &origins);
  if (rank == 0) {
    MPI_Win_post(origins, 0, win);
    MPI_Win_wait(win);
    mem[6] = 60;
    mem[7] = 70;
  } else {
    MPI_Win_start(target, 0, win);
    MPI_Put(v, 1, MPI_INT, 0, 5 + rank, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Barrier(even);
  if (rank == 0) CHECK(mem[6] == 60 && mem[7] == 70);
  MPI_Group_free(&all);
  MPI_Group_free(&target);
  MPI_Group_free(&origins);
  MPI_Win_free(&win);
}

/* MPI_Sendrecv's buffers interleave without sharing a byte; MPI_Sendrecv_replace uses one. */
static void sendrecv_disjoint(void) {
  if (rank > 1) return;
  int buf[4] = {rank, -1, 10 + rank, -1};
  MPI_Datatype every_other;
  MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Sendrecv(buf, 1, every_other, 1 - rank, 0, buf + 1, 1, every_other, 1 - rank, 0, even, MPI_STATUS_IGNORE);
  CHECK(buf[1] == 1 - rank && buf[3] == 11 - rank);
  MPI_Sendrecv_replace(buf, 2, MPI_INT, 1 - rank, 0, 1 - rank, 0, even, MPI_STATUS_IGNORE);
  CHECK(buf[0] == 1 - rank && buf[1] == rank);
  MPI_Type_free(&every_other);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_split(MPI_COMM_WORLD, world % 2, world, &even);
  MPI_Comm_rank(even, &rank);
  if (world % 2 == 0) {
    fences_then_locks();
    compatible_accesses();
    buffers_after_completion();
    writes_after_the_epoch();
    sendrecv_disjoint();
  }
  MPI_Comm_free(&even);
  MPI_Finalize();
  if (world == 0) printf("all checks passed\n");
  return 0;
}
