/* Partitioned communication (MPI-4.0 chapter 4): a ring of partitioned sends and receives started
 * again and again, with different partition counts on the two sides, partitions marked ready out of
 * order (one at a time, by range and by list) and polled with MPI_Parrived; a strided receive type;
 * two pairs between the same ranks, both directions with one tag and two tags initialized in opposite
 * orders; MPI_PROC_NULL; and the errors a program can make, returned under MPI_ERRORS_RETURN.
 * Needs at least 2 ranks. */
#include "check.h"

enum { ROUNDS = 4, N = 60 };

static int value(int rank, int round, int i) { return 100000 * rank + 1000 * round + i; }

/* Round k: each rank sends N ints to the next rank in `sparts` partitions and receives the previous
 * rank's in `rparts`, marking its partitions ready last to first, one per Pready, by range or by list. */
static void ring(int sparts, int rparts, int how) {
  int rank, size;
  rank_and_size(MPI_COMM_WORLD, &rank, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int out[N], in[N];
  MPI_Request send, recv;
  MPI_Psend_init(out, sparts, N / sparts, MPI_INT, next, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &send);
  MPI_Precv_init(in, rparts, N / rparts, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &recv);
  for (int k = 0; k < ROUNDS; ++k) {
    for (int i = 0; i < N; ++i) out[i] = value(rank, k, i), in[i] = -1;
    MPI_Start(&recv);
    MPI_Start(&send);
    if (how == 0) {
      for (int p = sparts - 1; p >= 0; --p) MPI_Pready(p, send);
    } else if (how == 1) {
      MPI_Pready_range(sparts / 2, sparts - 1, send);
      if (sparts / 2 > 0) MPI_Pready_range(0, sparts / 2 - 1, send);
    } else {
      int list[N];
      for (int p = 0; p < sparts; ++p) list[p] = sparts - 1 - p;
      MPI_Pready_list(sparts, list, send);
    }
    /* Each receive partition, polled until it is in: its values, though others may still be out. */
    for (int p = 0; p < rparts; ++p) {
      int flag = 0;
      while (!flag) MPI_Parrived(recv, p, &flag);
      for (int i = p * (N / rparts); i < (p + 1) * (N / rparts); ++i) CHECK_EQ(in[i], value(prev, k, i));
    }
    MPI_Status st[2];
    MPI_Request both[2] = {send, recv};
    MPI_Waitall(2, both, st);
    CHECK(both[0] == send && both[1] == recv); /* inactive, not freed */
    CHECK_EQ(st[1].MPI_SOURCE, prev);
    CHECK_EQ(st[1].MPI_TAG, 7);
    int count;
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK_EQ(count, N);
    /* An inactive receive's partitions have all arrived. */
    int flag = 0;
    MPI_Parrived(recv, rparts - 1, &flag);
    CHECK_EQ(flag, 1);
  }
  MPI_Request_free(&send);
  MPI_Request_free(&recv);
  CHECK(send == MPI_REQUEST_NULL && recv == MPI_REQUEST_NULL);
}

/* Rank 0 and rank 1 send each other partitioned messages with one tag (the directions must not
 * meet), and two more with tags 1 and 2 that rank 0 initializes in the order 1, 2 and rank 1 in the
 * order 2, 1: each matches its own tag. The receive of tag 1 has a strided type, every other int. */
static void pairs(void) {
  int rank, size;
  rank_and_size(MPI_COMM_WORLD, &rank, &size);
  if (rank > 1) return;
  const int other = 1 - rank;
  int a[8], b[8], t1[6], t2[6], strided[12];
  MPI_Datatype every_other;
  MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  for (int i = 0; i < 8; ++i) a[i] = 10 * rank + i, b[i] = -1;
  for (int i = 0; i < 12; ++i) strided[i] = -1;
  MPI_Request r[4];
  MPI_Psend_init(a, 4, 2, MPI_INT, other, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
  MPI_Precv_init(b, 2, 4, MPI_INT, other, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
  if (rank == 0) {
    for (int i = 0; i < 6; ++i) t1[i] = 100 + i, t2[i] = 200 + i;
    MPI_Psend_init(t1, 3, 2, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Psend_init(t2, 2, 3, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
  } else {
    MPI_Precv_init(t2, 1, 6, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    MPI_Precv_init(strided, 2, 1, every_other, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
  }
  MPI_Startall(4, r);
  MPI_Pready_range(0, 3, r[0]);
  if (rank == 0) {
    MPI_Pready_range(0, 2, r[2]);
    MPI_Pready_range(0, 1, r[3]);
  }
  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
  for (int i = 0; i < 8; ++i) CHECK_EQ(b[i], 10 * other + i);
  if (rank == 1) {
    for (int i = 0; i < 6; ++i) CHECK_EQ(t2[i], 200 + i);
    /* Two elements of three ints two apart, the second one extent (five ints) after the first. */
    const int want[12] = {100, -1, 101, -1, 102, 103, -1, 104, -1, 105, -1, -1};
    for (int i = 0; i < 12; ++i) CHECK_EQ(strided[i], want[i]);
  }
  for (int i = 0; i < 4; ++i) MPI_Request_free(&r[i]);
  MPI_Type_free(&every_other);
}

/* MPI_PROC_NULL: nothing moves, every partition is ready and arrived at once. */
static void proc_null(void) {
  int x[4] = {1, 2, 3, 4};
  MPI_Request s, r;
  MPI_Psend_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
  MPI_Precv_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Start(&s);
  MPI_Start(&r);
  MPI_Pready_range(0, 1, s);
  int flag = 0;
  MPI_Parrived(r, 1, &flag);
  CHECK_EQ(flag, 1);
  MPI_Status st;
  MPI_Wait(&r, &st);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  CHECK_EQ(x[3], 4);
  MPI_Request_free(&s);
  MPI_Request_free(&r);
}

/* The program's errors, returned: each names the call's mistake by its class. */
static void errors(void) {
  int rank, size;
  rank_and_size(MPI_COMM_WORLD, &rank, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x[4] = {0}, cls;
  MPI_Request s, r;
  MPI_Error_class(MPI_Precv_init(x, 2, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r), &cls);
  CHECK_EQ(cls, MPI_ERR_RANK);
  MPI_Error_class(MPI_Precv_init(x, 2, 2, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r), &cls);
  CHECK_EQ(cls, MPI_ERR_TAG);
  MPI_Error_class(MPI_Psend_init(x, 0, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Psend_init(x, 2, 2, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
  MPI_Precv_init(x + 0, 2, 2, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Error_class(MPI_Pready(0, s), &cls); /* not started */
  CHECK_EQ(cls, MPI_ERR_REQUEST);
  MPI_Start(&s);
  MPI_Start(&r);
  MPI_Error_class(MPI_Pready(2, s), &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Error_class(MPI_Pready(0, r), &cls); /* a receive is not marked ready */
  CHECK_EQ(cls, MPI_ERR_REQUEST);
  MPI_Pready(0, s);
  MPI_Error_class(MPI_Pready(0, s), &cls); /* twice */
  CHECK_EQ(cls, MPI_ERR_ARG);
  /* Waiting while partition 1 is not ready would wait forever: refused; a test says not complete. */
  MPI_Error_class(MPI_Wait(&s, MPI_STATUS_IGNORE), &cls);
  CHECK_EQ(cls, MPI_ERR_REQUEST);
  int flag = 1;
  MPI_Test(&s, &flag, MPI_STATUS_IGNORE);
  CHECK_EQ(flag, 0);
  MPI_Pready(1, s);
  MPI_Request both[2] = {s, r};
  CHECK_EQ(MPI_Waitall(2, both, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  MPI_Request_free(&both[0]);
  MPI_Request_free(&both[1]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 2);
  ring(1, 1, 0);
  ring(4, 4, 1);
  ring(3, 5, 2);
  ring(6, 4, 0);
  ring(60, 1, 1);
  pairs();
  proc_null();
  errors();
  return all_checks_passed("p2p_partitioned");
}
