/* One-sided communication under fences (MPI-3.1 11.5.1): windows made by MPI_Win_create and
 * MPI_Win_allocate on the world and on a sub-communicator, MPI_Put, MPI_Get, MPI_Accumulate and
 * MPI_Get_accumulate with predefined and derived datatypes on either side, the fence's
 * assertions, and overlapping accumulates of one element from every rank. */
#include <stdlib.h>

#include "check.h"
#include "rma_window.h"

enum { N = 16 };

/* Ring puts and gets on a window of n ints per rank, each rank's slot `rank` set by its left
 * neighbour; then a strided get of the right neighbour's window through a vector type. */
static void ring(MPI_Comm comm, int use_allocate) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  int* mem;
  MPI_Win win;
  if (use_allocate) {
    CHECK_EQ(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &mem, &win), MPI_SUCCESS);
  } else {
    mem = malloc(N * sizeof(int));
    CHECK_EQ(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &win), MPI_SUCCESS);
  }
  for (int i = 0; i < N; ++i) mem[i] = -1;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int value = 1000 + rank;
  MPI_Put(&value, 1, MPI_INT, right, rank % N, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK_EQ(mem[left % N], 1000 + left);
  for (int i = 0; i < N; ++i) mem[i] = rank * 100 + i;
  MPI_Win_fence(0, win);
  int got[N / 2];
  MPI_Datatype every_other;
  MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Get(got, N / 2, MPI_INT, right, 0, 1, every_other, win);
  int whole[N];
  MPI_Get(whole, N, MPI_INT, left, 0, N, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  for (int i = 0; i < N / 2; ++i) CHECK_EQ(got[i], right * 100 + 2 * i);
  for (int i = 0; i < N; ++i) CHECK_EQ(whole[i], left * 100 + i);
  /* A strided origin into a contiguous target: odd slots of the origin's buffer. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int src[N];
  for (int i = 0; i < N; ++i) src[i] = -(rank * 100 + i);
  MPI_Put(src + 1, 1, every_other, left, 0, N / 2, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE, win);
  for (int i = 0; i < N / 2; ++i) CHECK_EQ(mem[i], -(right * 100 + 2 * i + 1));
  MPI_Type_free(&every_other);
  CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
  CHECK_EQ(win, MPI_WIN_NULL);
  if (!use_allocate) free(mem);
}

/* Every rank adds to one element of rank 0's window, and to its own slot of every rank's: the
 * sums are exact, since accumulates are atomic per element. Then get-accumulates and MPI_REPLACE. */
static void accumulates(MPI_Comm comm) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  MPI_Win win;
  long* mem = zeroed_window(comm, (MPI_Aint)(size + 1) * sizeof(long), sizeof(long), &win);
  MPI_Win_fence(0, win);
  const long one = 1, mine = rank + 1;
  for (int k = 0; k < 3; ++k) MPI_Accumulate(&one, 1, MPI_LONG, 0, size, 1, MPI_LONG, MPI_SUM, win);
  for (int t = 0; t < size; ++t) MPI_Accumulate(&mine, 1, MPI_LONG, t, rank, 1, MPI_LONG, MPI_SUM, win);
  MPI_Win_fence(0, win);
  if (rank == 0) CHECK_EQ(mem[size], 3L * size);
  for (int i = 0; i < size; ++i) CHECK_EQ(mem[i], i + 1);
  /* Fetch-and-add on rank 0's counter: each rank gets a distinct old value. */
  long old = -1;
  MPI_Get_accumulate(&one, 1, MPI_LONG, &old, 1, MPI_LONG, 0, size, 1, MPI_LONG, MPI_SUM, win);
  MPI_Win_fence(0, win);
  CHECK(old >= 3L * size && old < 4L * size);
  long* olds = malloc((size_t)size * sizeof(long));
  MPI_Allgather(&old, 1, MPI_LONG, olds, 1, MPI_LONG, comm);
  long seen = 0;
  for (int i = 0; i < size; ++i) seen |= 1L << (olds[i] - 3L * size);
  CHECK_EQ(seen, (1L << size) - 1);
  free(olds);
  /* MPI_MAX and MPI_REPLACE, and MPI_NO_OP as an atomic read. */
  if (rank == size - 1) {
    const long big = 777;
    MPI_Accumulate(&big, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_REPLACE, win);
  }
  MPI_Win_fence(0, win);
  const long r = rank;
  MPI_Accumulate(&r, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_MAX, win);
  long read = -1;
  MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &read, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_NO_OP, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  CHECK_EQ(read, 777);
  if (rank == 0) CHECK_EQ(mem[1], size - 1);
  MPI_Win_free(&win);
}

/* Accumulates through derived types on both sides: pairs of doubles, every other one. */
static void derived_accumulate(MPI_Comm comm) {
  int rank, size;
  rank_and_size(comm, &rank, &size);
  MPI_Win win;
  double* mem = zeroed_window(comm, 8 * sizeof(double), 1, &win);
  MPI_Datatype pairs;
  MPI_Type_vector(2, 2, 4, MPI_DOUBLE, &pairs); /* elements 0,1 and 4,5 */
  MPI_Type_commit(&pairs);
  double src[4] = {1, 2, 3, 4};
  MPI_Win_fence(0, win);
  MPI_Accumulate(src, 4, MPI_DOUBLE, (rank + 1) % size, 0, 1, pairs, MPI_SUM, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  const double want[8] = {1, 2, 0, 0, 3, 4, 0, 0};
  for (int i = 0; i < 8; ++i) CHECK(mem[i] == want[i]);
  MPI_Type_free(&pairs);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  ring(MPI_COMM_WORLD, 0);
  ring(MPI_COMM_WORLD, 1);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  ring(half, 1);
  accumulates(MPI_COMM_WORLD);
  accumulates(half);
  derived_accumulate(half);
  MPI_Comm_free(&half);
  MPI_Finalize();
  if (rank == 0) printf("all checks passed\n");
  return 0;
}
