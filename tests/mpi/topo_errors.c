/* Errors of the topology functions and neighborhood collectives, under MPI_ERRORS_RETURN: each bad
 * call returns its MPI error class and changes nothing. With the argument "fatal", a query on a
 * communicator without a topology ends the run under the default handler, and with "fatal_dims" a
 * Cartesian grid given no dims array (the test checks the report). Run on 6 ranks or more. */
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, size, cls;
  init_world(&argc, &argv, &rank, &size);
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    int src, dst;
    MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst);
    return 1; /* not reached */
  }
  if (argc > 1 && strcmp(argv[1], "fatal_dims") == 0) {
    const int periods[2] = {0, 0};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, periods, 0, &cart);
    return 1; /* not reached */
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm cart = MPI_COMM_NULL, c2;
  const int periods[3] = {0, 0, 0};

  /* A grid of more processes than the communicator has, and non-positive extents: MPI_ERR_DIMS. */
  const int too_big[2] = {size, 2}, negative[2] = {-2, 1}, zero[2] = {0, 1};
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, too_big, periods, 0, &cart), MPI_ERR_DIMS);
  CHECK(cart == MPI_COMM_NULL);
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, negative, periods, 0, &cart), MPI_ERR_DIMS);
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &cart), MPI_ERR_DIMS);
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, -1, too_big, periods, 0, &cart), MPI_ERR_DIMS);
  CHECK_EQ(MPI_Cart_map(MPI_COMM_WORLD, 2, too_big, periods, &cls), MPI_ERR_DIMS);
  CHECK_EQ(MPI_Cart_create(MPI_COMM_NULL, 2, too_big, periods, 0, &cart), MPI_ERR_COMM);
  MPI_Error_class(MPI_ERR_DIMS, &cls);
  CHECK_EQ(cls, MPI_ERR_DIMS);

  /* Queries on a communicator without (that) topology: MPI_ERR_TOPOLOGY. */
  int n, e, in, out, w, d[2], p[2], c[2], st, buf[8];
  CHECK_EQ(MPI_Cartdim_get(MPI_COMM_WORLD, &n), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Cart_get(MPI_COMM_WORLD, 2, d, p, c), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &in, &out), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Graphdims_get(MPI_COMM_WORLD, &n, &e), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &w), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Neighbor_allgather(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
  CHECK_EQ(MPI_Neighbor_alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
  char text[MPI_MAX_ERROR_STRING];
  int len;
  MPI_Error_string(MPI_ERR_TOPOLOGY, text, &len);
  CHECK(strstr(text, "invalid topology") != NULL);

  /* A 2x3 grid: wrong kind of topology, bad direction, rank and coordinates. */
  const int grid[2] = {2, 3};
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, grid, periods, 0, &cart), MPI_SUCCESS);
  if (cart != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Graph_neighbors_count(cart, 0, &n), MPI_ERR_TOPOLOGY);
    CHECK_EQ(MPI_Dist_graph_neighbors_count(cart, &in, &out, &w), MPI_ERR_TOPOLOGY);
    CHECK_EQ(MPI_Topo_test(cart, &st), MPI_SUCCESS);
    CHECK_EQ(st, MPI_CART);
    CHECK_EQ(MPI_Cart_shift(cart, 2, 1, &in, &out), MPI_ERR_ARG);
    CHECK_EQ(MPI_Cart_shift(cart, -1, 1, &in, &out), MPI_ERR_ARG);
    CHECK_EQ(MPI_Cart_coords(cart, 6, 2, c), MPI_ERR_RANK);
    const int off[2] = {2, 0};
    CHECK_EQ(MPI_Cart_rank(cart, off, &n), MPI_ERR_ARG);
    /* MPI_IN_PLACE is not allowed in a neighborhood collective. */
    CHECK_EQ(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, cart), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Neighbor_alltoall(buf, -1, MPI_INT, buf, 1, MPI_INT, cart), MPI_ERR_COUNT);
    /* Every rank of the grid has a neighbour, whose block of two ints does not fit in one. */
    int two[8] = {0}, one[4];
    CHECK_EQ(MPI_Neighbor_allgather(two, 2, MPI_INT, one, 1, MPI_INT, cart), MPI_ERR_TRUNCATE);
    /* The v- and w-forms' null count, displacement and type arrays (four entries: two neighbours in
     * each dimension, MPI_PROC_NULL among them): MPI_ERR_ARG, at the call or, for the nonblocking
     * form, at its completion. */
    const int ones[4] = {1, 1, 1, 1}, at[4] = {0, 1, 2, 3};
    const MPI_Aint bytes_at[4] = {0, 4, 8, 12};
    const MPI_Datatype ints[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    CHECK_EQ(MPI_Neighbor_allgatherv(buf, 1, MPI_INT, one, NULL, at, MPI_INT, cart), MPI_ERR_ARG);
    CHECK_EQ(MPI_Neighbor_allgatherv(buf, 1, MPI_INT, one, ones, NULL, MPI_INT, cart), MPI_ERR_ARG);
    CHECK_EQ(MPI_Neighbor_alltoallv(two, NULL, at, MPI_INT, one, ones, at, MPI_INT, cart), MPI_ERR_ARG);
    CHECK_EQ(MPI_Neighbor_alltoallv(two, ones, NULL, MPI_INT, one, ones, at, MPI_INT, cart), MPI_ERR_ARG);
    CHECK_EQ(MPI_Neighbor_alltoallw(two, ones, bytes_at, NULL, one, ones, bytes_at, ints, cart), MPI_ERR_ARG);
    CHECK_EQ(MPI_Neighbor_alltoallw(two, ones, bytes_at, ints, one, ones, NULL, ints, cart), MPI_ERR_ARG);
    MPI_Request req;
    CHECK_EQ(MPI_Ineighbor_allgatherv(buf, 1, MPI_INT, one, NULL, at, MPI_INT, cart, &req), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    MPI_Comm_free(&cart);
  }

  /* Graphs: too many nodes, an edge to no node, a decreasing index. */
  const int index[2] = {1, 2}, edges[2] = {1, 0}, bad_edges[2] = {1, 5}, bad_index[2] = {2, 1};
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &c2), MPI_ERR_ARG);
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 2, index, bad_edges, 0, &c2), MPI_ERR_ARG);
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &c2), MPI_ERR_ARG);
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &c2), MPI_SUCCESS);
  if (c2 != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Graph_neighbors_count(c2, 2, &n), MPI_ERR_RANK);
    CHECK_EQ(MPI_Cartdim_get(c2, &n), MPI_ERR_TOPOLOGY);
    /* The queries' null outputs and arrays: MPI_ERR_ARG. */
    int got[2];
    CHECK_EQ(MPI_Graphdims_get(c2, NULL, &n), MPI_ERR_ARG);
    CHECK_EQ(MPI_Graph_get(c2, 2, 2, NULL, got), MPI_ERR_ARG);
    CHECK_EQ(MPI_Graph_get(c2, 2, 2, got, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Graph_neighbors_count(c2, 0, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Graph_neighbors(c2, 0, 2, NULL), MPI_ERR_ARG);
    MPI_Comm_free(&c2);
  }
  CHECK_EQ(MPI_Graph_map(MPI_COMM_WORLD, 2, NULL, edges, &n), MPI_ERR_ARG);
  CHECK_EQ(MPI_Graph_map(MPI_COMM_WORLD, 2, index, edges, NULL), MPI_ERR_ARG);

  /* Distributed graphs: a neighbour outside the communicator, a negative degree or weight,
   * MPI_WEIGHTS_EMPTY with edges. */
  const int nb = size, ok = 0, wneg = -1;
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &nb, MPI_UNWEIGHTED, 0, &ok, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                          0, &c2),
           MPI_ERR_RANK);
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, &ok, MPI_UNWEIGHTED, 0, &ok, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &c2),
           MPI_ERR_ARG);
  CHECK_EQ(
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &ok, &wneg, 0, &ok, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c2),
      MPI_ERR_ARG);
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &ok, MPI_WEIGHTS_EMPTY, 0, &ok, MPI_WEIGHTS_EMPTY,
                                          MPI_INFO_NULL, 0, &c2),
           MPI_ERR_ARG);
  const int one = 1;
  CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &ok, &one, &nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c2),
           MPI_ERR_RANK);
  /* A ring: the queries' null outputs and arrays, and a null receive buffer: MPI_ERR_ARG and
   * MPI_ERR_BUFFER before anything is sent. */
  const int from = (rank + size - 1) % size, to = (rank + 1) % size, weight_one = 1;
  CHECK_EQ(
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, &weight_one, 1, &to, &weight_one, MPI_INFO_NULL, 0, &c2),
      MPI_SUCCESS);
  MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
  int deg_in, deg_out, weighted, peer, weight, data = rank;
  CHECK_EQ(MPI_Dist_graph_neighbors_count(c2, NULL, &deg_out, &weighted), MPI_ERR_ARG);
  CHECK_EQ(MPI_Dist_graph_neighbors_count(c2, &deg_in, &deg_out, &weighted), MPI_SUCCESS);
  CHECK_EQ(weighted, 1);
  CHECK_EQ(MPI_Dist_graph_neighbors(c2, 1, NULL, &weight, 1, &peer, &weight), MPI_ERR_ARG);
  CHECK_EQ(MPI_Dist_graph_neighbors(c2, 1, &peer, &weight, 1, NULL, &weight), MPI_ERR_ARG);
  CHECK_EQ(MPI_Dist_graph_neighbors(c2, 1, &peer, NULL, 1, &peer, &weight), MPI_ERR_ARG);
  CHECK_EQ(MPI_Neighbor_allgather(&data, 1, MPI_INT, NULL, 1, MPI_INT, c2), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Neighbor_allgather(&data, 1, MPI_INT, &peer, 1, MPI_INT, c2), MPI_SUCCESS);
  CHECK_EQ(peer, from);
  MPI_Comm_free(&c2);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("topo_errors: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
