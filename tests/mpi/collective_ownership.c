/* Buffer ownership of nonblocking and persistent operations (docs/debugging.md, "Buffers owned by
 * nonblocking operations"): a nonblocking collective owns the buffers MPI makes significant at the
 * rank, and a started persistent request its buffer, until they complete. The erroneous modes
 * write one such buffer while the operation is pending, each on the sub-communicator of the odd
 * ranks: icoll_send the send buffer of MPI_Iallgather, icoll_recv a block of the root's
 * receive buffer of MPI_Igatherv (checked under --check), pcoll_send the send buffer of a started
 * MPI_Allreduce_init, psend the buffer of a started MPI_Send_init, precv that of a started
 * MPI_Recv_init (under --check). "correct" runs every form with its results checked, writing only
 * what is not the operation's while it is pending: the gaps between v-form blocks, the receive
 * buffer of a non-root, MPI_Exscan's at rank 0, and the buffers of persistent requests between
 * their starts. Run on 5 ranks or more (built without optimization, so that each call keeps its line). */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static MPI_Comm odd_ranks(int rank) {
  MPI_Comm odd;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
  return odd;
}

/* Every nonblocking collective, each buffer it does not own written while it is pending. */
static void nonblocking_correct(MPI_Comm comm) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const int root = n - 1;
  MPI_Request r;
  int v = 10 + me, w = 0, all[16], blocks[32], counts[16], displs[16];
  for (int i = 0; i < n; ++i) {
    counts[i] = 1;
    displs[i] = 2 * i; /* a gap after each block */
  }

  MPI_Ibcast(&v, 1, MPI_INT, root, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(v, 10 + root);

  v = 10 + me;
  memset(all, 0, sizeof all);
  MPI_Igather(&v, 1, MPI_INT, all, 1, MPI_INT, root, comm, &r);
  if (me != root) all[0] = -1; /* not significant at a non-root */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (me == root)
    for (int i = 0; i < n; ++i) CHECK_EQ(all[i], 10 + i);

  for (int i = 0; i < 2 * n; ++i) blocks[i] = -5;
  MPI_Igatherv(&v, 1, MPI_INT, blocks, counts, displs, MPI_INT, root, comm, &r);
  if (me == root) blocks[1] = 77; /* a gap: not the collective's */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (me == root) {
    for (int i = 0; i < n; ++i) CHECK_EQ(blocks[2 * i], 10 + i);
    CHECK_EQ(blocks[1], 77);
  }

  /* The root's MPI_IN_PLACE: its block is read from the receive buffer. */
  for (int i = 0; i < n; ++i) all[i] = i == me ? 10 + me : -1;
  MPI_Igather(me == root ? MPI_IN_PLACE : &v, 1, MPI_INT, all, 1, MPI_INT, root, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (me == root)
    for (int i = 0; i < n; ++i) CHECK_EQ(all[i], 10 + i);

  for (int i = 0; i < n; ++i) all[i] = 100 + i;
  MPI_Iscatter(all, 1, MPI_INT, &w, 1, MPI_INT, root, comm, &r);
  if (me != root) all[0] = -1; /* the send buffer is the root's only */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(w, 100 + me);

  for (int i = 0; i < 2 * n; ++i) blocks[i] = i % 2 ? -9 : 200 + i / 2;
  MPI_Iscatterv(blocks, counts, displs, MPI_INT, &w, 1, MPI_INT, root, comm, &r);
  if (me == root) blocks[3] = 0; /* a gap */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(w, 200 + me);

  MPI_Iallgather(&v, 1, MPI_INT, all, 1, MPI_INT, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) CHECK_EQ(all[i], 10 + i);

  for (int i = 0; i < 2 * n; ++i) blocks[i] = -5;
  MPI_Iallgatherv(&v, 1, MPI_INT, blocks, counts, displs, MPI_INT, comm, &r);
  blocks[2 * n - 1] = 8; /* the gap after the last block */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) CHECK_EQ(blocks[2 * i], 10 + i);
  CHECK_EQ(blocks[2 * n - 1], 8);

  /* MPI_IN_PLACE: every block is read from, and written into, the receive buffer. */
  for (int i = 0; i < n; ++i) all[i] = 1000 * me + i;
  MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) CHECK_EQ(all[i], 1000 * i + me);

  int send[32];
  for (int i = 0; i < 2 * n; ++i) send[i] = i % 2 ? -1 : 1000 * me + i / 2;
  for (int i = 0; i < 2 * n; ++i) blocks[i] = -5;
  MPI_Ialltoallv(send, counts, displs, MPI_INT, blocks, counts, displs, MPI_INT, comm, &r);
  send[1] = 3; /* gaps of both buffers */
  blocks[1] = 4;
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) CHECK_EQ(blocks[2 * i], 1000 * i + me);
  CHECK_EQ(blocks[1], 4);

  int sum = -1;
  MPI_Ireduce(&v, &sum, 1, MPI_INT, MPI_SUM, root, comm, &r);
  if (me != root) sum = 5; /* not significant at a non-root */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (me == root) CHECK_EQ(sum, 10 * n + n * (n - 1) / 2);

  sum = v;
  MPI_Iallreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(sum, 10 * n + n * (n - 1) / 2);

  MPI_Iscan(&v, &sum, 1, MPI_INT, MPI_SUM, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(sum, 10 * (me + 1) + me * (me + 1) / 2);

  sum = -1;
  MPI_Iexscan(&v, &sum, 1, MPI_INT, MPI_SUM, comm, &r);
  if (me == 0) sum = 6; /* not significant at rank 0 */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (me > 0) CHECK_EQ(sum, 10 * me + me * (me - 1) / 2);

  /* MPI_IN_PLACE reduce-scatters: the receive buffer holds the whole input. */
  for (int i = 0; i < n; ++i) all[i] = me + i;
  MPI_Ireduce_scatter_block(MPI_IN_PLACE, all, 1, MPI_INT, MPI_SUM, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(all[0], n * (n - 1) / 2 + n * me);
  for (int i = 0; i < n; ++i) all[i] = me + i;
  MPI_Ireduce_scatter(MPI_IN_PLACE, all, counts, MPI_INT, MPI_SUM, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK_EQ(all[0], n * (n - 1) / 2 + n * me);

  /* MPI_Alltoallw: byte displacements, a type per block. */
  MPI_Datatype types[16];
  int bytes[16];
  for (int i = 0; i < n; ++i) {
    types[i] = MPI_INT;
    bytes[i] = 2 * i * (int)sizeof(int);
    send[2 * i] = 1000 * me + i;
  }
  for (int i = 0; i < 2 * n; ++i) blocks[i] = -5;
  MPI_Ialltoallw(send, counts, bytes, types, blocks, counts, bytes, types, comm, &r);
  blocks[3] = 6; /* a gap */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) CHECK_EQ(blocks[2 * i], 1000 * i + me);
  CHECK_EQ(blocks[3], 6);

  /* Derived, non-contiguous receive blocks are not owned but still delivered. */
  MPI_Datatype strided;
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &strided);
  MPI_Type_commit(&strided);
  for (int i = 0; i < 2 * n; ++i) blocks[i] = -5;
  MPI_Iallgather(&v, 1, MPI_INT, blocks, 1, strided, comm, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) CHECK_EQ(blocks[2 * i], 10 + i);
  MPI_Type_free(&strided);
}

/* Persistent collectives and point-to-point requests, their buffers changed between starts. */
static void persistent_correct(MPI_Comm comm) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int v = 0, sum = 0, all[16];
  MPI_Request ar, gr;
  MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &ar);
  MPI_Allgather_init(&v, 1, MPI_INT, all, 1, MPI_INT, comm, MPI_INFO_NULL, &gr);
  for (int round = 0; round < 3; ++round) {
    v = 100 * round + me;
    sum = -1;
    MPI_Start(&ar);
    MPI_Wait(&ar, MPI_STATUS_IGNORE);
    CHECK_EQ(sum, 100 * round * n + n * (n - 1) / 2);
    MPI_Start(&gr);
    MPI_Wait(&gr, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; ++i) CHECK_EQ(all[i], 100 * round + i);
  }
  MPI_Request_free(&ar);
  MPI_Request_free(&gr);

  int out = 0, in = -1;
  MPI_Request pr[2];
  MPI_Send_init(&out, 1, MPI_INT, (me + 1) % n, 4, comm, &pr[0]);
  MPI_Recv_init(&in, 1, MPI_INT, (me + n - 1) % n, 4, comm, &pr[1]);
  for (int round = 0; round < 3; ++round) {
    out = 10 * round + me;
    in = -1;
    MPI_Startall(2, pr);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    CHECK_EQ(in, 10 * round + (me + n - 1) % n);
  }
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "correct";
  MPI_Comm odd = odd_ranks(rank);
  int me, n;
  MPI_Comm_rank(odd, &me);
  MPI_Comm_size(odd, &n);
  MPI_Request r;
  int v = me, w = 0, all[16] = {0}, counts[16], displs[16];
  if (!strcmp(mode, "icoll_send")) {
    if (rank % 2) {
      MPI_Iallgather(&v, 1, MPI_INT, all, 1, MPI_INT, odd, &r);
      v = 7; /* the collective still owns it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "icoll_recv")) {
    for (int i = 0; i < n; ++i) {
      counts[i] = 1;
      displs[i] = 2 * i;
    }
    if (rank % 2) {
      MPI_Igatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, 0, odd, &r);
      if (me == 0) all[2] = 7; /* the block of rank 1 */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "pcoll_send")) {
    if (rank % 2) {
      MPI_Allreduce_init(&v, &w, 1, MPI_INT, MPI_SUM, odd, MPI_INFO_NULL, &r);
      MPI_Start(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Start(&r);
      v = 7; /* the started collective still owns it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Request_free(&r);
    }
  } else if (!strcmp(mode, "psend")) {
    if (rank % 2 && me == 0) {
      MPI_Send_init(&v, 1, MPI_INT, 1, 8, odd, &r);
      MPI_Start(&r);
      v = 7; /* the started send still owns it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Request_free(&r);
    } else if (rank % 2 && me == 1) {
      MPI_Recv(&w, 1, MPI_INT, 0, 8, odd, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "precv")) {
    if (rank % 2 && me == 1) {
      MPI_Recv_init(&w, 1, MPI_INT, 0, 9, odd, &r);
      MPI_Start(&r);
      w = 7; /* the started receive still owns it */
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Request_free(&r);
    } else if (rank % 2 && me == 0) {
      MPI_Send(&v, 1, MPI_INT, 1, 9, odd);
    }
  } else {
    nonblocking_correct(odd);
    nonblocking_correct(MPI_COMM_WORLD);
    persistent_correct(odd);
    persistent_correct(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&odd);
  MPI_Finalize();
  if (rank == 0 && !strcmp(mode, "correct")) printf("collective_ownership: all checks passed\n");
  return 0;
}
