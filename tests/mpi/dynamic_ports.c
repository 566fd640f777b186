/* Establishing communication (MPI-3.1 section 10.4) within one run: ports opened, accepted and
 * connected by the two halves of the world, name publishing, the intercommunicator that results
 * (queries, point-to-point, collectives, merge), MPI_Comm_disconnect of it and of an
 * intracommunicator, MPI_Comm_get_parent without a parent, the error classes of the name service
 * and of a connect to a port never opened, two ports accepted in the reverse of their connects'
 * order, connect before accept and accept before connect, a connection between two single
 * processes on MPI_COMM_SELF, and MPI_Comm_join at the ends of a TCP and of a Unix-domain socket.
 *   dynamic_ports [split|fatal|unaccepted]   (split: use_names; the others: failure_mode)
 * Needs 2 ranks or more (any number: halves of odd sizes differ by one); the case of two ports
 * needs 4 and skips itself below that. Two error checks can be skipped through the environment,
 * for checking the test itself against an implementation known to fail them (Open MPI 4.1.4):
 * TS_SKIP_UNPUBLISH_ERROR=1 skips MPI_Unpublish_name of a name never published (MPI_ERR_SERVICE),
 * TS_SKIP_PORT_ERROR=1 skips MPI_Comm_connect to a port never opened (MPI_ERR_PORT).
 * A failed check names the rank and the line and ends the run (check.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"

static int wrank = -1, wsize = 0;

/* Error classes are compared by class, since an implementation may return a more specific code. */
#define CHECK_CLASS(rc, cls)        \
  do {                              \
    int class_ = -1;                \
    MPI_Error_class((rc), &class_); \
    CHECK_EQ(class_, (cls));        \
  } while (0)

/* Tags of the messages over MPI_COMM_WORLD that carry port names or order the calls, and over the
 * intercommunicators. Each has its own so that no receive can take another's message. */
enum {
  TAG_PORT = 100,
  TAG_PORT1 = 101,
  TAG_PORT2 = 102,
  TAG_ORDER = 103,
  TAG_SELF_PORT = 104,
  TAG_P2P = 7,
  TAG_WHICH = 8,
  TAG_PING = 9,
};

static const char* const service = "ts-service";
static int skip_unpublish_error = 0, skip_port_error = 0;
/* 0 with the argument "split": what a run split over processes refuses (the name service,
 * MPI_Comm_join) is left out, the rest is run. */
static int use_names = 1;

/* The two halves: A is world ranks 0..na-1 (the larger half when the size is odd, so that some
 * ranks of B receive more than one message below), B is the rest. */
static int na, nb, in_b, hrank;
static MPI_Comm half = MPI_COMM_NULL;

/* World rank of rank r of side A (side 0) or B (side 1). */
static int world_of(int side, int r) { return side ? na + r : r; }

/* How many of the ranks 0..remote-1 are congruent to k modulo local: the messages rank k receives
 * when every remote rank r sends to r % local. */
static int messages_for(int k, int local, int remote) { return k < remote ? (remote - 1 - k) / local + 1 : 0; }

/* An intercommunicator from one half to the other (or any two groups): its kind, sizes and rank. */
static void check_inter(MPI_Comm ic, int lsize, int rsize, int lrank) {
  int flag = -1, n = -1, r = -1;
  CHECK(ic != MPI_COMM_NULL);
  if (ic == MPI_COMM_NULL) return;
  MPI_Comm_test_inter(ic, &flag);
  CHECK(flag);
  MPI_Comm_size(ic, &n);
  CHECK_EQ(n, lsize);
  MPI_Comm_remote_size(ic, &n);
  CHECK_EQ(n, rsize);
  MPI_Comm_rank(ic, &r);
  CHECK_EQ(r, lrank);
}

/* Point-to-point over an intercommunicator between the halves, both ways at once: every rank k
 * sends its world rank to remote rank k % remote_size, then receives from MPI_ANY_SOURCE the
 * messages meant for it. Sends are nonblocking, since both sides send before they receive. */
static void p2p_both_ways(MPI_Comm ic) {
  int lsize, rsize, k;
  MPI_Comm_size(ic, &lsize);
  MPI_Comm_remote_size(ic, &rsize);
  MPI_Comm_rank(ic, &k);
  MPI_Request req;
  MPI_Isend(&wrank, 1, MPI_INT, k % rsize, TAG_P2P, ic, &req);
  int expect = messages_for(k, lsize, rsize);
  char* seen = calloc((size_t)rsize, 1);
  for (int i = 0; i < expect; ++i) {
    int v = -1, count = -1;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, TAG_P2P, ic, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 1);
    CHECK_EQ(st.MPI_TAG, TAG_P2P);
    /* The source is a rank of the remote group, one that sends to this rank, and only once. */
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize);
    if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= rsize) continue;
    CHECK_EQ(st.MPI_SOURCE % lsize, k);
    CHECK(!seen[st.MPI_SOURCE]);
    seen[st.MPI_SOURCE] = 1;
    CHECK_EQ(v, world_of(!in_b, st.MPI_SOURCE));
  }
  free(seen);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  /* Nothing more is on its way to this rank: every sender's message was counted above. */
  int flag = -1;
  MPI_Barrier(ic);
  MPI_Iprobe(MPI_ANY_SOURCE, TAG_P2P, ic, &flag, MPI_STATUS_IGNORE);
  CHECK_EQ(flag, 0);
}

/* Collectives over an intercommunicator between the halves, whose roots are a_root of A and
 * b_root of B: a broadcast from A's root to all of B, one from B's root to all of A, and an
 * allreduce whose result on each side is the sum over the other side. */
static void collectives(MPI_Comm ic, int a_root, int b_root) {
  int v = in_b ? -1 : 4000 + wsize;
  int root = in_b ? a_root : (hrank == a_root ? MPI_ROOT : MPI_PROC_NULL);
  MPI_Bcast(&v, 1, MPI_INT, root, ic);
  if (in_b)
    CHECK_EQ(v, 4000 + wsize);
  else if (hrank == a_root)
    CHECK_EQ(v, 4000 + wsize); /* the root's buffer is left alone */
  v = in_b ? 5000 + wsize : -1;
  root = in_b ? (hrank == b_root ? MPI_ROOT : MPI_PROC_NULL) : b_root;
  MPI_Bcast(&v, 1, MPI_INT, root, ic);
  if (!in_b) CHECK_EQ(v, 5000 + wsize);
  int sum = -1, want = 0;
  MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, ic);
  int from = in_b ? 0 : na, to = in_b ? na : wsize;
  for (int w = from; w < to; ++w) want += w;
  CHECK_EQ(sum, want);
}

/* MPI_Intercomm_merge with `high` true on B (a_first) or on A: the low group's ranks come first, in
 * their order. */
static void merge(MPI_Comm ic, int a_first) {
  MPI_Comm merged = MPI_COMM_NULL;
  MPI_Intercomm_merge(ic, a_first ? in_b : !in_b, &merged);
  CHECK(merged != MPI_COMM_NULL);
  if (merged == MPI_COMM_NULL) return;
  int r = -1, n = -1, flag = -1;
  MPI_Comm_rank(merged, &r);
  MPI_Comm_size(merged, &n);
  MPI_Comm_test_inter(merged, &flag);
  CHECK_EQ(flag, 0);
  CHECK_EQ(n, wsize);
  if (a_first)
    CHECK_EQ(r, in_b ? na + hrank : hrank);
  else
    CHECK_EQ(r, in_b ? hrank : nb + hrank);
  /* The merged communicator works: the sum of the world ranks over it. */
  int sum = -1;
  MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, merged);
  CHECK_EQ(sum, wsize * (wsize - 1) / 2);
  MPI_Comm_free(&merged);
  CHECK(merged == MPI_COMM_NULL);
}

static void disconnect(MPI_Comm* ic) {
  CHECK_EQ(MPI_Comm_disconnect(ic), MPI_SUCCESS);
  CHECK(*ic == MPI_COMM_NULL);
}

/* 1. These processes were started by mpirun, not spawned: they have no parent. */
static void no_parent(void) {
  MPI_Comm parent = MPI_COMM_WORLD;
  CHECK_EQ(MPI_Comm_get_parent(&parent), MPI_SUCCESS);
  CHECK(parent == MPI_COMM_NULL);
}

/* 2. A's root opens a port and publishes it; B's root finds it by the name and, as a cross-check
 * that needs no name server, receives it from A's root over MPI_COMM_WORLD. A accepts, B
 * connects; the intercommunicator is checked in every way, merged, and disconnected. */
static void halves(void) {
  char port[MPI_MAX_PORT_NAME] = "", found[MPI_MAX_PORT_NAME] = "";
  if (!in_b && hrank == 0) {
    CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
    size_t len = strlen(port);
    CHECK(len > 0);
    CHECK(len < MPI_MAX_PORT_NAME);
    if (use_names) CHECK_EQ(MPI_Publish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
  }
  /* The lookup by another process is only sure to see the name once the publish has returned. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (!in_b && hrank == 0) MPI_Send(port, (int)strlen(port) + 1, MPI_CHAR, na, TAG_PORT, MPI_COMM_WORLD);
  if (in_b && hrank == 0) {
    MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, TAG_PORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (use_names) {
      CHECK_EQ(MPI_Lookup_name(service, MPI_INFO_NULL, found), MPI_SUCCESS);
      CHECK(strcmp(found, port) == 0);
    }
  }
  MPI_Comm ic = MPI_COMM_NULL;
  /* The port name is significant at the root only: the other ranks pass an empty string. */
  if (in_b)
    CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic), MPI_SUCCESS);
  else
    CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic), MPI_SUCCESS);
  check_inter(ic, in_b ? nb : na, in_b ? na : nb, hrank);
  if (ic != MPI_COMM_NULL) {
    p2p_both_ways(ic);
    collectives(ic, 0, 0);
    merge(ic, 1);
    disconnect(&ic);
  }
  if (!in_b && hrank == 0) {
    if (use_names) CHECK_EQ(MPI_Unpublish_name(service, MPI_INFO_NULL, port), MPI_SUCCESS);
    CHECK_EQ(MPI_Close_port(port), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* 3. Errors, returned rather than fatal. A call with no communicator raises its error on
 * MPI_COMM_WORLD under MPI-3.1 and on MPI_COMM_SELF from MPI-4.0 on, so both return errors. */
static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  char name[MPI_MAX_PORT_NAME] = "";
  /* The name was unpublished before the barrier that ended part 2: no longer found. The last rank
   * is on B's side, which looked it up; rank 0 unpublished it. */
  if (use_names && (wrank == 0 || wrank == wsize - 1)) {
    int rc = MPI_Lookup_name(service, MPI_INFO_NULL, name);
    CHECK(rc != MPI_SUCCESS);
    CHECK_CLASS(rc, MPI_ERR_NAME);
  }
  /* A name never published cannot be unpublished. */
  if (use_names && !skip_unpublish_error && wrank == wsize - 1) {
    int rc = MPI_Unpublish_name("ts-never-published", MPI_INFO_NULL, "no-such-port");
    CHECK(rc != MPI_SUCCESS);
    CHECK_CLASS(rc, MPI_ERR_SERVICE);
  }
  /* A connect to a port that no one opened fails, on MPI_COMM_SELF so that no other rank takes
   * part. */
  if (!skip_port_error && wrank == 0) {
    MPI_Comm ic = MPI_COMM_NULL;
    int rc = MPI_Comm_connect("no-such-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    CHECK(rc != MPI_SUCCESS);
    CHECK_CLASS(rc, MPI_ERR_PORT);
    /* newcomm is not defined after an error: freeing it is the one thing not to do. */
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* 4. Two ports at once: B splits into B1 and B2, which connect to port 1 and port 2; A accepts
 * port 2 first, so B1's connect waits until A has done with B2. Needs B of 2 ranks or more. */
static void two_ports(void) {
  if (nb < 2) return;
  const int nb1 = (nb + 1) / 2, nb2 = nb - nb1;
  const int b1_root = na, b2_root = na + nb1; /* world ranks */
  MPI_Comm ic1 = MPI_COMM_NULL, ic2 = MPI_COMM_NULL;
  if (!in_b) {
    char port1[MPI_MAX_PORT_NAME] = "", port2[MPI_MAX_PORT_NAME] = "";
    if (hrank == 0) {
      CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port1), MPI_SUCCESS);
      CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port2), MPI_SUCCESS);
      CHECK(strcmp(port1, port2) != 0);
      MPI_Send(port1, (int)strlen(port1) + 1, MPI_CHAR, b1_root, TAG_PORT1, MPI_COMM_WORLD);
      MPI_Send(port2, (int)strlen(port2) + 1, MPI_CHAR, b2_root, TAG_PORT2, MPI_COMM_WORLD);
    }
    CHECK_EQ(MPI_Comm_accept(port2, MPI_INFO_NULL, 0, half, &ic2), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_accept(port1, MPI_INFO_NULL, 0, half, &ic1), MPI_SUCCESS);
    check_inter(ic1, na, nb1, hrank);
    check_inter(ic2, na, nb2, hrank);
    /* Which is which: A's root sends 1 on the first and 2 on the second, and each group's root
     * answers with its number, 10 + 1 or 10 + 2. */
    if (hrank == 0 && ic1 != MPI_COMM_NULL && ic2 != MPI_COMM_NULL) {
      int one = 1, two = 2, back1 = -1, back2 = -1;
      MPI_Send(&one, 1, MPI_INT, 0, TAG_WHICH, ic1);
      MPI_Send(&two, 1, MPI_INT, 0, TAG_WHICH, ic2);
      MPI_Recv(&back2, 1, MPI_INT, 0, TAG_WHICH, ic2, MPI_STATUS_IGNORE);
      MPI_Recv(&back1, 1, MPI_INT, 0, TAG_WHICH, ic1, MPI_STATUS_IGNORE);
      CHECK_EQ(back1, 11);
      CHECK_EQ(back2, 12);
    }
    if (ic1 != MPI_COMM_NULL) disconnect(&ic1);
    if (ic2 != MPI_COMM_NULL) disconnect(&ic2);
    if (hrank == 0) {
      CHECK_EQ(MPI_Close_port(port1), MPI_SUCCESS);
      CHECK_EQ(MPI_Close_port(port2), MPI_SUCCESS);
    }
  } else {
    const int group = hrank < nb1 ? 1 : 2;
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(half, group, hrank, &sub);
    int srank = -1, ssize = -1;
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    CHECK_EQ(ssize, group == 1 ? nb1 : nb2);
    char port[MPI_MAX_PORT_NAME] = "";
    if (srank == 0) {
      MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, group == 1 ? TAG_PORT1 : TAG_PORT2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    MPI_Comm ic = MPI_COMM_NULL;
    CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, sub, &ic), MPI_SUCCESS);
    check_inter(ic, ssize, na, srank);
    if (srank == 0 && ic != MPI_COMM_NULL) {
      int which = -1, answer = 10 + group;
      MPI_Recv(&which, 1, MPI_INT, 0, TAG_WHICH, ic, MPI_STATUS_IGNORE);
      CHECK_EQ(which, group);
      MPI_Send(&answer, 1, MPI_INT, 0, TAG_WHICH, ic);
    }
    if (ic != MPI_COMM_NULL) disconnect(&ic);
    MPI_Comm_free(&sub);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Work on one half before it reaches accept or connect: some barriers among its own ranks. */
static void busy(void) {
  for (int i = 0; i < 5; ++i) MPI_Barrier(half);
}

/* 5. Both orders of the calls, made sure by a message over MPI_COMM_WORLD rather than by time:
 * in round 0 B's root tells A's root that it is about to connect, and A's root accepts only after
 * that message (connect first); in round 1 A's root sends the port and then accepts, while B is
 * busy before it receives the port and connects (accept first). Round 1 also uses the last rank of
 * each half as the root and merges with A high. */
static void both_orders(void) {
  for (int round = 0; round < 2; ++round) {
    const int connect_first = round == 0;
    const int a_root = round ? na - 1 : 0, b_root = round ? nb - 1 : 0;
    const int a_root_world = world_of(0, a_root), b_root_world = world_of(1, b_root);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic = MPI_COMM_NULL;
    if (!in_b) {
      if (hrank == a_root) {
        CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
        MPI_Send(port, (int)strlen(port) + 1, MPI_CHAR, b_root_world, TAG_PORT, MPI_COMM_WORLD);
      }
      if (connect_first) {
        busy();
        if (hrank == a_root) {
          int token = -1;
          MPI_Recv(&token, 1, MPI_INT, b_root_world, TAG_ORDER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          CHECK_EQ(token, round);
        }
      }
      CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, a_root, half, &ic), MPI_SUCCESS);
    } else {
      if (!connect_first) busy();
      if (hrank == b_root) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, a_root_world, TAG_PORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (connect_first) MPI_Send(&round, 1, MPI_INT, a_root_world, TAG_ORDER, MPI_COMM_WORLD);
      }
      CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, b_root, half, &ic), MPI_SUCCESS);
    }
    check_inter(ic, in_b ? nb : na, in_b ? na : nb, hrank);
    if (ic != MPI_COMM_NULL) {
      p2p_both_ways(ic);
      collectives(ic, a_root, b_root);
      merge(ic, round == 0);
      disconnect(&ic);
    }
    if (!in_b && hrank == a_root) CHECK_EQ(MPI_Close_port(port), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

/* 6. Two single processes, each on MPI_COMM_SELF: world rank 0 accepts, the last rank connects.
 * (One process cannot do both: accept and connect each block until the other is called.) */
/* An intercommunicator of world ranks 0 and last, one each side: one message each way, carrying
 * the world ranks (rank 0 sends first), then disconnected. */
static void ping_pair(MPI_Comm ic, int last) {
  check_inter(ic, 1, 1, 0);
  if (ic == MPI_COMM_NULL) return;
  int got = -1;
  MPI_Status st;
  if (wrank == 0) {
    MPI_Send(&wrank, 1, MPI_INT, 0, TAG_PING, ic);
    MPI_Recv(&got, 1, MPI_INT, 0, TAG_PING, ic, &st);
    CHECK_EQ(got, last);
  } else {
    MPI_Recv(&got, 1, MPI_INT, 0, TAG_PING, ic, &st);
    CHECK_EQ(got, 0);
    MPI_Send(&wrank, 1, MPI_INT, 0, TAG_PING, ic);
  }
  CHECK_EQ(st.MPI_SOURCE, 0);
  disconnect(&ic);
}

static void single_processes(void) {
  const int last = wsize - 1;
  if (wrank == 0 || wrank == last) {
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic = MPI_COMM_NULL;
    if (wrank == 0) {
      CHECK_EQ(MPI_Open_port(MPI_INFO_NULL, port), MPI_SUCCESS);
      MPI_Send(port, (int)strlen(port) + 1, MPI_CHAR, last, TAG_SELF_PORT, MPI_COMM_WORLD);
      CHECK_EQ(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic), MPI_SUCCESS);
    } else {
      MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, TAG_SELF_PORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK_EQ(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic), MPI_SUCCESS);
    }
    ping_pair(ic, last);
    if (wrank == 0) CHECK_EQ(MPI_Close_port(port), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* 8. MPI_Comm_join (MPI-3.1 10.4.6) at the two ends of a connected stream socket, over TCP on the
 * loopback and over a Unix-domain socket: the last world rank listens and tells rank 0 where, rank 0
 * connects (the listen queue completes the connection before it is accepted) and says so, then the
 * last rank accepts, and each joins with its end. No rank waits on a socket for another. */
static void joined(int family) {
  const int last = wsize - 1;
  if (wrank != 0 && wrank != last) {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  union {
    struct sockaddr any;
    struct sockaddr_in in;
    struct sockaddr_un un;
  } addr;
  memset(&addr, 0, sizeof addr);
  socklen_t len = family == AF_INET ? sizeof addr.in : sizeof addr.un;
  int fd = -1, connected = 0;
  if (wrank == last) {
    const int listener = socket(family, SOCK_STREAM, 0);
    CHECK(listener >= 0);
    if (family == AF_INET) {
      addr.in.sin_family = AF_INET;
      addr.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.in.sin_port = 0; /* any free port */
    } else {
      addr.un.sun_family = AF_UNIX;
      snprintf(addr.un.sun_path, sizeof addr.un.sun_path, "/tmp/dynamic_ports_%ld_%d.sock", (long)getpid(), wrank);
      unlink(addr.un.sun_path);
    }
    CHECK_EQ(bind(listener, &addr.any, len), 0);
    CHECK_EQ(listen(listener, 1), 0);
    CHECK_EQ(getsockname(listener, &addr.any, &len), 0);
    MPI_Send(&addr, (int)sizeof addr, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD);
    MPI_Recv(&connected, 1, MPI_INT, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fd = accept(listener, NULL, NULL);
    close(listener);
    if (family == AF_UNIX) unlink(addr.un.sun_path);
  } else {
    MPI_Recv(&addr, (int)sizeof addr, MPI_BYTE, last, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fd = socket(family, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    connected = connect(fd, &addr.any, len) == 0;
    CHECK(connected);
    MPI_Send(&connected, 1, MPI_INT, last, TAG_PING, MPI_COMM_WORLD);
  }
  CHECK(fd >= 0);
  MPI_Comm ic = MPI_COMM_NULL;
  if (fd >= 0 && connected) {
    CHECK_EQ(MPI_Comm_join(fd, &ic), MPI_SUCCESS);
    ping_pair(ic, last);
  }
  if (fd >= 0) close(fd);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* 7. MPI_Comm_disconnect of an intracommunicator, after its communication has completed (the
 * standard requires all of it complete and matched), leaves MPI_COMM_NULL. */
static void disconnect_intra(void) {
  MPI_Comm d = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  const int next = (wrank + 1) % wsize, prev = (wrank + wsize - 1) % wsize;
  int got = -1;
  MPI_Request r[2];
  MPI_Irecv(&got, 1, MPI_INT, prev, TAG_PING, d, &r[0]);
  MPI_Isend(&wrank, 1, MPI_INT, next, TAG_PING, d, &r[1]);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  CHECK_EQ(got, prev);
  disconnect(&d);
}

static int env_is_1(const char* name) {
  const char* v = getenv(name);
  return v && strcmp(v, "1") == 0;
}

/* The runs that must fail, with the report a user needs:
 *   fatal: rank 0 accepts on a port it never opened, under MPI_ERRORS_ARE_FATAL;
 *   unaccepted: rank 0 opens a port and never accepts, and the last rank connects to it. */
static int failure_mode(const char* mode) {
  char port[MPI_MAX_PORT_NAME];
  MPI_Comm inter;
  if (strcmp(mode, "fatal") == 0) {
    if (wrank == 0) MPI_Comm_accept("touchstone-port:0:5", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
  } else if (strcmp(mode, "unaccepted") == 0) {
    if (wrank == 0) {
      MPI_Open_port(MPI_INFO_NULL, port);
      MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, wsize - 1, 0, MPI_COMM_WORLD);
    } else if (wrank == wsize - 1) {
      MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    }
  } else {
    if (wrank == 0) fprintf(stderr, "dynamic_ports: unknown mode '%s'\n", mode);
    MPI_Finalize();
    return 1;
  }
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize < 2) {
    if (wrank == 0) fprintf(stderr, "dynamic_ports: needs 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  skip_unpublish_error = env_is_1("TS_SKIP_UNPUBLISH_ERROR");
  skip_port_error = env_is_1("TS_SKIP_PORT_ERROR");
  na = (wsize + 1) / 2;
  nb = wsize - na;
  in_b = wrank >= na;
  MPI_Comm_split(MPI_COMM_WORLD, in_b, wrank, &half);
  MPI_Comm_rank(half, &hrank);

  if (argc > 1 && strcmp(argv[1], "split") == 0)
    use_names = 0;
  else if (argc > 1)
    return failure_mode(argv[1]);

  no_parent();
  MPI_Barrier(MPI_COMM_WORLD);
  halves();
  errors();
  two_ports();
  both_orders();
  single_processes();
  disconnect_intra();
  if (use_names) {
    joined(AF_INET);
    joined(AF_UNIX);
  }

  MPI_Comm_free(&half);
  return all_checks_passed("dynamic_ports");
}
