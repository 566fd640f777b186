/* Nonblocking and persistent collectives on an intercommunicator, and MPI_Alltoallw on one
 * (MPI-3.1 sections 5.2.2, 5.8 and 5.12; MPI-4 5.13): the world split into group A (ranks 0..2)
 * and group B (the rest), joined by MPI_Intercomm_create. Every MPI_Ixxx the standard defines on
 * an intercommunicator, checked for its results; two nonblocking collectives in flight at once
 * with a blocking one between them; persistent collectives started twice; MPI_Iscan refused. */
#include <stdlib.h>

#include "check.h"

static int in_a, nl, nr, lr, world_rank;

static int remote_world(int r) { return in_a ? 3 + r : r; }
static int local_world(int r) { return in_a ? r : 3 + r; }
/* Sum of the world ranks of the remote group. */
static int remote_sum(void) {
  int s = 0;
  for (int i = 0; i < nr; ++i) s += remote_world(i);
  return s;
}

static void wait1(MPI_Request* r) {
  CHECK_EQ(MPI_Wait(r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK(*r == MPI_REQUEST_NULL);
}

/* The root argument of a rooted collective whose root is local rank `r` of group A (or of B). */
static int root_arg(int root_in_a, int r) {
  if (in_a == root_in_a) return lr == r ? MPI_ROOT : MPI_PROC_NULL;
  return r;
}

static void rooted(MPI_Comm ic) {
  MPI_Request req;
  /* Ibcast from A's rank 1 to B. */
  int b[3] = {0, 0, 0};
  if (in_a && lr == 1) b[0] = 7, b[1] = 8, b[2] = 9;
  MPI_Ibcast(b, 3, MPI_INT, root_arg(1, 1), ic, &req);
  wait1(&req);
  if (!in_a) CHECK(b[0] == 7 && b[1] == 8 && b[2] == 9);
  if (in_a && lr != 1) CHECK(b[0] == 0);

  /* Igather to A's rank 0 of every B member's world rank * 10. */
  int mine = world_rank * 10, got[16];
  for (int i = 0; i < 16; ++i) got[i] = -1;
  MPI_Igather(&mine, 1, MPI_INT, got, 1, MPI_INT, root_arg(1, 0), ic, &req);
  wait1(&req);
  if (in_a && lr == 0)
    for (int i = 0; i < nr; ++i) CHECK_EQ(got[i], remote_world(i) * 10);

  /* Igatherv to B's rank 0: A's rank i sends i + 1 copies of 100 + its world rank. */
  int vsend[16], counts[16], displs[16];
  for (int i = 0; i < 16; ++i) vsend[i] = 100 + world_rank, got[i] = -1;
  for (int i = 0, d = 0; i < nr; ++i) counts[i] = i + 1, displs[i] = d, d += i + 1;
  MPI_Igatherv(vsend, lr + 1, MPI_INT, got, counts, displs, MPI_INT, root_arg(0, 0), ic, &req);
  wait1(&req);
  if (!in_a && lr == 0)
    for (int i = 0; i < nr; ++i)
      for (int k = 0; k < i + 1; ++k) CHECK_EQ(got[displs[i] + k], 100 + remote_world(i));

  /* Iscatter from A's rank 0: B's rank i gets 1000 + i. */
  int sc[16], one = -1;
  for (int i = 0; i < 16; ++i) sc[i] = 1000 + i;
  MPI_Iscatter(sc, 1, MPI_INT, &one, 1, MPI_INT, root_arg(1, 0), ic, &req);
  wait1(&req);
  if (!in_a) CHECK_EQ(one, 1000 + lr);

  /* Iscatterv from B's rank 1: A's rank i gets i + 1 elements from displacement 2 * i. */
  int two[16];
  for (int i = 0; i < nr; ++i) counts[i] = i + 1, displs[i] = 2 * i;
  for (int i = 0; i < 16; ++i) two[i] = -1;
  MPI_Iscatterv(sc, counts, displs, MPI_INT, two, lr + 1, MPI_INT, root_arg(0, 1), ic, &req);
  wait1(&req);
  if (in_a)
    for (int k = 0; k < lr + 1; ++k) CHECK_EQ(two[k], 1000 + 2 * lr + k);

  /* Ireduce to B's rank 2 of A's (world rank, 2 * world rank + 1). */
  int rv[2] = {world_rank, 2 * world_rank + 1}, rr[2] = {-1, -1};
  MPI_Ireduce(rv, rr, 2, MPI_INT, MPI_SUM, root_arg(0, 2), ic, &req);
  wait1(&req);
  if (!in_a && lr == 2) CHECK(rr[0] == remote_sum() && rr[1] == 2 * remote_sum() + nr);
  if (in_a || lr != 2) CHECK(rr[0] == -1);
}

static void all_to_all(MPI_Comm ic) {
  MPI_Request req;
  int got[64], send[64], scounts[16], sdispls[16], rcounts[16], rdispls[16];
  /* Iallgather: the remote group's world ranks, in rank order. */
  for (int i = 0; i < 64; ++i) got[i] = -1;
  MPI_Iallgather(&world_rank, 1, MPI_INT, got, 1, MPI_INT, ic, &req);
  wait1(&req);
  for (int i = 0; i < nr; ++i) CHECK_EQ(got[i], remote_world(i));

  /* Iallgatherv: rank i of each group sends i + 1 copies of its world rank. */
  for (int i = 0; i < 64; ++i) send[i] = world_rank, got[i] = -1;
  for (int i = 0, d = 0; i < nr; ++i) rcounts[i] = i + 1, rdispls[i] = d, d += i + 2;
  MPI_Iallgatherv(send, lr + 1, MPI_INT, got, rcounts, rdispls, MPI_INT, ic, &req);
  wait1(&req);
  for (int i = 0; i < nr; ++i) {
    for (int k = 0; k <= i; ++k) CHECK_EQ(got[rdispls[i] + k], remote_world(i));
    CHECK_EQ(got[rdispls[i] + i + 1], -1);
  }

  /* Ialltoall: block j (world * 100 + j) to remote rank j. */
  for (int j = 0; j < nr; ++j) send[j] = world_rank * 100 + j;
  for (int i = 0; i < 64; ++i) got[i] = -1;
  MPI_Ialltoall(send, 1, MPI_INT, got, 1, MPI_INT, ic, &req);
  wait1(&req);
  for (int i = 0; i < nr; ++i) CHECK_EQ(got[i], remote_world(i) * 100 + lr);

  /* Ialltoallv: j + 1 elements to remote rank j, from displacement 8 * j. */
  for (int j = 0; j < nr; ++j) {
    scounts[j] = j + 1, sdispls[j] = 8 * j;
    for (int k = 0; k < j + 1; ++k) send[8 * j + k] = world_rank * 100 + j * 10 + k;
    rcounts[j] = lr + 1, rdispls[j] = (nr - 1 - j) * (lr + 1);
  }
  for (int i = 0; i < 64; ++i) got[i] = -1;
  MPI_Ialltoallv(send, scounts, sdispls, MPI_INT, got, rcounts, rdispls, MPI_INT, ic, &req);
  wait1(&req);
  for (int i = 0; i < nr; ++i)
    for (int k = 0; k < lr + 1; ++k) CHECK_EQ(got[rdispls[i] + k], remote_world(i) * 100 + lr * 10 + k);

  /* Iallreduce: the remote group's sum and maximum. */
  int v[2] = {world_rank, world_rank}, r[2] = {-1, -1};
  MPI_Iallreduce(v, r, 1, MPI_INT, MPI_SUM, ic, &req);
  wait1(&req);
  CHECK_EQ(r[0], remote_sum());
  MPI_Iallreduce(v + 1, r + 1, 1, MPI_INT, MPI_MAX, ic, &req);
  wait1(&req);
  CHECK_EQ(r[1], remote_world(nr - 1));

  /* Ireduce_scatter: each group's vectors of 6 elements (world * 10 + k); A scatters B's sum
   * 1, 2, 3, B scatters A's sum 1, 1, ..., and the rest to its last rank. */
  int total = 6;
  for (int i = 0, d = 0; i < nl; ++i) {
    rcounts[i] = in_a ? i + 1 : (i < nl - 1 ? 1 : total - (nl - 1));
    rdispls[i] = d, d += rcounts[i];
  }
  for (int k = 0; k < total; ++k) send[k] = world_rank * 10 + k;
  for (int i = 0; i < 64; ++i) got[i] = -1;
  MPI_Ireduce_scatter(send, got, rcounts, MPI_INT, MPI_SUM, ic, &req);
  wait1(&req);
  for (int k = 0; k < rcounts[lr]; ++k) CHECK_EQ(got[k], 10 * remote_sum() + nr * (rdispls[lr] + k));
  CHECK_EQ(got[rcounts[lr]], -1);

  /* Ireduce_scatter_block: vectors of nl * nr elements on both sides, so each rank's block is as
   * long as the remote group is large. */
  const int block = nr;
  for (int k = 0; k < nl * nr; ++k) send[k] = world_rank + k;
  for (int i = 0; i < 64; ++i) got[i] = -1;
  MPI_Ireduce_scatter_block(send, got, block, MPI_INT, MPI_SUM, ic, &req);
  wait1(&req);
  for (int k = 0; k < block; ++k) CHECK_EQ(got[k], remote_sum() + nr * (lr * block + k));

  /* Ibarrier, with point-to-point messages on the same intercommunicator around it. */
  MPI_Request sreq;
  MPI_Isend(&world_rank, 1, MPI_INT, 0, 5, ic, &sreq);
  MPI_Ibarrier(ic, &req);
  wait1(&req);
  if (lr == 0)
    for (int i = 0; i < nr; ++i) {
      int w = -1;
      MPI_Recv(&w, 1, MPI_INT, i, 5, ic, MPI_STATUS_IGNORE);
      CHECK_EQ(w, remote_world(i));
    }
  wait1(&sreq);
}

/* MPI_Alltoallw, blocking and not: to remote rank j, two elements of MPI_INT (j even) or
 * MPI_DOUBLE (j odd) at byte displacement 16 * j; received into reversed slots. */
static void alltoallw(MPI_Comm ic, int nonblocking) {
  double sendslots[32], recvslots[32];
  int scounts[16], sdispls[16], rcounts[16], rdispls[16];
  MPI_Datatype stypes[16], rtypes[16];
  for (int j = 0; j < nr; ++j) {
    stypes[j] = j % 2 ? MPI_DOUBLE : MPI_INT;
    scounts[j] = 2, sdispls[j] = 16 * j;
    char* at = (char*)sendslots + sdispls[j];
    if (j % 2) ((double*)at)[0] = world_rank * 100 + j, ((double*)at)[1] = -j;
    else ((int*)at)[0] = world_rank * 100 + j, ((int*)at)[1] = -j;
    /* What remote rank i sends me is typed by my rank. */
    rtypes[j] = lr % 2 ? MPI_DOUBLE : MPI_INT;
    rcounts[j] = 2, rdispls[j] = 16 * (nr - 1 - j);
  }
  for (int i = 0; i < 32; ++i) recvslots[i] = -1;
  if (nonblocking) {
    MPI_Request req;
    MPI_Ialltoallw(sendslots, scounts, sdispls, stypes, recvslots, rcounts, rdispls, rtypes, ic, &req);
    wait1(&req);
  } else {
    CHECK_EQ(MPI_Alltoallw(sendslots, scounts, sdispls, stypes, recvslots, rcounts, rdispls, rtypes, ic), MPI_SUCCESS);
  }
  for (int i = 0; i < nr; ++i) {
    const char* at = (const char*)recvslots + rdispls[i];
    if (lr % 2) {
      CHECK(((const double*)at)[0] == remote_world(i) * 100 + lr);
      CHECK(((const double*)at)[1] == -lr);
    } else {
      CHECK_EQ(((const int*)at)[0], remote_world(i) * 100 + lr);
      CHECK_EQ(((const int*)at)[1], -lr);
    }
  }
}

/* Two nonblocking collectives in flight on one intercommunicator, a blocking one between their
 * starts and their completions, completed in the reverse order. */
static void overlapping(MPI_Comm ic) {
  MPI_Request reqs[2];
  int b = in_a ? -1 : (lr == 0 ? 42 : -1), v = world_rank, sum = -1, all = -1;
  MPI_Ibcast(&b, 1, MPI_INT, root_arg(0, 0), ic, &reqs[0]);
  MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic, &reqs[1]);
  MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, ic);
  CHECK_EQ(all, remote_world(nr - 1));
  wait1(&reqs[1]);
  wait1(&reqs[0]);
  CHECK_EQ(sum, remote_sum());
  if (in_a) CHECK_EQ(b, 42);
}

/* Persistent collectives, each started twice with new input. */
static void persistent(MPI_Comm ic) {
  MPI_Request ar, br;
  int v = 0, sum = -1, b = -1;
  MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &ar);
  MPI_Bcast_init(&b, 1, MPI_INT, root_arg(1, 2), ic, MPI_INFO_NULL, &br);
  for (int round = 1; round <= 2; ++round) {
    v = world_rank * round;
    if (in_a && lr == 2) b = 500 + round;
    MPI_Start(&ar);
    MPI_Start(&br);
    CHECK_EQ(MPI_Wait(&br, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&ar, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(sum, remote_sum() * round);
    if (!in_a) CHECK_EQ(b, 500 + round);
  }
  MPI_Request_free(&ar);
  MPI_Request_free(&br);
}

static void refused(MPI_Comm ic) {
  MPI_Request req = MPI_REQUEST_NULL;
  int v = 1, r = 0;
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Iscan(&v, &r, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
  CHECK_EQ(MPI_Iexscan(&v, &r, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
  CHECK_EQ(MPI_Ialltoall(MPI_IN_PLACE, 1, MPI_INT, &r, 1, MPI_INT, ic, &req), MPI_SUCCESS);
  int err = MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK_EQ(err, MPI_ERR_ARG);
  /* A root that is not a rank of the remote group: the start succeeds, the completion says why. */
  CHECK_EQ(MPI_Ibcast(&v, 1, MPI_INT, nr, ic, &req), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_ROOT);
  /* The communicator still works after the failed collectives. */
  CHECK_EQ(MPI_Iallreduce(&world_rank, &r, 1, MPI_INT, MPI_MIN, ic, &req), MPI_SUCCESS);
  wait1(&req);
  CHECK_EQ(r, remote_world(0));
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  CHECK(world_size >= 5 && world_size <= 10);
  in_a = world_rank < 3;
  MPI_Comm local, ic;
  MPI_Comm_split(MPI_COMM_WORLD, in_a, world_rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 3 : 0, 11, &ic);
  MPI_Comm_size(ic, &nl);
  MPI_Comm_remote_size(ic, &nr);
  MPI_Comm_rank(ic, &lr);
  CHECK_EQ(local_world(lr), world_rank);
  rooted(ic);
  all_to_all(ic);
  alltoallw(ic, 0);
  alltoallw(ic, 1);
  overlapping(ic);
  persistent(ic);
  refused(ic);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
  if (world_rank == 0) printf("all checks passed\n");
  MPI_Finalize();
  return 0;
}
