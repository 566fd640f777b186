/* The checks of one-sided programs (docs/mpi.md "One-sided communication"): conflicting accesses
 * of two origins within one fence epoch (MPI_ERR_RMA_CONFLICT at the target's fence), one exposure
 * epoch (at its MPI_Win_wait) and concurrent shared locks (at the later origin's unlock); accesses
 * that do not conflict (gets, accumulates on one type, disjoint bytes, exclusive locks, accesses
 * ordered by a flush and a barrier); and a result buffer written before its operation completed
 * (MPI_ERR_BUFFER). */
#include "check.h"

/* Without the hint, a conflict is a warning (MPI-3.1 leaves the outcome undefined): the fence
 * succeeds; rma.cmake checks the warning's text. */
static void warning_only(int rank) {
  int* mem;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Win_fence(0, win);
  if (rank == 1 || rank == 2) MPI_Put(&rank, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  CHECK_EQ(MPI_Win_fence(0, win), MPI_SUCCESS);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  if (argc > 1 && strcmp(argv[1], "warn") == 0) {
    warning_only(rank);
    MPI_Finalize();
    if (rank == 0) printf("all checks passed\n");
    return 0;
  }
  /* touchstone_conflicts=error: conflicts are MPI_ERR_RMA_CONFLICT through the window's handler. */
  MPI_Info errors;
  MPI_Info_create(&errors);
  MPI_Info_set(errors, "touchstone_conflicts", "error");
  int* mem;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), errors, MPI_COMM_WORLD, &mem, &win);
  MPI_Info_free(&errors);
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
  /* Shared locks held together: ranks 1 and 2 put into rank 0's slot 3, each reports the conflict
   * its own put made (the second to arrive) at its unlock; a flush in between ends a put's record. */
  MPI_Barrier(MPI_COMM_WORLD);
  int rc1 = MPI_SUCCESS;
  if (rank == 1 || rank == 2) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Put(&rank, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* both puts sent while both locks are held */
  if (rank == 1 || rank == 2) rc1 = MPI_Win_unlock(0, win);
  int conflicts = rc1 == MPI_ERR_RMA_CONFLICT, total = 0;
  CHECK(rc1 == MPI_SUCCESS || rc1 == MPI_ERR_RMA_CONFLICT);
  MPI_Allreduce(&conflicts, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(total, 1);
  MPI_Win_lock_all(0, win);
  if (rank == 1) {
    MPI_Put(&rank, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* rank 1's put complete and ordered before rank 2's */
  if (rank == 2) MPI_Put(&rank, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
  CHECK_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  /* Post/start: ranks 1 and 2 both accumulate into rank 0's slot 1 (fine), then both put into slot 2. */
  MPI_Group world, target, origins;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int zero = 0, pair[2] = {1, 2};
  MPI_Group_incl(world, 1, &zero, &target);
  MPI_Group_incl(world, 2, pair, &origins);
  for (int round = 0; round < 2; ++round) {
    if (rank == 0) {
      MPI_Win_post(origins, 0, win);
      CHECK_EQ(MPI_Win_wait(win), round == 0 ? MPI_SUCCESS : MPI_ERR_RMA_CONFLICT);
    } else if (rank == 1 || rank == 2) {
      MPI_Win_start(target, 0, win);
      if (round == 0) MPI_Accumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win);
      else MPI_Put(&rank, 1, MPI_INT, 0, 2, 1, MPI_INT, win);
      CHECK_EQ(MPI_Win_complete(win), MPI_SUCCESS);
    }
  }
  MPI_Group_free(&world);
  MPI_Group_free(&target);
  MPI_Group_free(&origins);
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
