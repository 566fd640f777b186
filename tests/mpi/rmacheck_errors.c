/* Checks of one-sided communication (docs/debugging.md, "One-sided communication"): each mode
 * makes one erroneous call, which the checks report in MPI terms (rmacheck.cmake asserts each
 * report whole). Run on 5 ranks: the window is made on the even world ranks 0, 2 and 4 (ranks 0, 1
 * and 2 of the window's communicator); the odd ones only make and free one of their own. */
#include <mpi.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  int world, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm even;
  MPI_Comm_split(MPI_COMM_WORLD, world % 2, world, &even);
  MPI_Comm_rank(even, &rank);
  int mem[8] = {0}, buf[4] = {1, 2, 3, 4}, got[4] = {0};
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, even, &win);
  if (world % 2 == 1) mode = "";
  if (!strcmp(mode, "free_open")) { /* an RMA call after the last fence, which no fence completes */
    MPI_Win_fence(0, win);
    if (rank == 1) MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  } else if (!strcmp(mode, "lock_after_calls")) { /* a lock inside the access epoch of the fence */
    MPI_Win_fence(0, win);
    if (rank == 1) {
      MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
      MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
    }
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "lock_in_fence")) { /* RMA calls and another fence make it an epoch */
    MPI_Win_fence(0, win);
    if (rank == 2) {
      MPI_Win_lock_all(0, win);
      MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
      MPI_Win_unlock_all(win);
    }
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "conflict")) { /* two puts into one location in one fence epoch */
    MPI_Win_fence(0, win);
    if (rank > 0) MPI_Put(buf + rank, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "send_get_buffer")) { /* sends a get's result before the fence fills it */
    MPI_Win_fence(0, win);
    if (rank == 1) {
      MPI_Get(got, 2, MPI_INT, 0, 0, 2, MPI_INT, win);
      MPI_Send(got + 1, 1, MPI_INT, 2, 0, even);
    }
    if (rank == 2) MPI_Recv(buf, 1, MPI_INT, 1, 0, even, MPI_STATUS_IGNORE);
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "recv_put_origin")) { /* receives into a put's origin buffer before the unlock */
    if (rank == 1) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      MPI_Put(buf, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
      MPI_Recv(buf + 2, 1, MPI_INT, 2, 0, even, MPI_STATUS_IGNORE);
      MPI_Win_unlock(0, win);
    }
    if (rank == 2) MPI_Send(got, 1, MPI_INT, 1, 0, even);
  } else if (!strcmp(mode, "recv_window")) { /* receives into window bytes a put reached in this epoch */
    MPI_Win_fence(0, win);
    if (rank == 1) {
      MPI_Put(buf, 2, MPI_INT, 0, 4, 2, MPI_INT, win);
      MPI_Send(buf, 1, MPI_INT, 0, 0, even); /* arrives after the put: messages never overtake */
    }
    if (rank == 0) {
      MPI_Recv(got, 1, MPI_INT, 1, 0, even, MPI_STATUS_IGNORE);
      MPI_Recv(mem + 5, 1, MPI_INT, 2, 0, even, MPI_STATUS_IGNORE);
    }
    if (rank == 2) MPI_Send(buf, 1, MPI_INT, 0, 0, even);
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "own_get")) { /* a get fills bytes of its own window that a put reaches */
    if (rank == 1) {
      MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
      MPI_Put(buf, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
      MPI_Send(buf, 1, MPI_INT, 0, 0, even); /* arrives after the put */
      MPI_Recv(got, 1, MPI_INT, 0, 0, even, MPI_STATUS_IGNORE);
      MPI_Win_unlock(0, win);
    }
    if (rank == 0) {
      MPI_Recv(got, 1, MPI_INT, 1, 0, even, MPI_STATUS_IGNORE);
      MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
      MPI_Get(mem + 2, 2, MPI_INT, 2, 0, 2, MPI_INT, win);
      MPI_Win_unlock(2, win);
      MPI_Send(got, 1, MPI_INT, 1, 0, even);
    }
  } else if (!strcmp(mode, "store")) { /* a store into bytes a put reached, before the put's unlock */
    if (rank == 1) {
      MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
      MPI_Put(buf, 2, MPI_INT, 0, 0, 2, MPI_INT, win);
      MPI_Send(buf, 1, MPI_INT, 0, 0, even);
      MPI_Recv(got, 1, MPI_INT, 0, 0, even, MPI_STATUS_IGNORE);
      MPI_Win_unlock(0, win);
    }
    if (rank == 0) {
      MPI_Recv(got, 1, MPI_INT, 1, 0, even, MPI_STATUS_IGNORE);
      ((volatile int*)mem)[1] = 99;
      MPI_Send(got, 1, MPI_INT, 1, 0, even);
    }
  } else if (!strcmp(mode, "put_origin_store")) { /* a store into a put's origin buffer before the fence */
    MPI_Win_fence(0, win);
    if (rank == 1) {
      MPI_Put(buf, 4, MPI_INT, 0, 0, 4, MPI_INT, win);
      ((volatile int*)buf)[3] = 0;
    }
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "sendrecv")) { /* the receive buffer overlaps the send buffer */
    if (rank < 2) MPI_Sendrecv(buf, 2, MPI_INT, 1 - rank, 0, buf + 1, 2, MPI_INT, 1 - rank, 0, even, MPI_STATUS_IGNORE);
  } else if (!strcmp(mode, "two_gets")) { /* two gets write one int of one buffer in one fence epoch */
    MPI_Win_fence(0, win);
    if (rank == 1) {
      MPI_Get(got, 2, MPI_INT, 0, 0, 2, MPI_INT, win);
      MPI_Get(got + 1, 2, MPI_INT, 0, 4, 2, MPI_INT, win);
    }
    MPI_Win_fence(0, win);
  }
  MPI_Win_free(&win);
  MPI_Comm_free(&even);
  MPI_Finalize();
  return 0;
}
