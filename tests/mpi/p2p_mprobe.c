/* Matched probes: MPI_Mprobe/MPI_Improbe take a message out of matching, so that no other receive
 * gets it, and MPI_Mrecv/MPI_Imrecv receive exactly it; with wildcards, two matched messages held
 * at once and received in the other order, a wildcard receive posted meanwhile, truncation,
 * MPI_MESSAGE_NO_PROC. Needs at least 2 ranks. */
#include <stdlib.h>

#include "check.h"

enum { A = 3, B = 4, EXTRA = 5 };

/* Rank r > 0 sends two messages to rank 0: tag A with r ints, tag B with r + 1 ints, each int
 * 100 * r + tag. */
static void send_two(int rank) {
  int msg[64];
  for (int i = 0; i < rank + 1; ++i) msg[i] = 100 * rank + A;
  MPI_Send(msg, rank, MPI_INT, 0, A, MPI_COMM_WORLD);
  for (int i = 0; i < rank + 1; ++i) msg[i] = 100 * rank + B;
  MPI_Send(msg, rank + 1, MPI_INT, 0, B, MPI_COMM_WORLD);
}

static void check_message(const int* msg, const MPI_Status* st) {
  int count;
  MPI_Get_count(st, MPI_INT, &count);
  CHECK_EQ(count, st->MPI_TAG == A ? st->MPI_SOURCE : st->MPI_SOURCE + 1);
  for (int i = 0; i < count; ++i) CHECK_EQ(msg[i], 100 * st->MPI_SOURCE + st->MPI_TAG);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  if (rank != 0) send_two(rank);
  if (rank == 0) {
    int got[64][2] = {{0}};
    /* Two matched messages at once (any source, any tag), then a wildcard receive posted while
     * both are held: it must take a third message, never one of the two. */
    int remaining = 2 * (size - 1);
    while (remaining >= 3) {
      MPI_Message m1, m2;
      MPI_Status s1, s2, s3;
      MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m1, &s1);
      MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m2, &s2);
      CHECK(m1 != MPI_MESSAGE_NULL && m2 != MPI_MESSAGE_NULL && m1 != m2);
      int third[64], one[64], two[64];
      MPI_Request r;
      MPI_Irecv(third, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
      MPI_Mrecv(two, 64, MPI_INT, &m2, &s3); /* the second first */
      CHECK(m2 == MPI_MESSAGE_NULL);
      CHECK_EQ(s3.MPI_SOURCE, s2.MPI_SOURCE);
      CHECK_EQ(s3.MPI_TAG, s2.MPI_TAG);
      check_message(two, &s3);
      MPI_Request r1;
      MPI_Imrecv(one, 64, MPI_INT, &m1, &r1);
      CHECK(m1 == MPI_MESSAGE_NULL);
      MPI_Wait(&r1, &s3);
      CHECK_EQ(s3.MPI_SOURCE, s1.MPI_SOURCE);
      CHECK_EQ(s3.MPI_TAG, s1.MPI_TAG);
      check_message(one, &s3);
      MPI_Wait(&r, &s3);
      check_message(third, &s3);
      CHECK(!(s3.MPI_SOURCE == s1.MPI_SOURCE && s3.MPI_TAG == s1.MPI_TAG));
      CHECK(!(s3.MPI_SOURCE == s2.MPI_SOURCE && s3.MPI_TAG == s2.MPI_TAG));
      got[s1.MPI_SOURCE][s1.MPI_TAG - A]++;
      got[s2.MPI_SOURCE][s2.MPI_TAG - A]++;
      got[s3.MPI_SOURCE][s3.MPI_TAG - A]++;
      remaining -= 3;
    }
    /* The rest with MPI_Improbe (polling) for tag B, then tag A, from any source. */
    while (remaining > 0) {
      int flag = 0;
      MPI_Message m;
      MPI_Status s;
      for (int tag = B; tag >= A && !flag; --tag) MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &m, &s);
      if (!flag) continue;
      int msg[64];
      MPI_Mrecv(msg, 64, MPI_INT, &m, &s);
      check_message(msg, &s);
      got[s.MPI_SOURCE][s.MPI_TAG - A]++;
      --remaining;
    }
    for (int p = 1; p < size; ++p) {
      CHECK_EQ(got[p][0], 1);
      CHECK_EQ(got[p][1], 1);
    }
    /* Nothing left, and an improbe finding nothing gives no message. */
    int flag = 1;
    MPI_Message m = 12345;
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
    CHECK_EQ(flag, 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, whose receive completes at once. */
  MPI_Message m;
  MPI_Status s;
  MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &s);
  CHECK(m == MPI_MESSAGE_NO_PROC);
  CHECK_EQ(s.MPI_SOURCE, MPI_PROC_NULL);
  int x = 7;
  MPI_Mrecv(&x, 1, MPI_INT, &m, &s);
  CHECK(m == MPI_MESSAGE_NULL);
  CHECK_EQ(s.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(x, 7);

  /* On a sub-communicator (ranks in reverse order): a matched message longer than the buffer
   * given to MPI_Mrecv is truncated (MPI_ERR_TRUNCATE), with its first ints received. */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
  int rr;
  MPI_Comm_rank(rev, &rr);
  if (rr == 1) {
    int big[3] = {1, 2, 3};
    MPI_Send(big, 3, MPI_INT, 0, EXTRA, rev);
  } else if (rr == 0) {
    int small[2] = {0, 0};
    MPI_Mprobe(1, EXTRA, rev, &m, &s);
    CHECK_EQ(s.MPI_SOURCE, 1);
    int n;
    MPI_Get_count(&s, MPI_INT, &n);
    CHECK_EQ(n, 3);
    CHECK_EQ(MPI_Mrecv(small, 2, MPI_INT, &m, &s), MPI_ERR_TRUNCATE);
    CHECK_EQ(small[0], 1);
    CHECK_EQ(small[1], 2);
    /* A handle that names no matched message has no communicator: the world's handler hears. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Message bad = 999;
    CHECK_EQ(MPI_Mrecv(small, 2, MPI_INT, &bad, &s), MPI_ERR_REQUEST);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  MPI_Comm_free(&rev);
  MPI_Finalize();
  if (rank == 0) printf("p2p_mprobe: all checks passed on %d ranks\n", size);
  return 0;
}
