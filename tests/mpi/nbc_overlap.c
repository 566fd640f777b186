/* The progress model of nonblocking collectives (docs/mpi.md, docs/model.md 1.7), in exact
 * virtual times computed by hand. Run on two ranks of
 *   mesh:1x2,send_us=10,recv_us=20,probe_us=3,hop_ns=50,{link,inject,eject}_ns_per_byte=10,
 *   packet=1024+16, hardware barrier of 1 us, every other cost 0, overlap off
 * (nonblocking_collectives.cmake). A 100-byte broadcast from rank 0 is one message over d = 1 hop:
 *   handed to the network  h = t0 + C_send                         = t0 + 10 us
 *   wire bytes             W = 100 + 16 = 116, at b = 10 ns       -> 1.16 us
 *   root's send returns    h + W b                                 = t0 + 11.16 us
 *   rank 1's arrival       h + (d + 1) t_hop + W b = t0 + 10 + 0.1 + 1.16 = t0 + 11.26 us
 *   rank 1's receive done  arrival + C_recv                        = t0 + 31.26 us
 * The collective runs in a task beside the program, on its own clock: waiting at once ends at
 * those times; a program that polls with MPI_Test (3 us per test that finds it incomplete)
 * completes it at the first poll at or after them: after ceil(11.16 / 3) = 4 failed polls at
 * t0 + 12 us on rank 0, after ceil(31.26 / 3) = 11 at t0 + 33 us on rank 1. The hardware barrier
 * releases both ranks at the last arrival + 1 us, so every phase starts at one time t0. */
#include "check.h"

static long long ps(double seconds) { return (long long)(seconds * 1e12 + 0.5); }

/* Starts a 100-byte MPI_Ibcast from rank 0 at a common time; returns the time to its completion
 * and the number of MPI_Test calls that found it incomplete (polling), or 0 (a plain wait). */
static long long ibcast(int rank, int poll, int* failed) {
  char buf[100];
  for (int i = 0; i < 100; ++i) buf[i] = rank == 0 ? (char)i : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  MPI_Request q;
  CHECK_EQ(MPI_Ibcast(buf, 100, MPI_CHAR, 0, MPI_COMM_WORLD, &q), MPI_SUCCESS);
  *failed = 0;
  if (poll) {
    int flag = 0;
    for (;;) {
      CHECK_EQ(MPI_Test(&q, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
      if (flag) break;
      ++*failed;
    }
  } else {
    CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
  }
  const long long t = ps(MPI_Wtime() - t0);
  for (int i = 0; i < 100; ++i) CHECK_EQ(buf[i], (char)i);
  return t;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK_EQ(size, 2);
  int failed = -1;
  /* The blocking broadcast and the nonblocking one, waited for at once, take the same time. */
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  char b[100] = {0};
  MPI_Bcast(b, 100, MPI_CHAR, 0, MPI_COMM_WORLD);
  CHECK_EQ(ps(MPI_Wtime() - t0), rank == 0 ? 11160000 : 31260000);
  CHECK_EQ(ibcast(rank, 0, &failed), rank == 0 ? 11160000 : 31260000);
  /* Polling overlaps the program's work (its tests) with the broadcast's. */
  CHECK_EQ(ibcast(rank, 1, &failed), rank == 0 ? 12000000 : 33000000);
  CHECK_EQ(failed, rank == 0 ? 4 : 11);
  /* A nonblocking barrier: the hardware barrier releases at the last arrival + 1 us. */
  MPI_Barrier(MPI_COMM_WORLD);
  const double t1 = MPI_Wtime();
  MPI_Request q;
  CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &q), MPI_SUCCESS);
  int flag = 0, polls = 0;
  for (; !flag; ++polls) CHECK_EQ(MPI_Test(&q, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(ps(MPI_Wtime() - t1), 3000000);
  CHECK_EQ(polls, 2);
  if (rank == 0) printf("nbc_overlap: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
