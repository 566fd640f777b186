/* The virtual time of RMA operations (docs/model.md 7.1), computed by hand. rma.cmake runs it on
 *   mesh:2x1,send_us=2,recv_us=3,send_ns_per_byte=0,recv_ns_per_byte=0,hop_ns=100,link_ns_per_byte=1,
 *   inject_ns_per_byte=1,eject_ns_per_byte=1,packet=4096+0,reduce_int_ns_per_byte=5 (and no other costs)
 * C_send = 2 us, C_recv = 3 us, d = 1 hop: a message of L bytes handed to the network at h arrives at
 * h + 2 * 0.1 + L * 0.001 us (model.md 2.4). Rank 1, the target, waits in MPI_Recv for rank 0's
 * message, so its window is served by the handlers alone (passive-target progress); rank 0 holds
 * a lock taken with MPI_MODE_NOCHECK (no lock messages), and each case starts at rank 0's clock t0.
 *
 * Get of one int: the request is 6 argument words (48 bytes): handed at t0 + 2, arrives t0 + 2.248;
 *   the handler runs from then, C_recv + C_send of its 4-byte reply: reply handed at 7.248, arrives
 *   7.452; rank 0's MPI_Win_flush takes it at max(2, 7.452) + C_recv = 10.452 us.
 * Put of one int then flush: 52 bytes, arrives 2.252, handler ends 5.252. The flush request (2 words,
 *   16 bytes) handed at 4, arrives 4.216, waits for the handler until 5.252, + C_recv + C_send: reply
 *   (8 bytes) handed 10.252, arrives 10.46; rank 0 done at 10.46 + 3 = 13.46 us.
 * Accumulate (MPI_SUM) of 4 ints then flush: 64 bytes, arrives 2.264; the handler adds 16 bytes at
 *   5 ns each (0.08 us): ends 5.344; the flush's handler 5.344 .. 10.344, reply arrives 10.552; done
 *   at 13.552 us.
 * Fetch_and_op of one long: 56 bytes, arrives 2.256; handler C_recv, the sum (8 bytes * 5 ns = 0.04),
 *   C_send: reply (8 bytes) handed 7.296, arrives 7.504; flush done at 10.504 us. */
#include <math.h>

#include "check.h"

static void check_us(double seconds, double want_us) {
  const double got = seconds * 1e6;
  if (fabs(got - want_us) > 1e-6) {
    fprintf(stderr, "took %.6f us, expected %.6f us\n", got, want_us);
    CHECK(0);
  }
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK_EQ(size, 2);
  long* mem;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < 8; ++i) mem[i] = i;
  ((int*)mem)[4] = 4;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, MPI_MODE_NOCHECK, win);
    int v = -1;
    double t0 = MPI_Wtime();
    MPI_Get(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    check_us(MPI_Wtime() - t0, 10.452);
    CHECK_EQ(v, 0);
    const int four[4] = {1, 2, 3, 4};
    t0 = MPI_Wtime();
    MPI_Put(four, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    check_us(MPI_Wtime() - t0, 13.46);
    t0 = MPI_Wtime();
    MPI_Accumulate(four, 4, MPI_INT, 1, 2, 4, MPI_INT, MPI_SUM, win);
    MPI_Win_flush(1, win);
    check_us(MPI_Wtime() - t0, 13.552);
    const long one = 1;
    long old = -1;
    t0 = MPI_Wtime();
    MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 7, MPI_SUM, win);
    MPI_Win_flush(1, win);
    check_us(MPI_Wtime() - t0, 10.504);
    CHECK_EQ(old, 7);
    MPI_Win_unlock(1, win);
    MPI_Send(NULL, 0, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(NULL, 0, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const int* as_int = (const int*)mem;
    CHECK_EQ(as_int[2], 1); /* the put, at displacement 1 (8 bytes) */
    CHECK_EQ(as_int[4], 5); /* the accumulate, at displacement 2 (16 bytes): 4 + 1 */
    CHECK_EQ(mem[7], 8);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  if (rank == 0) printf("all checks passed\n");
  return 0;
}
