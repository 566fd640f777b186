/* Correct programs the checks must not blame (docs/debugging.md, "Checking MPI programs"): the same
 * signatures built from other datatypes, insignificant arguments left unset, MPI_BYTE and
 * MPI_PACKED, receives longer than their messages, receives of one sender and tag completed out of
 * order, every kind of collective on sub-communicators, a send refused under MPI_ERRORS_RETURN.
 * Run with --check, which turns any leak into an error too. */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

/* Displacements in ints of blocks given in pairs of ints. */
static int* displs_of_pairs(const int* d, int n) {
  static int out[64];
  for (int i = 0; i < n; ++i) out[i] = 2 * d[i];
  return out;
}

static void collectives(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* The root sends one element of a contiguous type of 4 MPI_INT; the others receive 4 MPI_INT. */
  MPI_Datatype four;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  int v[4] = {rank, rank, rank, rank};
  if (rank == 0) MPI_Bcast(v, 1, four, 0, comm);
  else MPI_Bcast(v, 4, MPI_INT, 0, comm);
  CHECK_EQ(v[3], 0);
  /* Gather: the root in place; the others leave the receive arguments unset. */
  int all[64] = {0}, mine = rank + 1;
  if (rank == size - 1) {
    all[rank] = mine;
    MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, size - 1, comm);
    for (int i = 0; i < size; ++i) CHECK_EQ(all[i], i + 1);
  } else {
    MPI_Gather(&mine, 1, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, size - 1, comm);
  }
  /* Scatter: the others leave the send arguments unset. */
  int got = -1;
  if (rank == 0) {
    for (int i = 0; i < size; ++i) all[i] = 10 * i;
    MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, 0, comm);
  } else {
    MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, &got, 1, MPI_INT, 0, comm);
  }
  CHECK_EQ(got, 10 * rank);
  /* Gatherv and scatterv: a count per rank. */
  int counts[64], displs[64], at = 0;
  for (int i = 0; i < size; ++i) counts[i] = i % 3, displs[i] = at, at += counts[i];
  int block[4] = {rank, rank, rank, rank};
  MPI_Gatherv(block, counts[rank], MPI_INT, all, counts, displs, MPI_INT, 1 % size, comm);
  MPI_Scatterv(all, counts, displs, MPI_INT, block, counts[rank], MPI_INT, 1 % size, comm);
  MPI_Allgatherv(block, counts[rank], MPI_INT, all, counts, displs, MPI_INT, comm);
  /* The same blocks built of another datatype on odd ranks: 2 MPI_INT as 1 of a pair. */
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INT, &two);
  MPI_Type_commit(&two);
  int even[64], halves[64], pair_displs[64], pairs[128];
  for (int i = 0; i < size; ++i) even[i] = 2, halves[i] = 1, pair_displs[i] = i;
  int mine2[2] = {rank, -rank};
  if (rank % 2)
    MPI_Allgatherv(mine2, 1, two, pairs, halves, pair_displs, two, comm);
  else
    MPI_Allgatherv(mine2, 2, MPI_INT, pairs, even, displs_of_pairs(pair_displs, size), MPI_INT, comm);
  CHECK_EQ(pairs[2 * (size - 1) + 1], -(size - 1));
  int sendv[64], recvv[64], counts2[64], d2[64];
  for (int i = 0; i < size; ++i) counts2[i] = rank % 2 ? 1 : 2, d2[i] = rank % 2 ? i : 2 * i, sendv[2 * i % 64] = rank;
  MPI_Alltoallv(sendv, counts2, d2, rank % 2 ? two : MPI_INT, recvv, counts2, d2, rank % 2 ? two : MPI_INT, comm);
  MPI_Type_free(&two);
  /* Reductions of one signature built two ways. */
  int sum[4] = {1, 1, 1, 1};
  if (rank % 2) MPI_Allreduce(MPI_IN_PLACE, sum, 1, four, MPI_SUM, comm);
  else MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_INT, MPI_SUM, comm);
  CHECK_EQ(sum[2], size);
  int rcounts[64];
  for (int i = 0; i < size; ++i) rcounts[i] = 1;
  int ones[64], piece = 0;
  for (int i = 0; i < size; ++i) ones[i] = 1;
  MPI_Reduce_scatter(ones, &piece, rcounts, MPI_INT, MPI_SUM, comm);
  CHECK_EQ(piece, size);
  MPI_Scan(&mine, &got, 1, MPI_INT, MPI_SUM, comm);
  CHECK_EQ(got, (rank + 1) * (rank + 2) / 2);
  int sc[64], sd[64], rc[64], rd[64], sbuf[64], rbuf[64];
  for (int i = 0; i < size; ++i) sc[i] = rc[i] = 1, sd[i] = rd[i] = i, sbuf[i] = rank;
  MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm);
  CHECK_EQ(rbuf[size - 1], size - 1);
  /* Nonblocking and persistent collectives, overlapped, started in the same order everywhere. */
  MPI_Request r[3];
  int b = rank == 0 ? 42 : 0, s = 1;
  MPI_Ibcast(&b, 1, MPI_INT, 0, comm, &r[0]);
  MPI_Iallreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_SUM, comm, &r[1]);
  MPI_Barrier_init(comm, MPI_INFO_NULL, &r[2]);
  MPI_Start(&r[2]);
  MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  MPI_Request_free(&r[2]);
  CHECK_EQ(b, 42);
  CHECK_EQ(s, size);
  MPI_Type_free(&four);
}

static void messages(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size < 2) return;
  const int peer = rank == 0 ? 1 : 0;
  if (rank > 1) return;
  if (rank == 0) {
    int i4[4] = {1, 2, 3, 4};
    double d2[2] = {0.5, 1.5};
    MPI_Send(i4, 4, MPI_INT, peer, 3, comm);          /* received as MPI_BYTE */
    MPI_Send(i4, 16, MPI_BYTE, peer, 3, comm);        /* MPI_BYTE received as MPI_INT */
    MPI_Send(i4, 2, MPI_INT, peer, 3, comm);          /* into a longer receive */
    MPI_Send(i4, 1, MPI_INT, peer, 5, comm);          /* two messages of one tag, other types, */
    MPI_Send(d2, 2, MPI_DOUBLE, peer, 5, comm);       /* received by receives completed out of order */
    char packed[64];
    int pos = 0;
    MPI_Pack(d2, 2, MPI_DOUBLE, packed, sizeof packed, &pos, comm);
    MPI_Send(packed, pos, MPI_PACKED, peer, 6, comm);
    MPI_Send(d2, 2, MPI_DOUBLE, peer, 7, comm);       /* matched by MPI_Mprobe */
    int x = 9;
    MPI_Sendrecv_replace(&x, 1, MPI_INT, peer, 8, peer, 8, comm, MPI_STATUS_IGNORE);
    CHECK_EQ(x, 10);
  } else {
    unsigned char bytes[16];
    int i4[8] = {0}, one = 0;
    double d2[2] = {0, 0};
    MPI_Recv(bytes, 16, MPI_BYTE, peer, 3, comm, MPI_STATUS_IGNORE);
    MPI_Recv(i4, 4, MPI_INT, peer, 3, comm, MPI_STATUS_IGNORE);
    CHECK_EQ(i4[3], 4);
    MPI_Status st;
    MPI_Recv(i4, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_EQ(n, 2);
    MPI_Request r[2];
    MPI_Irecv(&one, 1, MPI_INT, peer, 5, comm, &r[0]);
    MPI_Irecv(d2, 2, MPI_DOUBLE, peer, 5, comm, &r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK_EQ(one, 1);
    CHECK(d2[1] == 1.5);
    MPI_Recv(d2, 2, MPI_DOUBLE, peer, 6, comm, MPI_STATUS_IGNORE);  /* MPI_PACKED received typed */
    CHECK(d2[0] == 0.5);
    MPI_Message m;
    MPI_Mprobe(peer, 7, comm, &m, MPI_STATUS_IGNORE);
    MPI_Mrecv(d2, 2, MPI_DOUBLE, &m, MPI_STATUS_IGNORE);
    int x = 10;
    MPI_Sendrecv_replace(&x, 1, MPI_INT, peer, 8, peer, 8, comm, MPI_STATUS_IGNORE);
    CHECK_EQ(x, 9);
  }
}

/* A send refused under MPI_ERRORS_RETURN sends nothing: rank 0's first send reads the result
 * buffer of its pending MPI_Get (MPI_ERR_BUFFER), so the message rank 1 receives with that tag is
 * the double sent after it, and its signature is the double's. */
static void refused_send(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int exposed[4] = {rank, rank, rank, rank};
  MPI_Win win;
  MPI_Win_create(exposed, sizeof exposed, sizeof(int), MPI_INFO_NULL, comm, &win);
  if (size >= 2 && rank == 0) {
    int got[4] = {0};
    double d = 2.5;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get(got, 4, MPI_INT, 1, 0, 4, MPI_INT, win);
    int err = MPI_Send(got, 4, MPI_INT, 1, 11, comm), cls = MPI_SUCCESS;
    MPI_Error_class(err, &cls);
    CHECK_EQ(cls, MPI_ERR_BUFFER);
    MPI_Win_unlock(1, win);
    CHECK_EQ(got[3], 1);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    MPI_Send(&d, 1, MPI_DOUBLE, 1, 11, comm);
  } else if (size >= 2 && rank == 1) {
    double d = 0;
    MPI_Recv(&d, 1, MPI_DOUBLE, 0, 11, comm, MPI_STATUS_IGNORE);
    CHECK(d == 2.5);
  }
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  collectives(MPI_COMM_WORLD);
  messages(MPI_COMM_WORLD);
  refused_send(MPI_COMM_WORLD);
  MPI_Comm third;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 3, size - rank, &third);
  collectives(third);
  messages(third);
  /* An intercommunicator's collectives, the two groups in the same order. */
  if (size >= 2) {
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
    int x = rank, y = 0;
    MPI_Barrier(inter);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
  MPI_Comm_free(&third);
  if (rank == 0) printf("check_correct: all checks passed\n");
  MPI_Finalize();
  return 0;
}
