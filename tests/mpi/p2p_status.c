/* MPI_Request_get_status (never frees), and the corner cases of the completion calls: null
 * requests mixed with active ones, MPI_STATUSES_IGNORE, MPI_ERR_IN_STATUS with an error per
 * status, MPI_Testall completing nothing until all are complete, the empty status; generalized
 * requests. Needs at least 3 ranks. */
#include "check.h"

enum { GO = 1, DATA = 2 };

static void expect_empty(const MPI_Status* st) {
  CHECK_EQ(st->MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st->MPI_TAG, MPI_ANY_TAG);
  int n = -1, flag = -1;
  MPI_Get_count(st, MPI_INT, &n);
  CHECK_EQ(n, 0);
  MPI_Test_cancelled(st, &flag);
  CHECK_EQ(flag, 0);
}

/* A generalized request's functions count their calls in its extra state. */
struct calls {
  int query, free, cancel, cancel_complete;
};
static int query_fn(void* extra, MPI_Status* st) {
  struct calls* c = extra;
  c->query++;
  st->MPI_SOURCE = 5;
  st->MPI_TAG = 6;
  MPI_Status_set_elements(st, MPI_INT, 3);
  MPI_Status_set_cancelled(st, c->cancel > 0);
  return MPI_SUCCESS;
}
static int free_fn(void* extra) {
  ((struct calls*)extra)->free++;
  return MPI_SUCCESS;
}
static int cancel_fn(void* extra, int complete) {
  struct calls* c = extra;
  c->cancel++;
  c->cancel_complete = complete;
  return MPI_SUCCESS;
}

/* Generalized requests: incomplete until the program says so (a test says not complete, a wait
 * with nothing else to complete is an error rather than a hang), then complete with the status
 * its query function gives; free_fn runs once, when the request is freed. */
static void generalized(void) {
  struct calls c = {0, 0, 0, 0};
  MPI_Request r;
  MPI_Status st;
  int flag = -1, index = -1;
  MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r);
  MPI_Test(&r, &flag, &st);
  CHECK_EQ(flag, 0);
  CHECK_EQ(MPI_Waitany(1, &r, &index, &st), MPI_ERR_REQUEST);
  MPI_Grequest_complete(r);
  CHECK_EQ(c.free, 0);
  MPI_Wait(&r, &st);
  CHECK(r == MPI_REQUEST_NULL);
  CHECK_EQ(c.query, 1);
  CHECK_EQ(c.free, 1);
  CHECK_EQ(st.MPI_SOURCE, 5);
  CHECK_EQ(st.MPI_TAG, 6);
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 3);
  /* Cancelled before completion, then freed before completion: free_fn runs at completion. */
  MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r);
  MPI_Cancel(&r);
  CHECK_EQ(c.cancel, 1);
  CHECK_EQ(c.cancel_complete, 0);
  MPI_Request keep = r;
  MPI_Request_free(&r);
  CHECK(r == MPI_REQUEST_NULL);
  CHECK_EQ(c.free, 1);
  MPI_Grequest_complete(keep);
  CHECK_EQ(c.free, 2);
  /* In MPI_Waitall beside a receive from MPI_PROC_NULL. */
  MPI_Request two[2];
  int x;
  MPI_Grequest_start(query_fn, free_fn, NULL, &c, &two[0]);
  MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &two[1]);
  MPI_Grequest_complete(two[0]);
  MPI_Status sts[2];
  MPI_Waitall(2, two, sts);
  CHECK_EQ(sts[0].MPI_TAG, 6);
  MPI_Test_cancelled(&sts[0], &flag);
  CHECK_EQ(flag, 1); /* its query function says so, having seen the cancel above */
  CHECK_EQ(sts[1].MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(c.free, 3);
}

/* MPI_Request_free of active receives (a plain one and a started persistent one): they still take
 * their messages, in order. Rank 1 sends three messages with one tag to rank 2, which frees two
 * receives and then receives the third: by then the first two are in the freed receives' buffers
 * (a pair's messages with one tag match in order). A non-contiguous one cannot be freed. */
static void freed_receives(int rank) {
  if (rank == 1) {
    for (int v = 1; v <= 3; ++v) MPI_Send(&v, 1, MPI_INT, 2, 30, MPI_COMM_WORLD);
  } else if (rank == 2) {
    int a = 0, b = 0, c = 0;
    MPI_Request r, p;
    MPI_Irecv(&a, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, &r);
    MPI_Recv_init(&b, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, &p);
    MPI_Start(&p);
    CHECK_EQ(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&p), MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL && p == MPI_REQUEST_NULL);
    MPI_Recv(&c, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(a, 1);
    CHECK_EQ(b, 2);
    CHECK_EQ(c, 3);
    int strided[4];
    MPI_Datatype every_other;
    MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Irecv(strided, 1, every_other, 1, 31, MPI_COMM_WORLD, &r);
    CHECK_EQ(MPI_Request_free(&r), MPI_ERR_UNSUPPORTED_OPERATION);
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Type_free(&every_other);
  }
}

/* MPI-4.1's MPI_Request_get_status_any, _all and _some: what MPI_Testany, _Testall and _Testsome
 * say, with every request kept for the call that frees it; and a status's accessors. Rank 1 sends
 * tag 40 after rank 0's first GO and tag 41 after its second, so rank 0 sees none, one, then both
 * complete. Needs MPI_ERRORS_RETURN on MPI_COMM_WORLD. */
static void several_statuses(int rank) {
  int flag = -1, index = -1, out = -1, idx[3];
  MPI_Status st, sts[3];
  if (rank == 0) {
    int a = 0, b = 0, go = 0;
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&a, 1, MPI_INT, 1, 40, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(&b, 1, MPI_INT, 1, 41, MPI_COMM_WORLD, &r[2]);
    CHECK_EQ(MPI_Request_get_status_any(3, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(flag == 0 && index == MPI_UNDEFINED);
    CHECK_EQ(MPI_Request_get_status_all(3, r, &flag, sts), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Request_get_status_some(3, r, &out, idx, sts), MPI_SUCCESS);
    CHECK_EQ(out, 0);
    MPI_Send(&go, 0, MPI_INT, 1, GO, MPI_COMM_WORLD);
    do MPI_Request_get_status_any(3, r, &index, &flag, &st);
    while (!flag);
    CHECK_EQ(index, 1);
    CHECK_EQ(st.MPI_TAG, 40);
    CHECK(r[1] != MPI_REQUEST_NULL);
    MPI_Request_get_status_some(3, r, &out, idx, sts);
    CHECK(out == 1 && idx[0] == 1 && sts[0].MPI_TAG == 40 && sts[0].MPI_ERROR == MPI_SUCCESS);
    MPI_Request_get_status_all(3, r, &flag, sts);
    CHECK_EQ(flag, 0);
    MPI_Send(&go, 0, MPI_INT, 1, GO, MPI_COMM_WORLD);
    do MPI_Request_get_status_all(3, r, &flag, sts);
    while (!flag);
    expect_empty(&sts[0]);
    CHECK(sts[1].MPI_TAG == 40 && sts[2].MPI_TAG == 41);
    CHECK(r[1] != MPI_REQUEST_NULL && r[2] != MPI_REQUEST_NULL);
    CHECK(a == 40 && b == 41);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    /* Nothing active: any says complete with no index, some says MPI_UNDEFINED. */
    CHECK_EQ(MPI_Request_get_status_any(3, r, &index, &flag, &st), MPI_SUCCESS);
    CHECK(flag == 1 && index == MPI_UNDEFINED);
    expect_empty(&st);
    MPI_Request_get_status_some(3, r, &out, idx, MPI_STATUSES_IGNORE);
    CHECK_EQ(out, MPI_UNDEFINED);
    /* A truncated receive: its error in its status, MPI_ERR_IN_STATUS from the call. */
    MPI_Irecv(&a, 1, MPI_INT, 1, 42, MPI_COMM_WORLD, &r[0]);
    int rc;
    do rc = MPI_Request_get_status_all(1, r, &flag, sts);
    while (!flag);
    CHECK_EQ(rc, MPI_ERR_IN_STATUS);
    CHECK_EQ(sts[0].MPI_ERROR, MPI_ERR_TRUNCATE);
    CHECK_EQ(MPI_Wait(&r[0], &st), MPI_ERR_TRUNCATE);
  } else if (rank == 1) {
    int v40 = 40, v41 = 41, two[2] = {1, 2};
    MPI_Recv(NULL, 0, MPI_INT, 0, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v40, 1, MPI_INT, 0, 40, MPI_COMM_WORLD);
    MPI_Recv(NULL, 0, MPI_INT, 0, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v41, 1, MPI_INT, 0, 41, MPI_COMM_WORLD);
    MPI_Send(two, 2, MPI_INT, 0, 42, MPI_COMM_WORLD);
  }
  int v = -1;
  CHECK_EQ(MPI_Status_set_source(&st, 7), MPI_SUCCESS);
  CHECK_EQ(MPI_Status_set_tag(&st, 8), MPI_SUCCESS);
  CHECK_EQ(MPI_Status_set_error(&st, MPI_ERR_TAG), MPI_SUCCESS);
  MPI_Status_get_source(&st, &v);
  CHECK_EQ(v, 7);
  MPI_Status_get_tag(&st, &v);
  CHECK_EQ(v, 8);
  MPI_Status_get_error(&st, &v);
  CHECK_EQ(v, MPI_ERR_TAG);
  CHECK_EQ(MPI_Status_get_source(NULL, &v), MPI_ERR_ARG);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Status st, sts[4];
  int flag = -1;

  /* Rank 0 asks for the status of a receive before its message can exist (rank 1 sends only after
   * GO): not complete. Then until it is: complete, and the request is still there; asking again
   * gives the same status, and MPI_Wait then frees it. */
  if (rank == 0) {
    int v = 0;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, 1, DATA, MPI_COMM_WORLD, &r);
    MPI_Request_get_status(r, &flag, &st);
    CHECK_EQ(flag, 0);
    MPI_Send(&v, 1, MPI_INT, 1, GO, MPI_COMM_WORLD);
    int polls = 0;
    do {
      MPI_Request_get_status(r, &flag, &st);
      ++polls;
    } while (!flag);
    CHECK(polls > 1);
    CHECK(r != MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, 1);
    CHECK_EQ(v, 77);
    MPI_Request_get_status(r, &flag, &st);
    CHECK_EQ(flag, 1);
    CHECK_EQ(st.MPI_TAG, DATA);
    st.MPI_ERROR = MPI_ERR_DIMS; /* a call returning one status leaves its error field alone */
    MPI_Wait(&r, &st);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, 1);
    CHECK_EQ(st.MPI_ERROR, MPI_ERR_DIMS);
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    CHECK_EQ(flag, 1);
    expect_empty(&st);
    CHECK_EQ(st.MPI_ERROR, MPI_SUCCESS); /* the empty status's */
  } else if (rank == 1) {
    int go, v = 77;
    MPI_Recv(&go, 1, MPI_INT, 0, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 0, DATA, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* MPI_Testall completes none until all are complete: rank 2 sends one message, then (after
   * rank 0's GO) the other. */
  if (rank == 0) {
    int a = 0, b = 0;
    MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&a, 1, MPI_INT, 2, 10, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(&b, 1, MPI_INT, 2, 11, MPI_COMM_WORLD, &r[3]);
    MPI_Probe(2, 12, MPI_COMM_WORLD, &st); /* the first message has arrived by now */
    MPI_Testall(4, r, &flag, sts);
    CHECK_EQ(flag, 0);
    CHECK(r[1] != MPI_REQUEST_NULL && r[3] != MPI_REQUEST_NULL);
    MPI_Recv(&a, 0, MPI_INT, 2, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&a, 0, MPI_INT, 2, GO, MPI_COMM_WORLD);
    do MPI_Testall(4, r, &flag, sts); while (!flag);
    for (int i = 0; i < 4; ++i) CHECK(r[i] == MPI_REQUEST_NULL);
    expect_empty(&sts[0]);
    expect_empty(&sts[2]);
    CHECK_EQ(sts[1].MPI_TAG, 10);
    CHECK_EQ(sts[3].MPI_TAG, 11);
    CHECK_EQ(a, 100);
    CHECK_EQ(b, 101);
  } else if (rank == 2) {
    int a = 100, b = 101;
    MPI_Send(&a, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    MPI_Send(&a, 0, MPI_INT, 0, 12, MPI_COMM_WORLD);
    MPI_Recv(&a, 0, MPI_INT, 0, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&b, 1, MPI_INT, 0, 11, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Each rank sends two ints and one int to the next rank, which receives them into buffers of
   * one int each: MPI_Waitall says MPI_ERR_IN_STATUS, the truncated receive's status says
   * MPI_ERR_TRUNCATE and the other's MPI_SUCCESS; null requests get the empty status. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int two[2] = {rank, rank}, x = 0, y = 0;
  MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Irecv(&x, 1, MPI_INT, prev, 20, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&y, 1, MPI_INT, prev, 21, MPI_COMM_WORLD, &r[2]);
  MPI_Send(two, 2, MPI_INT, next, 20, MPI_COMM_WORLD);
  MPI_Send(two, 1, MPI_INT, next, 21, MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) sts[i].MPI_ERROR = -1;
  CHECK_EQ(MPI_Waitall(4, r, sts), MPI_ERR_IN_STATUS);
  CHECK_EQ(sts[0].MPI_ERROR, MPI_ERR_TRUNCATE);
  CHECK_EQ(sts[2].MPI_ERROR, MPI_SUCCESS);
  CHECK_EQ(x, prev);
  CHECK_EQ(y, prev);
  expect_empty(&sts[1]);
  for (int i = 0; i < 4; ++i) CHECK(r[i] == MPI_REQUEST_NULL);
  /* The same with MPI_STATUSES_IGNORE: the error class alone says so. */
  MPI_Irecv(&x, 1, MPI_INT, prev, 22, MPI_COMM_WORLD, &r[1]);
  MPI_Send(two, 2, MPI_INT, next, 22, MPI_COMM_WORLD);
  CHECK_EQ(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), MPI_ERR_IN_STATUS);
  CHECK(r[1] == MPI_REQUEST_NULL);
  /* Every request null: MPI_Waitall and MPI_Testall succeed at once, with empty statuses. */
  CHECK_EQ(MPI_Waitall(4, r, sts), MPI_SUCCESS);
  for (int i = 0; i < 4; ++i) expect_empty(&sts[i]);
  CHECK_EQ(MPI_Testall(4, r, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  CHECK_EQ(flag, 1);
  CHECK_EQ(MPI_Wait(&r[0], &st), MPI_SUCCESS);
  expect_empty(&st);
  /* A bad handle among good ones is MPI_ERR_REQUEST, and nothing is touched. */
  MPI_Request bad[2] = {MPI_REQUEST_NULL, 4242};
  int index;
  CHECK_EQ(MPI_Waitany(2, bad, &index, &st), MPI_ERR_REQUEST);
  CHECK_EQ(MPI_Testall(2, bad, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  CHECK_EQ(MPI_Waitall(-1, bad, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
  several_statuses(rank);
  freed_receives(rank);
  generalized();
  MPI_Finalize();
  if (rank == 0) printf("p2p_status: all checks passed on %d ranks\n", size);
  return 0;
}
