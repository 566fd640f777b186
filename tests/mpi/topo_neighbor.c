/* Neighborhood collectives (MPI-3.1 7.6) on Cartesian grids (non-periodic, periodic, with
 * dimensions of 1 and 2 whose neighbours repeat), a graph and distributed graphs: every block
 * received is checked against what its sender put in it, and blocks of MPI_PROC_NULL neighbours
 * must stay untouched. Runs on any number of ranks; the tests use 12 and 7. */
#include <stdlib.h>

#include "check.h"

#define MAXDEG 16
#define SENTINEL (-7)

static int rank, size;
static int nin, nout, sources[MAXDEG], dests[MAXDEG];
static int all_dests[64][MAXDEG], all_nout[64];
static int cartesian; /* the communicator has a Cartesian topology */

/* The calling rank's sources and destinations in the order the collectives use. */
static void neighbours(MPI_Comm comm) {
  int kind;
  MPI_Topo_test(comm, &kind);
  cartesian = kind == MPI_CART;
  if (kind == MPI_CART) {
    int nd;
    MPI_Cartdim_get(comm, &nd);
    nin = nout = 2 * nd;
    for (int d = 0; d < nd; ++d) {
      MPI_Cart_shift(comm, d, 1, &sources[2 * d], &sources[2 * d + 1]);
      dests[2 * d] = sources[2 * d];
      dests[2 * d + 1] = sources[2 * d + 1];
    }
  } else if (kind == MPI_GRAPH) {
    MPI_Graph_neighbors_count(comm, rank, &nin);
    MPI_Graph_neighbors(comm, rank, MAXDEG, sources);
    nout = nin;
    for (int i = 0; i < nin; ++i) dests[i] = sources[i];
  } else {
    int weighted;
    MPI_Dist_graph_neighbors_count(comm, &nin, &nout, &weighted);
    MPI_Dist_graph_neighbors(comm, MAXDEG, sources, MPI_UNWEIGHTED, MAXDEG, dests, MPI_UNWEIGHTED);
  }
  CHECK(nin <= MAXDEG && nout <= MAXDEG);
  /* Every rank's destinations, to know which of its blocks each receive gets. */
  int mine[MAXDEG + 1];
  mine[0] = nout;
  for (int i = 0; i < nout; ++i) mine[i + 1] = dests[i];
  int all[64 * (MAXDEG + 1)];
  MPI_Allgather(mine, MAXDEG + 1, MPI_INT, all, MAXDEG + 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r) {
    all_nout[r] = all[r * (MAXDEG + 1)];
    for (int i = 0; i < all_nout[r]; ++i) all_dests[r][i] = all[r * (MAXDEG + 1) + 1 + i];
  }
}

/* The index of the sender's block that arrives in receive slot j. On a Cartesian grid, the block the
 * neighbour sent the other way along the same dimension (to its +1 neighbour for this rank's -1
 * slot), even when the two neighbours are one rank; otherwise the k-th receive from a rank gets the
 * k-th block that rank sends to this one. */
static int block_for(int j) {
  if (cartesian) return j ^ 1;
  const int s = sources[j];
  int nth = 0;
  for (int i = 0; i < j; ++i) nth += sources[i] == s;
  for (int k = 0; k < all_nout[s]; ++k)
    if (all_dests[s][k] == rank && nth-- == 0) return k;
  CHECK(0);
  return -1;
}

static int count_of(int sender, int block) { return 1 + (sender + block) % 3; }

static void check_collectives(MPI_Comm comm, const char* what) {
  int me;
  MPI_Comm_rank(comm, &me);
  rank = me;
  MPI_Comm_size(comm, &size);
  neighbours(comm);
  int send[MAXDEG * 8], recv[MAXDEG * 8];

  /* allgather: 3 ints from every source. */
  for (int e = 0; e < 3; ++e) send[e] = me * 10000 + e;
  for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = SENTINEL;
  MPI_Neighbor_allgather(send, 3, MPI_INT, recv, 3, MPI_INT, comm);
  for (int j = 0; j < nin; ++j)
    for (int e = 0; e < 3; ++e)
      CHECK_EQ(recv[3 * j + e], sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + e);

  /* alltoall: block k of 2 ints to destination k. */
  for (int k = 0; k < nout; ++k)
    for (int e = 0; e < 2; ++e) send[2 * k + e] = me * 10000 + k * 100 + e;
  for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = SENTINEL;
  MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, comm);
  for (int j = 0; j < nin; ++j)
    for (int e = 0; e < 2; ++e)
      CHECK_EQ(recv[2 * j + e], sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + block_for(j) * 100 + e);

  /* The same alltoall as a nonblocking collective, overlapped with a blocking allgather that starts
     after it, then as a persistent one started twice: the same blocks each time. */
  int send2[MAXDEG * 8], recv2[MAXDEG * 8];
  for (int e = 0; e < 3; ++e) send2[e] = me * 10000 + e;
  for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = recv2[i] = SENTINEL;
  MPI_Request req;
  CHECK_EQ(MPI_Ineighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, comm, &req), MPI_SUCCESS);
  MPI_Neighbor_allgather(send2, 3, MPI_INT, recv2, 3, MPI_INT, comm);
  CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(req, MPI_REQUEST_NULL);
  for (int j = 0; j < nin; ++j)
    for (int e = 0; e < 2; ++e) {
      CHECK_EQ(recv[2 * j + e], sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + block_for(j) * 100 + e);
      CHECK_EQ(recv2[3 * j + e], sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + e);
    }
  CHECK_EQ(MPI_Neighbor_alltoall_init(send, 2, MPI_INT, recv, 2, MPI_INT, comm, MPI_INFO_NULL, &req), MPI_SUCCESS);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = SENTINEL;
    CHECK_EQ(MPI_Start(&req), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(req != MPI_REQUEST_NULL); /* persistent: inactive, not freed */
    for (int j = 0; j < nin; ++j)
      for (int e = 0; e < 2; ++e)
        CHECK_EQ(recv[2 * j + e],
                 sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + block_for(j) * 100 + e);
  }
  CHECK_EQ(MPI_Request_free(&req), MPI_SUCCESS);

  /* allgatherv: count_of(source, 0) ints from each source, blocks in reverse order with gaps. */
  int rcounts[MAXDEG], rdispls[MAXDEG], scounts[MAXDEG], sdispls[MAXDEG];
  for (int e = 0; e < 3; ++e) send[e] = me * 10000 + 50 + e;
  for (int j = 0; j < nin; ++j) {
    rcounts[j] = sources[j] == MPI_PROC_NULL ? 1 : count_of(sources[j], 0);
    rdispls[j] = 4 * (nin - 1 - j) + 1;
  }
  for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = SENTINEL;
  MPI_Neighbor_allgatherv(send, count_of(me, 0), MPI_INT, recv, rcounts, rdispls, MPI_INT, comm);
  for (int j = 0; j < nin; ++j)
    for (int e = 0; e < rcounts[j]; ++e)
      CHECK_EQ(recv[rdispls[j] + e], sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + 50 + e);
  for (int j = 0; j < nin; ++j) CHECK_EQ(recv[4 * (nin - 1 - j)], SENTINEL); /* the gaps */

  /* alltoallv: block k has count_of(me, k) ints, at displacement 4 * k. */
  for (int k = 0; k < nout; ++k) {
    scounts[k] = count_of(me, k);
    sdispls[k] = 4 * k;
    for (int e = 0; e < scounts[k]; ++e) send[sdispls[k] + e] = me * 10000 + k * 100 + 60 + e;
  }
  for (int j = 0; j < nin; ++j) {
    rcounts[j] = sources[j] == MPI_PROC_NULL ? 2 : count_of(sources[j], block_for(j));
    rdispls[j] = 4 * (nin - 1 - j);
  }
  for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = SENTINEL;
  MPI_Neighbor_alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, comm);
  for (int j = 0; j < nin; ++j)
    for (int e = 0; e < rcounts[j]; ++e)
      CHECK_EQ(recv[rdispls[j] + e],
               sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + block_for(j) * 100 + 60 + e);

  /* alltoallw: each block two ints taken with a stride of 2 (a vector type), received contiguous,
   * displacements in bytes. */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int wcounts[MAXDEG], rwcounts[MAXDEG];
  MPI_Aint sbytes[MAXDEG], rbytes[MAXDEG];
  MPI_Datatype stypes[MAXDEG], rtypes[MAXDEG];
  for (int k = 0; k < nout; ++k) {
    wcounts[k] = 1;
    sbytes[k] = (MPI_Aint)(4 * k * sizeof(int));
    stypes[k] = strided;
    send[4 * k] = me * 10000 + k * 100 + 70;
    send[4 * k + 1] = SENTINEL;
    send[4 * k + 2] = me * 10000 + k * 100 + 71;
  }
  for (int j = 0; j < nin; ++j) {
    rwcounts[j] = 2;
    rbytes[j] = (MPI_Aint)(3 * j * sizeof(int));
    rtypes[j] = MPI_INT;
  }
  for (int i = 0; i < MAXDEG * 8; ++i) recv[i] = SENTINEL;
  MPI_Neighbor_alltoallw(send, wcounts, sbytes, stypes, recv, rwcounts, rbytes, rtypes, comm);
  for (int j = 0; j < nin; ++j) {
    for (int e = 0; e < 2; ++e)
      CHECK_EQ(recv[3 * j + e],
               sources[j] == MPI_PROC_NULL ? SENTINEL : sources[j] * 10000 + block_for(j) * 100 + 70 + e);
    CHECK_EQ(recv[3 * j + 2], SENTINEL);
  }
  MPI_Type_free(&strided);

  /* User messages on the communicator are not matched by the collectives' and vice versa. */
  int token = me, got = -1;
  MPI_Request rq;
  MPI_Irecv(&got, 1, MPI_INT, me, 0, comm, &rq);
  MPI_Send(&token, 1, MPI_INT, me, 0, comm);
  MPI_Neighbor_allgather(send, 3, MPI_INT, recv, 3, MPI_INT, comm);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK_EQ(got, me);
  (void)what;
}

int main(int argc, char** argv) {
  int wrank, wsize;
  init_world(&argc, &argv, &wrank, &wsize);
  CHECK(wsize <= 64);

  /* Cartesian: 3x4 on 12 ranks (else MPI_Dims_create's grid), non-periodic and periodic; a periodic
   * 2 x n grid, whose -1 and +1 neighbours along the first dimension are the same rank. */
  int dims[2] = {3, 4};
  if (wsize != 12) dims[0] = dims[1] = 0, MPI_Dims_create(wsize, 2, dims);
  for (int p = 0; p < 2; ++p) {
    const int periods[2] = {p, p};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    check_collectives(cart, "cart");
    MPI_Comm_free(&cart);
  }
  if (wsize % 2 == 0) {
    const int d2[2] = {2, wsize / 2}, periods[2] = {1, 0};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, periods, 1, &cart);
    check_collectives(cart, "cart 2xn");
    MPI_Comm_free(&cart);
  }
  {
    /* A 1-D periodic grid of one process: both neighbours are itself. */
    MPI_Comm cart;
    const int one = 1, periodic = 1;
    MPI_Cart_create(MPI_COMM_SELF, 1, &one, &periodic, 0, &cart);
    check_collectives(cart, "cart self");
    MPI_Comm_free(&cart);
  }

  /* Graph: node i is linked to i+1, i-1, i+3, i-3 (mod n), the same edges both ways. */
  {
    int index[64], edges[64 * 4];
    for (int i = 0; i < wsize; ++i) {
      index[i] = 4 * (i + 1);
      edges[4 * i] = (i + 1) % wsize;
      edges[4 * i + 1] = (i + wsize - 1) % wsize;
      edges[4 * i + 2] = (i + 3) % wsize;
      edges[4 * i + 3] = (i + 3 * wsize - 3) % wsize;
    }
    for (int reorder = 0; reorder < 2; ++reorder) {
      MPI_Comm graph;
      MPI_Graph_create(MPI_COMM_WORLD, wsize, index, edges, reorder, &graph);
      check_collectives(graph, "graph");
      MPI_Comm_free(&graph);
    }
  }

  /* Distributed graphs: rank i receives from i-1 and i-2 and sends to i+1 and i+2 (adjacent);
   * and (general form) every rank names the edges i+1 -> i+3 and i -> i+1. */
  {
    const int n = wsize;
    const int srcs[2] = {(wrank + n - 1) % n, (wrank + n - 2) % n};
    const int dsts[2] = {(wrank + 1) % n, (wrank + 2) % n};
    for (int reorder = 0; reorder < 2; ++reorder) {
      MPI_Comm dg;
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                     reorder, &dg);
      check_collectives(dg, "dist graph adjacent");
      MPI_Comm_free(&dg);
    }
    const int from[2] = {(wrank + 1) % n, wrank}, degrees[2] = {1, 1};
    const int to[2] = {(wrank + 3) % n, (wrank + 1) % n}, weights[2] = {5, 7};
    for (int reorder = 0; reorder < 2; ++reorder) {
      MPI_Comm dg;
      MPI_Dist_graph_create(MPI_COMM_WORLD, 2, from, degrees, to, weights, MPI_INFO_NULL, reorder, &dg);
      check_collectives(dg, "dist graph");
      MPI_Comm_free(&dg);
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0) printf("topo_neighbor: all checks passed on %d ranks\n", wsize);
  MPI_Finalize();
  return 0;
}
