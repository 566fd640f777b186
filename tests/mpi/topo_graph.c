/* Graph and distributed-graph topologies (MPI-3.1 7.5.3, 7.5.4): MPI_Graph_create and its
 * queries, a graph of fewer nodes than ranks, MPI_Graph_map, MPI_Dist_graph_create_adjacent
 * (weighted, unweighted, MPI_WEIGHTS_EMPTY) and MPI_Dist_graph_create (edges named by other ranks
 * than their source, exchanged with messages), MPI_Comm_dup keeping the topology. Run on 7 ranks. */
#include "check.h"

/* Vertex v of the general distributed graph below: its edges, in the order of the ranks that named
 * them (rank i names i+1 -> i+3 with weight 100 + i, then i -> i+2 with weight 200 + i). */
static void check_general(MPI_Comm dg, int v) {
  int in, out, weighted, s[4], sw[4], d[4], dw[4];
  MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
  CHECK_EQ(weighted, 1);
  CHECK_EQ(in, 2);
  CHECK_EQ(out, 2);
  MPI_Dist_graph_neighbors(dg, 4, s, sw, 4, d, dw);
  int ei = 0, eo = 0;
  for (int i = 0; i < 7; ++i) {   /* the naming rank */
    for (int e = 0; e < 2; ++e) { /* its edges in order */
      const int es = e == 0 ? (i + 1) % 7 : i, ed = e == 0 ? (i + 3) % 7 : (i + 2) % 7, ew = (e == 0 ? 100 : 200) + i;
      if (es == v) {
        CHECK_EQ(d[eo], ed);
        CHECK_EQ(dw[eo], ew);
        ++eo;
      }
      if (ed == v) {
        CHECK_EQ(s[ei], es);
        CHECK_EQ(sw[ei], ew);
        ++ei;
      }
    }
  }
  CHECK_EQ(ei, 2);
  CHECK_EQ(eo, 2);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK_EQ(size, 7);

  /* A star with a tail: 0 - {1, 2, 3}, 3 - 4, 4 - 5, 5 - 5 (a self-loop), 6 alone. */
  const int index[7] = {3, 4, 5, 7, 9, 11, 11};
  const int edges[11] = {1, 2, 3, 0, 0, 0, 4, 3, 5, 4, 5};
  MPI_Comm graph, dup;
  MPI_Graph_create(MPI_COMM_WORLD, 7, index, edges, 0, &graph);
  int status, nnodes, nedges, gr;
  MPI_Comm_rank(graph, &gr);
  CHECK_EQ(gr, rank);
  MPI_Topo_test(graph, &status);
  CHECK_EQ(status, MPI_GRAPH);
  MPI_Comm_dup(graph, &dup);
  MPI_Topo_test(dup, &status);
  CHECK_EQ(status, MPI_GRAPH);
  MPI_Graphdims_get(dup, &nnodes, &nedges);
  CHECK_EQ(nnodes, 7);
  CHECK_EQ(nedges, 11);
  int gi[7], ge[11];
  MPI_Graph_get(dup, 7, 11, gi, ge);
  for (int i = 0; i < 7; ++i) CHECK_EQ(gi[i], index[i]);
  for (int i = 0; i < 11; ++i) CHECK_EQ(ge[i], edges[i]);
  for (int r = 0; r < 7; ++r) {
    int n, nb[4];
    MPI_Graph_neighbors_count(graph, r, &n);
    CHECK_EQ(n, index[r] - (r ? index[r - 1] : 0));
    MPI_Graph_neighbors(graph, r, 4, nb);
    for (int i = 0; i < n; ++i) CHECK_EQ(nb[i], edges[(r ? index[r - 1] : 0) + i]);
  }
  MPI_Comm_free(&dup);
  MPI_Comm_free(&graph);

  /* A ring of five nodes on seven ranks: ranks 5 and 6 get MPI_COMM_NULL. */
  const int ring_index[5] = {2, 4, 6, 8, 10}, ring_edges[10] = {1, 4, 0, 2, 1, 3, 2, 4, 3, 0};
  MPI_Graph_create(MPI_COMM_WORLD, 5, ring_index, ring_edges, 0, &graph);
  if (rank >= 5) {
    CHECK(graph == MPI_COMM_NULL);
  } else {
    MPI_Graphdims_get(graph, &nnodes, &nedges);
    CHECK_EQ(nnodes, 5);
    CHECK_EQ(nedges, 10);
    MPI_Comm_free(&graph);
  }

  /* MPI_Graph_map and MPI_Graph_create with reorder: a permutation of the ranks, the same one. */
  {
    int mapped, all[7], seen[7] = {0};
    MPI_Graph_map(MPI_COMM_WORLD, 7, index, edges, &mapped);
    MPI_Allgather(&mapped, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < 7; ++i) CHECK(all[i] >= 0 && all[i] < 7 && !seen[all[i]]++);
    MPI_Graph_create(MPI_COMM_WORLD, 7, index, edges, 1, &graph);
    MPI_Comm_rank(graph, &gr);
    CHECK_EQ(gr, mapped);
    int n;
    MPI_Graph_neighbors_count(graph, gr, &n);
    CHECK_EQ(n, index[gr] - (gr ? index[gr - 1] : 0));
    MPI_Comm_free(&graph);
  }

  /* Adjacent distributed graph, weighted: rank i hears from i-1 and i-3, talks to i+1 and i+3
   * (mod 7), weights naming the edge; rank 6 has no edges at all (MPI_WEIGHTS_EMPTY). */
  {
    int srcs[2] = {(rank + 6) % 7, (rank + 4) % 7}, dsts[2] = {(rank + 1) % 7, (rank + 3) % 7};
    int sw[2] = {srcs[0] * 10 + rank, srcs[1] * 10 + rank}, dw[2] = {rank * 10 + dsts[0], rank * 10 + dsts[1]};
    const int deg = rank == 6 ? 0 : 2;
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, srcs, deg ? sw : MPI_WEIGHTS_EMPTY, deg, dsts,
                                   deg ? dw : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg);
    MPI_Topo_test(dg, &status);
    CHECK_EQ(status, MPI_DIST_GRAPH);
    int in, out, weighted, s[2] = {-1, -1}, d[2] = {-1, -1}, a[2] = {-1, -1}, b[2] = {-1, -1};
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK_EQ(in, deg);
    CHECK_EQ(out, deg);
    CHECK_EQ(weighted, 1);
    MPI_Dist_graph_neighbors(dg, 2, s, a, 2, d, b);
    for (int i = 0; i < deg; ++i) {
      CHECK_EQ(s[i], srcs[i]);
      CHECK_EQ(a[i], sw[i]);
      CHECK_EQ(d[i], dsts[i]);
      CHECK_EQ(b[i], dw[i]);
    }
    MPI_Comm_free(&dg);

    /* Unweighted. */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &dg);
    MPI_Comm_dup(dg, &dup);
    MPI_Dist_graph_neighbors_count(dup, &in, &out, &weighted);
    CHECK_EQ(in, 2);
    CHECK_EQ(out, 2);
    CHECK_EQ(weighted, 0);
    MPI_Dist_graph_neighbors(dup, 2, s, MPI_UNWEIGHTED, 2, d, MPI_UNWEIGHTED);
    CHECK_EQ(s[0], srcs[0]);
    CHECK_EQ(s[1], srcs[1]);
    CHECK_EQ(d[0], dsts[0]);
    CHECK_EQ(d[1], dsts[1]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&dg);
  }

  /* General distributed graph: rank i names the edges i+1 -> i+3 (weight 100 + i) and i -> i+2
   * (weight 200 + i), not all its own. Without reorder each rank is its own vertex; with it, the
   * rank that gets new rank v holds vertex v's edges (a permutation of the ranks). */
  {
    const int from[2] = {(rank + 1) % 7, rank}, degrees[2] = {1, 1};
    const int to[2] = {(rank + 3) % 7, (rank + 2) % 7}, weights[2] = {100 + rank, 200 + rank};
    for (int reorder = 0; reorder < 2; ++reorder) {
      MPI_Comm dg;
      MPI_Dist_graph_create(MPI_COMM_WORLD, 2, from, degrees, to, weights, MPI_INFO_NULL, reorder, &dg);
      int v, all[7], seen[7] = {0};
      MPI_Comm_rank(dg, &v);
      MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0; i < 7; ++i) CHECK(all[i] >= 0 && all[i] < 7 && !seen[all[i]]++);
      if (!reorder) CHECK_EQ(v, rank);
      check_general(dg, v);
      MPI_Comm_free(&dg);
    }
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("topo_graph: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
