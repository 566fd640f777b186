/* MPI_Cancel: a receive no message has matched is withdrawn, and the message meant for it goes to
 * a later receive exactly once; a matched receive and a send are not cancelled and complete
 * normally; a persistent receive can be cancelled and started again. MPI_Test_cancelled,
 * MPI_Status_set_cancelled, MPI_Status_set_elements(_x). Needs at least 2 ranks. */
#include "check.h"

enum { GO = 1, DATA = 5, FIRST = 6, SECOND = 7 };

static int cancelled(const MPI_Status* st) {
  int flag = -1;
  MPI_Test_cancelled(st, &flag);
  return flag;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Status st;

  /* Rank 0 posts a wildcard receive and cancels it before anyone may send (they wait for its GO):
   * then every other rank's DATA message is received once, by the receives that follow. */
  if (rank == 0) {
    int v = -1;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, DATA, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(cancelled(&st), 1);
    CHECK_EQ(v, -1);
    for (int p = 1; p < size; ++p) MPI_Send(&p, 1, MPI_INT, p, GO, MPI_COMM_WORLD);
    int got[64] = {0};
    for (int k = 1; k < size; ++k) {
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, DATA, MPI_COMM_WORLD, &st);
      CHECK_EQ(v, 10 * st.MPI_SOURCE);
      CHECK_EQ(cancelled(&st), 0);
      got[st.MPI_SOURCE]++;
    }
    for (int p = 1; p < size; ++p) CHECK_EQ(got[p], 1);
    int flag = 1;
    MPI_Barrier(MPI_COMM_WORLD); /* every DATA message was sent before it: none is left over */
    MPI_Iprobe(MPI_ANY_SOURCE, DATA, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK_EQ(flag, 0);
  } else {
    int go, v = 10 * rank;
    MPI_Recv(&go, 1, MPI_INT, 0, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 0, DATA, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* Rank 1 sends FIRST then SECOND to rank 0 (a pair's messages arrive in order); once rank 0 has
   * received SECOND, FIRST has matched its receive: the cancel fails and the receive completes. A
   * send is never cancelled: it completes and its message is received. */
  if (rank == 1) {
    int a = 41, b = 42, c = 43;
    MPI_Send(&a, 1, MPI_INT, 0, FIRST, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 0, SECOND, MPI_COMM_WORLD);
    MPI_Request s;
    MPI_Isend(&c, 1, MPI_INT, 0, DATA, MPI_COMM_WORLD, &s);
    MPI_Cancel(&s);
    MPI_Wait(&s, &st);
    CHECK_EQ(cancelled(&st), 0);
  } else if (rank == 0) {
    int a = 0, b = 0, c = 0;
    MPI_Request r;
    MPI_Irecv(&a, 1, MPI_INT, 1, FIRST, MPI_COMM_WORLD, &r);
    MPI_Recv(&b, 1, MPI_INT, 1, SECOND, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    CHECK_EQ(cancelled(&st), 0);
    CHECK_EQ(st.MPI_TAG, FIRST);
    CHECK_EQ(a, 41);
    CHECK_EQ(b, 42);
    MPI_Recv(&c, 1, MPI_INT, 1, DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(c, 43);
  }

  /* A persistent receive, cancelled while active, then started again on a sub-communicator of the
   * ranks but rank 0: the next message goes to it. */
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, -rank, &sub);
  if (sub != MPI_COMM_NULL) {
    int sr, ss, v = -1;
    MPI_Comm_rank(sub, &sr);
    MPI_Comm_size(sub, &ss);
    MPI_Request r;
    MPI_Recv_init(&v, 1, MPI_INT, MPI_ANY_SOURCE, DATA, sub, &r);
    MPI_Start(&r);
    MPI_Cancel(&r);
    int flag = 0;
    MPI_Test(&r, &flag, &st);
    CHECK_EQ(flag, 1);
    CHECK_EQ(cancelled(&st), 1);
    CHECK(r != MPI_REQUEST_NULL);
    MPI_Barrier(sub);
    int out = 1000 + sr;
    MPI_Start(&r);
    MPI_Send(&out, 1, MPI_INT, (sr + 1) % ss, DATA, sub);
    MPI_Wait(&r, &st);
    CHECK_EQ(cancelled(&st), 0);
    CHECK_EQ(v, 1000 + (sr + ss - 1) % ss);
    MPI_Request_free(&r);
    MPI_Comm_free(&sub);
  }

  /* Errors: cancelling MPI_REQUEST_NULL or an inactive persistent request. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Request nul = MPI_REQUEST_NULL, idle;
  CHECK_EQ(MPI_Cancel(&nul), MPI_ERR_REQUEST);
  int x;
  MPI_Recv_init(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &idle);
  CHECK_EQ(MPI_Cancel(&idle), MPI_ERR_REQUEST);
  MPI_Request_free(&idle);

  /* Statuses set by hand, as a generalized request's query function would. */
  MPI_Status made;
  MPI_Status_set_cancelled(&made, 1);
  CHECK_EQ(cancelled(&made), 1);
  MPI_Status_set_cancelled(&made, 0);
  CHECK_EQ(cancelled(&made), 0);
  MPI_Status_set_elements(&made, MPI_DOUBLE, 6);
  int n = -1;
  MPI_Get_count(&made, MPI_DOUBLE, &n);
  CHECK_EQ(n, 6);
  MPI_Get_elements(&made, MPI_DOUBLE, &n);
  CHECK_EQ(n, 6);
  MPI_Status_set_elements_x(&made, MPI_INT, (MPI_Count)5);
  MPI_Get_count(&made, MPI_INT, &n);
  CHECK_EQ(n, 5);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Status_set_elements(&made, pair, 4); /* 4 ints: 2 whole pairs */
  MPI_Get_count(&made, pair, &n);
  CHECK_EQ(n, 2);
  MPI_Get_elements(&made, pair, &n);
  CHECK_EQ(n, 4);
  MPI_Type_free(&pair);
  CHECK_EQ(MPI_Status_set_elements(&made, MPI_INT, -1), MPI_ERR_COUNT);

  MPI_Finalize();
  if (rank == 0) printf("p2p_cancel: all checks passed on %d ranks\n", size);
  return 0;
}
