/* MPI-4.0 sessions (chapter 11): MPI used without MPI_Init. Process sets and their info, groups
 * from them, communicators from groups (several with one string tag, one of a part of the ranks, an
 * intercommunicator between the even and the odd ranks), traffic and collectives on them, a
 * session's error handler, and a second session after the first is finalized. With "world" the
 * program calls MPI_Init first and checks that both models work side by side. Without MPI_Init
 * there is no MPI_COMM_WORLD to abort on: a failed check ends the rank with exit status 3. With
 * "null" or "after" it makes a mistake that must end the run with a report in MPI's terms: a call
 * on MPI_SESSION_NULL, a communicator used after the last session is finalized. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static int me = -1; /* world rank, from the session's world group */
#define CHECK_RANK() me
#define CHECK_STOP() exit(3)
#include "check.h"

static int handler_calls = 0, handler_code = 0;
static void count_errors(MPI_Session* s, int* code, ...) {
  (void)s;
  ++handler_calls;
  handler_code = *code;
}

static void psets(MPI_Session s, int np) {
  int n = -1;
  CHECK_EQ(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n), MPI_SUCCESS);
  CHECK_EQ(n, 2);
  int world_seen = 0, self_seen = 0;
  for (int i = 0; i < n; ++i) {
    int len = 0;
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL), MPI_SUCCESS);
    char name[MPI_MAX_PSET_NAME_LEN];
    CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN);
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name), MPI_SUCCESS);
    CHECK_EQ((int)strlen(name) + 1, len);
    MPI_Info info;
    CHECK_EQ(MPI_Session_get_pset_info(s, name, &info), MPI_SUCCESS);
    char value[32];
    int flag = 0;
    MPI_Info_get(info, "mpi_size", sizeof value - 1, value, &flag);
    CHECK(flag);
    MPI_Info_free(&info);
    if (strcmp(name, "mpi://WORLD") == 0) {
      world_seen = 1;
      CHECK_EQ(atoi(value), np);
    }
    if (strcmp(name, "mpi://SELF") == 0) {
      self_seen = 1;
      CHECK_EQ(atoi(value), 1);
    }
  }
  CHECK(world_seen && self_seen);
  /* A buffer too short gets the name cut, and the length of the whole name. */
  char cut[4];
  int len = (int)sizeof cut;
  CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, cut), MPI_SUCCESS);
  CHECK_EQ(strcmp(cut, "mpi"), 0);
  CHECK_EQ(len, (int)strlen("mpi://WORLD") + 1);
  /* The session returns its errors: no third set, no such name. */
  len = 0;
  CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, NULL), MPI_ERR_ARG);
  MPI_Group g;
  CHECK_EQ(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g), MPI_ERR_ARG);
  /* Names are URIs: their scheme and authority are not case-sensitive. */
  CHECK_EQ(MPI_Group_from_session_pset(s, "mpi://self", &g), MPI_SUCCESS);
  int size = -1, rank = -1;
  MPI_Group_size(g, &size);
  MPI_Group_rank(g, &rank);
  CHECK_EQ(size, 1);
  CHECK_EQ(rank, 0);
  MPI_Group_free(&g);
}

/* One session's whole life: sets, groups, communicators and traffic on them. */
static void library(int round) {
  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "thread_level", "MPI_THREAD_MULTIPLE");
  MPI_Session s = MPI_SESSION_NULL;
  CHECK_EQ(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s), MPI_SUCCESS);
  CHECK(s != MPI_SESSION_NULL);
  MPI_Info_free(&hints);

  MPI_Info used;
  CHECK_EQ(MPI_Session_get_info(s, &used), MPI_SUCCESS);
  char level[64];
  int flag = 0;
  MPI_Info_get(used, "thread_level", sizeof level - 1, level, &flag);
  CHECK(flag);
  CHECK_EQ(strcmp(level, "MPI_THREAD_SINGLE"), 0); /* what is provided, as MPI_Query_thread says */
  MPI_Info_free(&used);

  MPI_Group world;
  CHECK_EQ(MPI_Group_from_session_pset(s, "mpi://WORLD", &world), MPI_SUCCESS);
  int np = -1;
  MPI_Group_size(world, &np);
  MPI_Group_rank(world, &me);
  psets(s, np);

  /* Two communicators of every rank with the same tag are two: their messages never cross. */
  MPI_Comm a, b;
  CHECK_EQ(MPI_Comm_create_from_group(world, "org.touchstone.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &a),
           MPI_SUCCESS);
  CHECK_EQ(MPI_Comm_create_from_group(world, "org.touchstone.sessions", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &b),
           MPI_SUCCESS);
  int rank = -1, size = -1, result = -1;
  MPI_Comm_rank(a, &rank);
  MPI_Comm_size(a, &size);
  CHECK_EQ(rank, me);
  CHECK_EQ(size, np);
  MPI_Comm_compare(a, b, &result);
  CHECK_EQ(result, MPI_CONGRUENT);
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(a, &eh);
  CHECK_EQ(eh, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(b, &eh);
  CHECK_EQ(eh, MPI_ERRORS_ARE_FATAL);
  const int right = (me + 1) % np, left = (me + np - 1) % np;
  int on_a = 100 * round + me, on_b = -on_a, got_a = -1, got_b = -1;
  MPI_Request sends[2];
  MPI_Isend(&on_a, 1, MPI_INT, right, 0, a, &sends[0]);
  MPI_Isend(&on_b, 1, MPI_INT, right, 0, b, &sends[1]);
  MPI_Recv(&got_b, 1, MPI_INT, left, 0, b, MPI_STATUS_IGNORE); /* b's first, though a's was sent first */
  MPI_Recv(&got_a, 1, MPI_INT, left, 0, a, MPI_STATUS_IGNORE);
  MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
  CHECK_EQ(got_a, 100 * round + left);
  CHECK_EQ(got_b, -(100 * round + left));
  int sum = -1;
  MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, b);
  CHECK_EQ(sum, np * (np - 1) / 2);
  /* An error on a communicator goes to the handler it was made with. */
  CHECK_EQ(MPI_Send(&me, 1, MPI_INT, np, 0, a), MPI_ERR_RANK);

  /* A communicator of the even ranks only, made by them alone, in reverse order. */
  if (me % 2 == 0) {
    const int n = (np + 1) / 2;
    int ranks[64];
    for (int i = 0; i < n; ++i) ranks[i] = 2 * (n - 1 - i);
    MPI_Group evens;
    MPI_Group_incl(world, n, ranks, &evens);
    MPI_Comm e;
    CHECK_EQ(MPI_Comm_create_from_group(evens, "evens", MPI_INFO_NULL, MPI_ERRORS_RETURN, &e), MPI_SUCCESS);
    MPI_Comm_rank(e, &rank);
    CHECK_EQ(rank, n - 1 - me / 2);
    int top = -1;
    MPI_Reduce(&me, &top, 1, MPI_INT, MPI_MAX, 0, e);
    if (rank == 0) CHECK_EQ(top, 2 * (n - 1));
    MPI_Comm_free(&e);
    MPI_Group_free(&evens);
  }

  /* An intercommunicator between the even and the odd ranks. */
  if (np >= 2) {
    const int odd = me % 2, ne = (np + 1) / 2, no = np / 2;
    int ranks[64];
    for (int i = 0; i < ne; ++i) ranks[i] = 2 * i;
    MPI_Group evens, odds;
    MPI_Group_incl(world, ne, ranks, &evens);
    for (int i = 0; i < no; ++i) ranks[i] = 2 * i + 1;
    MPI_Group_incl(world, no, ranks, &odds);
    MPI_Comm ic;
    CHECK_EQ(MPI_Intercomm_create_from_groups(odd ? odds : evens, 0, odd ? evens : odds, 0, "halves", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &ic),
             MPI_SUCCESS);
    int inter = 0, remote = -1;
    MPI_Comm_test_inter(ic, &inter);
    CHECK(inter);
    MPI_Comm_remote_size(ic, &remote);
    CHECK_EQ(remote, odd ? ne : no);
    MPI_Comm_rank(ic, &rank);
    CHECK_EQ(rank, me / 2);
    /* Rank i of each side trades world ranks with rank i of the other, where both exist. */
    if (rank < (odd ? ne : no)) {
      int peer = -1;
      MPI_Sendrecv(&me, 1, MPI_INT, rank, 7, &peer, 1, MPI_INT, rank, 7, ic, MPI_STATUS_IGNORE);
      CHECK_EQ(peer, odd ? me - 1 : me + 1);
    }
    int total = -1; /* an intercommunicator's allreduce: each side gets the other side's sum */
    MPI_Allreduce(&me, &total, 1, MPI_INT, MPI_SUM, ic);
    CHECK_EQ(total, odd ? ne * (ne - 1) : no * no);
    MPI_Comm_free(&ic);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
  }

  /* The session's own error handler. */
  MPI_Errhandler counting;
  CHECK_EQ(MPI_Session_create_errhandler(count_errors, &counting), MPI_SUCCESS);
  CHECK_EQ(MPI_Session_set_errhandler(s, counting), MPI_SUCCESS);
  MPI_Session_get_errhandler(s, &eh);
  CHECK_EQ(eh, counting);
  handler_calls = 0;
  CHECK_EQ(MPI_Session_call_errhandler(s, MPI_ERR_OTHER), MPI_SUCCESS);
  CHECK_EQ(handler_calls, 1);
  CHECK_EQ(handler_code, MPI_ERR_OTHER);
  CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &flag, NULL), MPI_ERR_ARG);
  CHECK_EQ(handler_calls, 2);
  CHECK_EQ(handler_code, MPI_ERR_ARG);
  MPI_Errhandler_free(&counting);

  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  MPI_Group_free(&world);
  CHECK_EQ(MPI_Session_finalize(&s), MPI_SUCCESS);
  CHECK_EQ(s, MPI_SESSION_NULL);
}

/* A new session *s and a communicator of every rank made in it with `tag`. */
static MPI_Comm session_world(MPI_Session* s, const char* tag) {
  CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s), MPI_SUCCESS);
  MPI_Group g;
  CHECK_EQ(MPI_Group_from_session_pset(*s, "mpi://WORLD", &g), MPI_SUCCESS);
  MPI_Comm c;
  CHECK_EQ(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c), MPI_SUCCESS);
  MPI_Group_free(&g);
  return c;
}

/* MPI-4.1's buffer of a session: the buffered sends of its communicators, derived ones too, go
 * through it unless a communicator has a buffer of its own; the world has none here. */
static void session_buffers(void) {
  enum { N = 1000 };
  static int data[N], in[N];
  const int one = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
  MPI_Session s;
  MPI_Comm c = session_world(&s, "buffers"), d;
  int rank, size;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, 1, c), MPI_ERR_BUFFER);
  char* buf = malloc((size_t)one);
  CHECK_EQ(MPI_Session_attach_buffer(s, buf, one), MPI_SUCCESS);
  CHECK_EQ(MPI_Session_attach_buffer(s, buf, one), MPI_ERR_BUFFER); /* one at a time */
  MPI_Comm_dup(c, &d);
  for (int i = 0; i < N; ++i) data[i] = rank + i;
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, 1, c), MPI_SUCCESS);
  /* Its packets are still leaving: the session's buffer is full, for the duplicate as well. */
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, 2, d), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Session_flush_buffer(s), MPI_SUCCESS);
  for (int i = 0; i < N; ++i) data[i] = 2 * rank + i;
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, 2, d), MPI_SUCCESS);
  /* A buffer of the duplicate's own serves it alone, whatever room the session's has. */
  CHECK_EQ(MPI_Comm_attach_buffer(d, MPI_BUFFER_AUTOMATIC, 0), MPI_SUCCESS);
  for (int k = 3; k <= 4; ++k) {
    for (int i = 0; i < N; ++i) data[i] = k * rank + i;
    CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, k, d), MPI_SUCCESS);
  }
  MPI_Request r;
  CHECK_EQ(MPI_Session_iflush_buffer(s, &r), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  MPI_Recv(in, N, MPI_INT, prev, 1, c, MPI_STATUS_IGNORE);
  for (int i = 0; i < N; ++i) CHECK_EQ(in[i], prev + i);
  for (int k = 2; k <= 4; ++k) {
    MPI_Recv(in, N, MPI_INT, prev, k, d, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i) CHECK_EQ(in[i], k * prev + i);
  }
  void* back = NULL;
  int back_size = -1;
  CHECK_EQ(MPI_Comm_detach_buffer(d, &back, &back_size), MPI_SUCCESS);
  CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0);
  CHECK_EQ(MPI_Session_detach_buffer(s, &back, &back_size), MPI_SUCCESS);
  CHECK(back == buf && back_size == one);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  CHECK_EQ(MPI_Session_finalize(&s), MPI_SUCCESS);
  free(buf);
}

static int mistake(const char* which) {
  MPI_Session s;
  MPI_Comm c = session_world(&s, "mistake");
  int n = 0;
  if (strcmp(which, "null") == 0) MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n);
  MPI_Session_finalize(&s);
  MPI_Comm_size(c, &n); /* "after": no session is open any more */
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "null") == 0 || strcmp(argv[1], "after") == 0)) return mistake(argv[1]);
  const int with_world = argc > 1 && strcmp(argv[1], "world") == 0;
  int flag = -1;
  if (with_world) MPI_Init(&argc, &argv);
  MPI_Initialized(&flag);
  CHECK_EQ(flag, with_world); /* a session does not initialize the world model */
  library(1);
  library(2); /* a session may begin after another has been finalized */
  session_buffers();
  if (with_world) {
    /* MPI_COMM_WORLD and the session's communicators side by side. */
    MPI_Session s;
    MPI_Comm c = session_world(&s, "with the world");
    int result = -1;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &result);
    CHECK_EQ(result, MPI_CONGRUENT);
    int x = me, y = -1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c);
    int z = -1;
    MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK_EQ(y, z);
    MPI_Comm_free(&c);
    MPI_Session_finalize(&s);
  }
  MPI_Initialized(&flag);
  CHECK_EQ(flag, with_world);
  if (me == 0) printf("sessions: all checks passed\n");
  if (with_world) MPI_Finalize();
  return 0;
}
