/* MPI-4.0's MPI_Isendrecv and MPI_Isendrecv_replace: one request for a send and a receive, complete
 * when both are, its status the receive's. Ring exchanges (data, source, tag, count), to itself, the
 * replace form with contiguous and strided datatypes, MPI_PROC_NULL on either side, every completion
 * call, MPI_Request_get_status, MPI_Request_free, MPI_Cancel, message order beside other requests,
 * an intercommunicator, truncation and argument errors under MPI_ERRORS_RETURN. Needs at least 3
 * ranks. Modes: "checked" (for mpirun --check: no request freed while active), and the erroneous
 * "leak", "deadlock" and "owned", whose reports point_to_point.cmake asserts. */
#include <string.h>

#include "check.h"

enum { N = 4 };

static int rank, size, left, right;

static int count_of(const MPI_Status* st, MPI_Datatype t) {
  int n = -1;
  MPI_Get_count(st, t, &n);
  return n;
}

/* A status from `source` with `tag` and n ints. */
static void expect_status(const MPI_Status* st, int source, int tag, int n) {
  CHECK_EQ(st->MPI_SOURCE, source);
  CHECK_EQ(st->MPI_TAG, tag);
  CHECK_EQ(count_of(st, MPI_INT), n);
}

/* Receive buffers start as -1; what a ring neighbour sends is 1000 * its rank + index + base. */
static void fill(int* v, int n, int value) {
  for (int i = 0; i < n; ++i) v[i] = value;
}
static void ramp(int* v, int n, int from, int base) {
  for (int i = 0; i < n; ++i) v[i] = 1000 * from + i + base;
}
static void expect_ramp(const int* v, int n, int from, int base) {
  for (int i = 0; i < n; ++i) CHECK_EQ(v[i], 1000 * from + i + base);
}

/* Each rank sends to the right and receives from the left, with MPI_Wait; the tag tells the sender.
 * The receive has room for one more int than comes, which stays as it was. Then with itself. */
static void ring(void) {
  int out[N], in[N + 1];
  ramp(out, N, rank, 0);
  fill(in, N + 1, -1);
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Status st;
  CHECK_EQ(MPI_Isendrecv(out, N, MPI_INT, right, 100 + rank, in, N + 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &r),
           MPI_SUCCESS);
  CHECK(r != MPI_REQUEST_NULL);
  st.MPI_ERROR = MPI_ERR_DIMS; /* a call returning one status leaves its error field alone */
  MPI_Wait(&r, &st);
  CHECK(r == MPI_REQUEST_NULL);
  expect_ramp(in, N, left, 0);
  CHECK_EQ(in[N], -1);
  expect_status(&st, left, 100 + left, N);
  CHECK_EQ(st.MPI_ERROR, MPI_ERR_DIMS);

  fill(in, N + 1, -1);
  MPI_Isendrecv(out, 2, MPI_INT, rank, 7, in, N, MPI_INT, rank, 7, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, &st);
  expect_ramp(in, 2, rank, 0);
  CHECK_EQ(in[2], -1);
  expect_status(&st, rank, 7, 2);
}

/* The replace form: the buffer ends holding the left neighbour's data, the right one got ours (the
 * data is taken at the call). Contiguous ints; a contiguous derived type; a strided vector type
 * (ints 0, 1, 3, 4, 6, 7 of 9), whose gaps keep their values. */
static void replace(void) {
  int buf[9];
  MPI_Request r;
  MPI_Status st;
  ramp(buf, 3, rank, 0);
  MPI_Isendrecv_replace(buf, 3, MPI_INT, right, 200, left, 200, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, &st);
  expect_ramp(buf, 3, left, 0);
  expect_status(&st, left, 200, 3);

  MPI_Datatype triple, strided;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  ramp(buf, 6, rank, 10);
  MPI_Isendrecv_replace(buf, 2, triple, right, 201, MPI_ANY_SOURCE, 201, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, &st);
  expect_ramp(buf, 6, left, 10);
  CHECK_EQ(st.MPI_SOURCE, left);
  CHECK_EQ(count_of(&st, triple), 2);

  MPI_Type_vector(3, 2, 3, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  ramp(buf, 9, rank, 20);
  MPI_Isendrecv_replace(buf, 1, strided, left, 202, right, 202, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, &st);
  for (int i = 0; i < 9; ++i) CHECK_EQ(buf[i], 1000 * (i % 3 == 2 ? rank : right) + i + 20);
  CHECK_EQ(st.MPI_SOURCE, right);
  CHECK_EQ(st.MPI_TAG, 202);
  CHECK_EQ(count_of(&st, strided), 1);
  int elements = -1;
  MPI_Get_elements(&st, MPI_INT, &elements);
  CHECK_EQ(elements, 6);
  MPI_Type_free(&triple);
  MPI_Type_free(&strided);
}

/* MPI_PROC_NULL: a send to it leaves the receive to do (from the left), a receive from it leaves
 * the send (to the right: the receive above takes it) and gets the null status, buffer untouched;
 * both null is complete at once, MPI_DATATYPE_NULL accepted on either side. */
static void proc_null(void) {
  int out[2] = {1000 * rank, 1000 * rank + 1}, a[2] = {-1, -1}, b[2] = {-1, -1};
  MPI_Request r[2];
  MPI_Status st[2];
  MPI_Isendrecv(out, 2, MPI_INT, MPI_PROC_NULL, 300, a, 2, MPI_INT, left, 301, MPI_COMM_WORLD, &r[0]);
  MPI_Isendrecv(out, 2, MPI_INT, right, 301, b, 2, MPI_INT, MPI_PROC_NULL, 301, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, st);
  CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
  expect_ramp(a, 2, left, 0);
  expect_status(&st[0], left, 301, 2);
  CHECK_EQ(b[0], -1);
  expect_status(&st[1], MPI_PROC_NULL, MPI_ANY_TAG, 0);

  int flag = 0;
  MPI_Request n;
  MPI_Isendrecv(NULL, 3, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, NULL, 3, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0,
                MPI_COMM_WORLD, &n);
  MPI_Test(&n, &flag, &st[0]);
  CHECK_EQ(flag, 1);
  CHECK(n == MPI_REQUEST_NULL);
  expect_status(&st[0], MPI_PROC_NULL, MPI_ANY_TAG, 0);
  MPI_Isendrecv_replace(b, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &n);
  MPI_Wait(&n, &st[0]);
  CHECK_EQ(b[1], -1);
  expect_status(&st[0], MPI_PROC_NULL, MPI_ANY_TAG, 0);
}

/* MPI_Waitall over an MPI_Irecv, an MPI_Isendrecv, an MPI_Isend, an MPI_Isendrecv_replace (the other
 * way round the ring) and a null request; the pairs' statuses are their receives'. Then message
 * order: an MPI_Isendrecv's receive is posted before a later MPI_Irecv of the same source and tag,
 * and its send before a later MPI_Isend, so each takes the first message. */
static void waitall(void) {
  int a = -1, b = 1000 * rank + 1, c = -1, d = 1000 * rank + 3, e = 1000 * rank + 4;
  MPI_Request r[5];
  MPI_Status st[5];
  MPI_Irecv(&a, 1, MPI_INT, left, 400, MPI_COMM_WORLD, &r[0]);
  MPI_Isendrecv(&b, 1, MPI_INT, right, 401, &c, 1, MPI_INT, left, 401, MPI_COMM_WORLD, &r[1]);
  MPI_Isend(&d, 1, MPI_INT, right, 400, MPI_COMM_WORLD, &r[2]);
  MPI_Isendrecv_replace(&e, 1, MPI_INT, left, 402, right, 402, MPI_COMM_WORLD, &r[3]);
  r[4] = MPI_REQUEST_NULL;
  CHECK_EQ(MPI_Waitall(5, r, st), MPI_SUCCESS);
  for (int i = 0; i < 5; ++i) CHECK(r[i] == MPI_REQUEST_NULL);
  CHECK_EQ(a, 1000 * left + 3);
  CHECK_EQ(c, 1000 * left + 1);
  CHECK_EQ(e, 1000 * right + 4);
  expect_status(&st[0], left, 400, 1);
  expect_status(&st[1], left, 401, 1);
  expect_status(&st[3], right, 402, 1);
  expect_status(&st[4], MPI_ANY_SOURCE, MPI_ANY_TAG, 0);

  int first = 1000 * rank + 5, second = 1000 * rank + 6, x = -1, y = -1;
  MPI_Isendrecv(&first, 1, MPI_INT, right, 403, &x, 1, MPI_INT, left, 403, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&y, 1, MPI_INT, left, 403, MPI_COMM_WORLD, &r[1]);
  MPI_Isend(&second, 1, MPI_INT, right, 403, MPI_COMM_WORLD, &r[2]);
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  CHECK_EQ(x, 1000 * left + 5);
  CHECK_EQ(y, 1000 * left + 6);
}

/* Polling. Rank 1 sends its half only after rank 0's GO, which rank 0 sends after it has found
 * its pair incomplete with MPI_Test and MPI_Request_get_status; it then tests until complete, and
 * MPI_Request_get_status leaves the complete request for MPI_Wait. Every rank then rings with an
 * MPI_Test loop, with MPI_Testall, MPI_Testany and MPI_Testsome. */
static void polling(void) {
  MPI_Request r;
  MPI_Status st;
  int flag = -1, x = 1000 * rank, y = -1;
  if (rank == 0) {
    MPI_Isendrecv(&x, 1, MPI_INT, 1, 500, &y, 1, MPI_INT, 1, 501, MPI_COMM_WORLD, &r);
    MPI_Test(&r, &flag, &st);
    CHECK_EQ(flag, 0);
    MPI_Request_get_status(r, &flag, &st);
    CHECK_EQ(flag, 0);
    MPI_Send(&x, 0, MPI_INT, 1, 502, MPI_COMM_WORLD);
    int polls = 0;
    do {
      MPI_Request_get_status(r, &flag, &st);
      ++polls;
    } while (!flag);
    CHECK(polls > 1);
    CHECK(r != MPI_REQUEST_NULL);
    expect_status(&st, 1, 501, 1);
    MPI_Wait(&r, &st);
    CHECK(r == MPI_REQUEST_NULL);
    expect_status(&st, 1, 501, 1);
    CHECK_EQ(y, 1000);
  } else if (rank == 1) {
    MPI_Recv(&y, 0, MPI_INT, 0, 502, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Isendrecv(&x, 1, MPI_INT, 0, 501, &y, 1, MPI_INT, 0, 500, MPI_COMM_WORLD, &r);
    do MPI_Test(&r, &flag, &st); while (!flag);
    CHECK(r == MPI_REQUEST_NULL);
    expect_status(&st, 0, 500, 1);
    CHECK_EQ(y, 0);
  }

  int out[N], in[N];
  ramp(out, N, rank, 50);
  fill(in, N, -1);
  MPI_Isendrecv(out, N, MPI_INT, right, 503, in, N, MPI_INT, left, 503, MPI_COMM_WORLD, &r);
  do MPI_Test(&r, &flag, &st); while (!flag);
  CHECK(r == MPI_REQUEST_NULL);
  expect_ramp(in, N, left, 50);
  expect_status(&st, left, 503, N);

  MPI_Request two[2];
  MPI_Status sts[2];
  int a[2] = {-1, -1};
  MPI_Isendrecv(&out[0], 1, MPI_INT, right, 504, &a[0], 1, MPI_INT, left, 504, MPI_COMM_WORLD, &two[0]);
  MPI_Isendrecv(&out[1], 1, MPI_INT, left, 505, &a[1], 1, MPI_INT, right, 505, MPI_COMM_WORLD, &two[1]);
  do MPI_Testall(2, two, &flag, sts); while (!flag);
  CHECK(two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL);
  CHECK_EQ(a[0], 1000 * left + 50);
  CHECK_EQ(a[1], 1000 * right + 51);
  expect_status(&sts[0], left, 504, 1);
  expect_status(&sts[1], right, 505, 1);

  int seen[2] = {0, 0}, index = -1;
  fill(a, 2, -1);
  MPI_Isendrecv(&out[0], 1, MPI_INT, right, 506, &a[0], 1, MPI_INT, left, 506, MPI_COMM_WORLD, &two[0]);
  MPI_Isendrecv(&out[1], 1, MPI_INT, left, 507, &a[1], 1, MPI_INT, right, 507, MPI_COMM_WORLD, &two[1]);
  for (int done = 0; done < 2;) {
    MPI_Testany(2, two, &index, &flag, &st);
    if (!flag) continue;
    CHECK(index == 0 || index == 1);
    CHECK(two[index] == MPI_REQUEST_NULL);
    expect_status(&st, index == 0 ? left : right, 506 + index, 1);
    ++seen[index];
    ++done;
  }
  MPI_Testany(2, two, &index, &flag, &st);
  CHECK_EQ(flag, 1);
  CHECK_EQ(index, MPI_UNDEFINED);
  CHECK(seen[0] == 1 && seen[1] == 1);
  CHECK_EQ(a[0], 1000 * left + 50);
  CHECK_EQ(a[1], 1000 * right + 51);

  a[0] = -1;
  a[1] = 1000 * rank + 7;
  seen[0] = seen[1] = 0;
  MPI_Isendrecv(&out[0], 1, MPI_INT, right, 508, &a[0], 1, MPI_INT, left, 508, MPI_COMM_WORLD, &two[0]);
  MPI_Isendrecv_replace(&a[1], 1, MPI_INT, left, 509, right, 509, MPI_COMM_WORLD, &two[1]);
  for (int done = 0; done < 2;) {
    int outcount = -1, indices[2];
    MPI_Testsome(2, two, &outcount, indices, sts);
    CHECK(outcount >= 0 && outcount <= 2 - done);
    for (int k = 0; k < outcount; ++k) {
      const int i = indices[k];
      expect_status(&sts[k], i == 0 ? left : right, 508 + i, 1);
      ++seen[i];
    }
    done += outcount;
  }
  CHECK(seen[0] == 1 && seen[1] == 1);
  CHECK_EQ(a[0], 1000 * left + 50);
  CHECK_EQ(a[1], 1000 * right + 7);
}

/* MPI_Waitany returns a pair only when both of its halves are complete: rank 0's pair waits for
 * rank 1's second message, which rank 1 sends after its MPI_Irecv's message, and only when rank 0,
 * having seen MPI_Waitany return that receive, says GO. Then MPI_Waitsome over two rings. */
static void waitany(void) {
  MPI_Request r[2];
  MPI_Status st;
  int index = -1, x = 1000 * rank, y = -1, z = -1;
  if (rank == 0) {
    MPI_Isendrecv(&x, 1, MPI_INT, 1, 600, &y, 1, MPI_INT, 1, 601, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&z, 1, MPI_INT, 1, 602, MPI_COMM_WORLD, &r[1]);
    MPI_Waitany(2, r, &index, &st);
    CHECK_EQ(index, 1);
    expect_status(&st, 1, 602, 1);
    CHECK(r[0] != MPI_REQUEST_NULL);
    MPI_Send(&x, 0, MPI_INT, 1, 603, MPI_COMM_WORLD);
    MPI_Waitany(2, r, &index, &st);
    CHECK_EQ(index, 0);
    expect_status(&st, 1, 601, 1);
    CHECK_EQ(y, 1000);
    CHECK_EQ(z, 1001);
    MPI_Waitany(2, r, &index, &st);
    CHECK_EQ(index, MPI_UNDEFINED);
  } else if (rank == 1) {
    int w = 1001;
    MPI_Recv(&y, 1, MPI_INT, 0, 600, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(y, 0);
    MPI_Send(&w, 1, MPI_INT, 0, 602, MPI_COMM_WORLD);
    MPI_Recv(&w, 0, MPI_INT, 0, 603, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, 0, 601, MPI_COMM_WORLD);
  }

  int out[2] = {1000 * rank, 1000 * rank + 1}, in[2] = {-1, -1}, seen[2] = {0, 0};
  MPI_Isendrecv(&out[0], 1, MPI_INT, right, 604, &in[0], 1, MPI_INT, left, 604, MPI_COMM_WORLD, &r[0]);
  MPI_Isendrecv(&out[1], 1, MPI_INT, left, 605, &in[1], 1, MPI_INT, right, 605, MPI_COMM_WORLD, &r[1]);
  for (int done = 0; done < 2;) {
    int outcount = -1, indices[2];
    MPI_Status sts[2];
    MPI_Waitsome(2, r, &outcount, indices, sts);
    CHECK(outcount >= 1 && outcount <= 2 - done);
    for (int k = 0; k < outcount; ++k) {
      const int i = indices[k];
      expect_status(&sts[k], i == 0 ? left : right, 604 + i, 1);
      ++seen[i];
    }
    done += outcount;
  }
  CHECK(seen[0] == 1 && seen[1] == 1);
  CHECK_EQ(in[0], 1000 * left);
  CHECK_EQ(in[1], 1000 * right + 1);
  int outcount = 0, indices[2];
  MPI_Waitsome(2, r, &outcount, indices, MPI_STATUSES_IGNORE);
  CHECK_EQ(outcount, MPI_UNDEFINED);
}

/* MPI_Cancel of a pair is refused as a send's is: the pair completes normally, not cancelled.
 * MPI_Request_free of an active pair (not in "checked" mode, where --check reports it): its
 * receive still takes rank 0's first message (a pair's messages with one tag match in order) and
 * its send is delivered. In "checked" mode the pair is freed once MPI_Request_get_status says it
 * is complete. */
static void cancel_and_free(int checked) {
  int out = 1000 * rank, in = -1, cancelled = -1;
  MPI_Request r;
  MPI_Status st;
  MPI_Isendrecv(&out, 1, MPI_INT, right, 700, &in, 1, MPI_INT, left, 700, MPI_COMM_WORLD, &r);
  CHECK_EQ(MPI_Cancel(&r), MPI_SUCCESS);
  MPI_Wait(&r, &st);
  MPI_Test_cancelled(&st, &cancelled);
  CHECK_EQ(cancelled, 0);
  expect_status(&st, left, 700, 1);
  CHECK_EQ(in, 1000 * left);

  if (rank == 0) {
    int one = 1, two = 2, back = -1;
    MPI_Request sends[2];
    MPI_Isend(&one, 1, MPI_INT, 1, 701, MPI_COMM_WORLD, &sends[0]);
    MPI_Isend(&two, 1, MPI_INT, 1, 701, MPI_COMM_WORLD, &sends[1]);
    MPI_Recv(&back, 1, MPI_INT, 1, 702, MPI_COMM_WORLD, &st);
    CHECK_EQ(back, 77);
    MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
  } else if (rank == 1) {
    static int first = -1; /* the freed receive may write it until MPI_Finalize */
    int second = -1, back = 77, flag = 0;
    MPI_Isendrecv(&back, 1, MPI_INT, 0, 702, &first, 1, MPI_INT, 0, 701, MPI_COMM_WORLD, &r);
    if (checked)
      do MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE); while (!flag);
    CHECK_EQ(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    MPI_Recv(&second, 1, MPI_INT, 0, 701, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(first, 1);
    CHECK_EQ(second, 2);
  }
}

/* An intercommunicator of the even and the odd world ranks: ranks name the remote group. Each local
 * rank below both groups' sizes swaps with the remote rank of its number; a destination that is a
 * rank of the local group only is MPI_ERR_RANK. */
static void intercomm(void) {
  const int color = rank % 2;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 800, &inter);
  int lrank, lsize, rsize;
  rank_and_size(local, &lrank, &lsize);
  MPI_Comm_remote_size(inter, &rsize);
  const int pairs = lsize < rsize ? lsize : rsize;
  if (lrank < pairs) {
    int out = 1000 * color + lrank, in = -1, both[2] = {out, out + 1};
    MPI_Request r;
    MPI_Status st;
    MPI_Isendrecv(&out, 1, MPI_INT, lrank, 801 + color, &in, 1, MPI_INT, lrank, 802 - color, inter, &r);
    MPI_Wait(&r, &st);
    CHECK_EQ(in, 1000 * (1 - color) + lrank);
    expect_status(&st, lrank, 802 - color, 1);
    MPI_Isendrecv_replace(both, 2, MPI_INT, lrank, 803, MPI_ANY_SOURCE, 803, inter, &r);
    MPI_Wait(&r, &st);
    CHECK_EQ(both[0], 1000 * (1 - color) + lrank);
    CHECK_EQ(both[1], 1000 * (1 - color) + lrank + 1);
    expect_status(&st, lrank, 803, 2);
  }
  if (lsize > rsize) {
    int x = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Isendrecv(&x, 1, MPI_INT, rsize, 0, &x, 0, MPI_INT, 0, 0, inter, &r), MPI_ERR_RANK);
    CHECK(r == MPI_REQUEST_NULL);
  }
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

/* Under MPI_ERRORS_RETURN: every bad argument returns its class (those MPI_Sendrecv returns) and
 * posts nothing, so the message the left neighbour sends next goes to the receive after them; a
 * truncated receive fails its pair in MPI_Wait and MPI_Waitall. */
static void errors(void) {
  int x[2] = {0, 0}, y[2] = {-1, -1};
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Datatype loose;
  MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Isendrecv(x, -1, MPI_INT, right, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, 0, y, -2, MPI_INT, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_EQ(MPI_Isendrecv_replace(y, -1, MPI_INT, right, 0, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_DATATYPE_NULL, right, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r),
           MPI_ERR_TYPE);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, 0, y, 1, loose, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
  CHECK_EQ(MPI_Isendrecv_replace(y, 1, loose, right, 0, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, size, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r),
           MPI_ERR_RANK);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, 0, y, 1, MPI_INT, -7, 900, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, -1, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, MPI_ANY_TAG, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r),
           MPI_ERR_TAG);
  CHECK_EQ(MPI_Isendrecv_replace(y, 1, MPI_INT, right, 0, left, -3, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, 0, y, 1, MPI_INT, left, 900, MPI_COMM_NULL, &r), MPI_ERR_COMM);
  CHECK_EQ(MPI_Isendrecv_replace(y, 1, MPI_INT, right, 0, left, 900, MPI_COMM_NULL, &r), MPI_ERR_COMM);
  CHECK_EQ(MPI_Isendrecv(x, 1, MPI_INT, right, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Isendrecv_replace(y, 1, MPI_INT, right, 0, left, 900, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Isendrecv(x, 2, MPI_INT, right, 0, x + 1, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
  CHECK(r == MPI_REQUEST_NULL);
  /* The same classes as MPI_Sendrecv's, which checks both halves before it posts either: a bad send
   * argument leaves no receive behind to take the message below. */
  CHECK_EQ(MPI_Sendrecv(x, -1, MPI_INT, right, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_COUNT);
  CHECK_EQ(MPI_Sendrecv(x, 1, loose, right, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_TYPE);
  CHECK_EQ(MPI_Sendrecv(x, 1, MPI_INT, size, 0, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_RANK);
  CHECK_EQ(MPI_Sendrecv(x, 1, MPI_INT, right, -1, y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_TAG);
  CHECK_EQ(MPI_Sendrecv(x, 1, MPI_INT, right, 0, y, -2, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_COUNT);
  CHECK_EQ(MPI_Sendrecv(x, 1, MPI_INT, right, 0, y, 1, loose, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_TYPE);
  CHECK_EQ(MPI_Sendrecv(x, 1, MPI_INT, right, 0, y, 1, MPI_INT, -7, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_RANK);
  CHECK_EQ(MPI_Sendrecv(x, 1, MPI_INT, right, 0, y, 1, MPI_INT, left, -3, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_TAG);
  CHECK_EQ(MPI_Sendrecv(x, 2, MPI_INT, right, 0, x + 1, 1, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_BUFFER);
  MPI_Type_free(&loose);

  int v = 1000 * rank + 9;
  MPI_Isend(&v, 1, MPI_INT, right, 900, MPI_COMM_WORLD, &r);
  MPI_Recv(y, 1, MPI_INT, left, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(y[0], 1000 * left + 9);

  MPI_Status st, sts[2];
  int pair[2] = {1000 * rank, 1000 * rank + 1}, one = -1, other = -1;
  st.MPI_ERROR = MPI_SUCCESS;
  MPI_Isendrecv(pair, 2, MPI_INT, right, 901, &one, 1, MPI_INT, left, 901, MPI_COMM_WORLD, &r);
  CHECK_EQ(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
  CHECK_EQ(st.MPI_ERROR, MPI_ERR_TRUNCATE);
  CHECK_EQ(one, 1000 * left);
  MPI_Request two[2];
  MPI_Isendrecv(pair, 2, MPI_INT, right, 902, &one, 1, MPI_INT, left, 902, MPI_COMM_WORLD, &two[0]);
  MPI_Isendrecv(pair, 1, MPI_INT, left, 903, &other, 1, MPI_INT, right, 903, MPI_COMM_WORLD, &two[1]);
  CHECK_EQ(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS);
  CHECK_EQ(sts[0].MPI_ERROR, MPI_ERR_TRUNCATE);
  CHECK_EQ(sts[1].MPI_ERROR, MPI_SUCCESS);
  CHECK_EQ(other, 1000 * right);
  CHECK(two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  right = (rank + 1) % size;
  left = (rank + size - 1) % size;
  const char* mode = argc > 1 ? argv[1] : "all";
  int out[4] = {1, 2, 3, 4}, in[4] = {0};
  MPI_Request r;
  if (!strcmp(mode, "leak")) { /* rank 1's pair is never completed; its receive is from MPI_PROC_NULL */
    if (rank == 1) MPI_Isendrecv(out, 1, MPI_INT, 0, 5, in, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &r);
    if (rank == 0) MPI_Recv(in, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
  }
  if (!strcmp(mode, "deadlock")) { /* ranks 0 and 1 each wait for a tag the other never sends */
    if (rank < 2) {
      MPI_Isendrecv(out, 1, MPI_INT, 1 - rank, 7, in, 1, MPI_INT, 1 - rank, 8, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
  }
  if (!strcmp(mode, "owned")) { /* rank 0 writes its send buffer while its pair is pending */
    if (rank < 2) {
      MPI_Isendrecv(out, 4, MPI_INT, 1 - rank, 3, in, 4, MPI_INT, 1 - rank, 3, MPI_COMM_WORLD, &r);
      if (rank == 0) out[2] = 9;
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
  }
  ring();
  replace();
  proc_null();
  waitall();
  polling();
  waitany();
  cancel_and_free(!strcmp(mode, "checked"));
  intercomm();
  errors();
  return all_checks_passed("p2p_isendrecv");
}
