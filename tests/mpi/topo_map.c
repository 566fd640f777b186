/* Rank placement (docs/mpi.md, "Rank placement") on a 4x4 mesh or torus, all 16 ranks, from a
 * communicator whose order is shuffled against the machine's (a split with keys 7 r mod 16):
 * MPI_Cart_create with reorder=1 lays the grid on the machine's own mesh, so that every Cartesian
 * neighbour is one hop away, with the exact mapping asserted; reorder=0 keeps the shuffled order.
 * A 3-D grid is folded onto the 2-D machine (exact mapping asserted); a distributed-graph ring is
 * placed greedily: fewer hops than the shuffled order. Argument: "mesh" or "torus" (the machine). */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int torus;

/* Hops between two world ranks (VPs) of the 4x4 machine. */
static int hops(int a, int b) {
  int dr = abs(a / 4 - b / 4), dc = abs(a % 4 - b % 4);
  if (torus) {
    if (dr > 2) dr = 4 - dr;
    if (dc > 2) dc = 4 - dc;
  }
  return dr + dc;
}

static int world_of(MPI_Comm comm, int r) {
  if (r == MPI_PROC_NULL) return MPI_PROC_NULL;
  MPI_Group g, w;
  int out;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  MPI_Group_translate_ranks(g, 1, &r, w, &out);
  MPI_Group_free(&g);
  MPI_Group_free(&w);
  return out;
}

/* The hops from this rank to its +1 neighbour along every dimension, summed over all ranks
 * (each edge of the grid once). */
static int grid_hops(MPI_Comm cart) {
  int nd, me, sum = 0, total;
  MPI_Cartdim_get(cart, &nd);
  MPI_Comm_rank(cart, &me);
  for (int d = 0; d < nd; ++d) {
    int src, dst;
    MPI_Cart_shift(cart, d, 1, &src, &dst);
    if (dst != MPI_PROC_NULL && dst != me) sum += hops(world_of(cart, me), world_of(cart, dst));
  }
  MPI_Allreduce(&sum, &total, 1, MPI_INT, MPI_SUM, cart);
  return total;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK_EQ(size, 16);
  torus = argc > 1 && strcmp(argv[1], "torus") == 0;

  MPI_Comm shuffled;
  MPI_Comm_split(MPI_COMM_WORLD, 0, (7 * rank) % 16, &shuffled);
  int srank;
  MPI_Comm_rank(shuffled, &srank);
  CHECK_EQ(srank, (7 * rank) % 16);

  /* 4x4, non-periodic and periodic. reorder=1: cart rank r is world rank r (the box at the
   * machine's origin, grid dimension i along machine dimension i); every neighbour one hop away,
   * but a mesh's wrap-around neighbours, three hops. reorder=0: the shuffled order. */
  const int dims[2] = {4, 4};
  for (int periodic = 0; periodic < 2; ++periodic) {
    const int periods[2] = {periodic, periodic};
    MPI_Comm cart;
    MPI_Cart_create(shuffled, 2, dims, periods, 1, &cart);
    int cr, newrank;
    MPI_Comm_rank(cart, &cr);
    CHECK_EQ(cr, rank);
    MPI_Cart_map(shuffled, 2, dims, periods, &newrank);
    CHECK_EQ(newrank, rank);
    for (int d = 0; d < 2; ++d) {
      int src, dst;
      MPI_Cart_shift(cart, d, 1, &src, &dst);
      const int wrap_src = periodic && (d == 0 ? rank / 4 == 0 : rank % 4 == 0);
      const int wrap_dst = periodic && (d == 0 ? rank / 4 == 3 : rank % 4 == 3);
      if (src != MPI_PROC_NULL) CHECK_EQ(hops(rank, world_of(cart, src)), wrap_src && !torus ? 3 : 1);
      if (dst != MPI_PROC_NULL) CHECK_EQ(hops(rank, world_of(cart, dst)), wrap_dst && !torus ? 3 : 1);
    }
    /* 24 grid edges of one hop, and on a mesh the 8 wrap-around edges of three. */
    CHECK_EQ(grid_hops(cart), 24 + (periodic ? (torus ? 8 : 24) : 0));
    MPI_Comm_free(&cart);

    MPI_Cart_create(shuffled, 2, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &cr);
    CHECK_EQ(cr, srank);
    CHECK(grid_hops(cart) > 24 + (periodic ? (torus ? 8 : 24) : 0));
    MPI_Comm_free(&cart);
  }

  /* 2x4 on 16 ranks: the box of the first two machine rows; world ranks 8..15 are left out. */
  {
    const int d2[2] = {2, 4}, periods[2] = {0, 0};
    MPI_Comm cart;
    MPI_Cart_create(shuffled, 2, d2, periods, 1, &cart);
    if (rank < 8) {
      int cr;
      MPI_Comm_rank(cart, &cr);
      CHECK_EQ(cr, rank);
      CHECK_EQ(grid_hops(cart), 10);
      MPI_Comm_free(&cart);
    } else {
      CHECK(cart == MPI_COMM_NULL);
    }
  }

  /* 2x2x4: the first two grid dimensions folded onto the machine's rows in boustrophedon order
   * (coordinates (a, b) at row 2a + b for even a, 2a + 1 - b for odd a), the third along its
   * columns: 36 hops on the mesh (the fold's (0,0)-(1,0) edges take three), 28 on the torus. */
  {
    const int d3[3] = {2, 2, 4}, periods[3] = {0, 0, 0};
    MPI_Comm placed, kept;
    MPI_Cart_create(shuffled, 3, d3, periods, 1, &placed);
    MPI_Cart_create(shuffled, 3, d3, periods, 0, &kept);
    int me, at[3];
    MPI_Comm_rank(placed, &me);
    MPI_Cart_coords(placed, me, 3, at);
    const int row = 2 * at[0] + (at[0] % 2 ? 1 - at[1] : at[1]);
    CHECK_EQ(world_of(placed, me), row * 4 + at[2]);
    const int h1 = grid_hops(placed), h0 = grid_hops(kept);
    if (rank == 0) printf("2x2x4 grid: %d hops placed, %d in the shuffled order\n", h1, h0);
    CHECK_EQ(h1, torus ? 28 : 36);
    CHECK(h0 > h1);
    MPI_Comm_free(&placed);
    MPI_Comm_free(&kept);
  }

  /* A distributed-graph ring over the shuffled ranks (i -> i+1), weighted; reordered greedily. */
  {
    const int src = (srank + 15) % 16, dst = (srank + 1) % 16, w = 1;
    int h[2];
    for (int reorder = 0; reorder < 2; ++reorder) {
      MPI_Comm ring;
      MPI_Dist_graph_create_adjacent(shuffled, 1, &src, &w, 1, &dst, &w, MPI_INFO_NULL, reorder, &ring);
      int me, in, out;
      MPI_Comm_rank(ring, &me);
      MPI_Dist_graph_neighbors(ring, 1, &in, MPI_UNWEIGHTED, 1, &out, MPI_UNWEIGHTED);
      int mine = hops(world_of(ring, me), world_of(ring, out));
      MPI_Allreduce(&mine, &h[reorder], 1, MPI_INT, MPI_SUM, ring);
      MPI_Comm_free(&ring);
    }
    if (rank == 0) printf("ring of 16: %d hops placed, %d in the shuffled order\n", h[1], h[0]);
    CHECK(h[1] < h[0]);
  }

  MPI_Comm_free(&shuffled);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("topo_map: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
