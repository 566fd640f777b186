/* The checks of one-sided programs (docs/mpi.md "One-sided communication"): conflicting accesses
 * of two origins within one fence epoch (MPI_ERR_RMA_CONFLICT at the target's fence), accesses
 * that do not conflict (gets, accumulates on one type, disjoint bytes), and a result buffer
 * written before its operation completed (MPI_ERR_BUFFER). */
#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  int* mem;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  const int one = 1;
  int got = -1;
  MPI_Win_fence(0, win);
  /* No conflict: every rank adds to slot 0 (one type), reads slot 1, writes its own slot 2 + rank % 6. */
  MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Get(&got, 1, MPI_INT, 0, 1, 1, MPI_INT, win);
  if (rank < 6) MPI_Put(&rank, 1, MPI_INT, 0, 2 + rank, 1, MPI_INT, win);
  CHECK_EQ(MPI_Win_fence(0, win), MPI_SUCCESS);
  if (rank == 0) CHECK_EQ(mem[0], size);
  /* A conflict: ranks 1 and 2 put into rank 0's slot 7; rank 0's fence reports it, the others' do not. */
  if (rank == 1 || rank == 2) MPI_Put(&rank, 1, MPI_INT, 0, 7, 1, MPI_INT, win);
  const int rc = MPI_Win_fence(0, win);
  CHECK_EQ(rc, rank == 0 ? MPI_ERR_RMA_CONFLICT : MPI_SUCCESS);
  /* A get and an accumulate of the same bytes conflict too; an accumulate with another type does. */
  if (rank == 1) MPI_Get(&got, 1, MPI_INT, 0, 6, 1, MPI_INT, win);
  if (rank == 2) MPI_Accumulate(&one, 1, MPI_INT, 0, 6, 1, MPI_INT, MPI_SUM, win);
  CHECK_EQ(MPI_Win_fence(0, win), rank == 0 ? MPI_ERR_RMA_CONFLICT : MPI_SUCCESS);
  if (rank == 1) MPI_Accumulate(&one, 1, MPI_INT, 0, 5, 1, MPI_INT, MPI_SUM, win);
  if (rank == 2) MPI_Accumulate(&one, 1, MPI_UNSIGNED, 0, 5, 1, MPI_UNSIGNED, MPI_SUM, win);
  CHECK_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), rank == 0 ? MPI_ERR_RMA_CONFLICT : MPI_SUCCESS);
  /* MPI_MODE_NOPRECEDE after operations of this rank: MPI_ERR_RMA_SYNC (on every rank, so no rank
   * waits in the fence's barrier); the next fence completes them. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  CHECK_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_ERR_RMA_SYNC);
  CHECK_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOPUT, win), MPI_SUCCESS);
  if (rank == 0) CHECK_EQ(mem[0], 2 * size);
  /* Under an exclusive lock, the same location from every rank is no conflict. */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  MPI_Put(&rank, 1, MPI_INT, 0, 4, 1, MPI_INT, win);
  MPI_Win_unlock(0, win);
  /* Writing into a get's buffer before the get completes. */
  const int right = (rank + 1) % size;
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  got = 12345;
  CHECK_EQ(MPI_Win_flush(right, win), MPI_ERR_BUFFER);
  MPI_Win_unlock(right, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  if (rank == 0) printf("all checks passed\n");
  return 0;
}
