// MPI process topologies (MPI-3.1 chapter 7; docs/mpi.md, "Process topologies"): Cartesian, graph
// and distributed-graph communicators, their queries, MPI_Cart_map / MPI_Graph_map and
// MPI_Dims_create. With `reorder`, ranks are placed on the machine by placement.hpp.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "algorithms/generic.hpp"
#include "call.hpp"
#include "comm.hpp"
#include "placement.hpp"
#include "topology.hpp"

// The sentinels behind MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (exported: mpi.h declares them).
int touchstone_mpi_unweighted[1], touchstone_mpi_weights_empty[1];

namespace touchstone::mpi {

std::vector<int> cart_coords(const std::vector<int>& dims, int rank) {
  std::vector<int> at(dims.size());
  for (std::size_t i = dims.size(); i-- > 0;) {
    at[i] = rank % dims[i];
    rank /= dims[i];
  }
  return at;
}

int cart_rank(const std::vector<int>& dims, const std::vector<int>& periods, std::vector<int> coords) {
  int rank = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    int x = coords[i];
    if (periods[i])
      x = ((x % dims[i]) + dims[i]) % dims[i];
    else if (x < 0 || x >= dims[i])
      return -1;
    rank = rank * dims[i] + x;
  }
  return rank;
}

namespace {

// The rank `disp` steps along `dim` from `rank`, or MPI_PROC_NULL off a non-periodic edge.
int cart_step(const ProcessTopology& t, int rank, std::size_t dim, int disp) {
  std::vector<int> at = cart_coords(t.dims, rank);
  at[dim] += disp;
  const int r = cart_rank(t.dims, t.periods, at);
  return r < 0 ? MPI_PROC_NULL : r;
}

const ProcessTopology& topology_of(const Comm& c, int kind) {
  const auto* t = c.topology.get();
  if (!t || (kind != MPI_UNDEFINED && t->kind != kind)) {
    const char* want = kind == MPI_CART         ? "Cartesian"
                       : kind == MPI_GRAPH      ? "graph"
                       : kind == MPI_DIST_GRAPH ? "distributed-graph"
                                                : "process";
    throw MpiError{MPI_ERR_TOPOLOGY, fmt::format("the communicator has no {} topology", want)};
  }
  return *t;
}

std::vector<int> identity(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The new communicator over c's ranks old_of_new (new rank i is old rank old_of_new[i]) with
// topology t, or MPI_COMM_NULL for a rank of c that is not among them. Collective over c: a
// barrier on c's collective context stands for the agreement a real MPI makes on the new context.
MPI_Comm topology_comm(RankState& rs, const Comm& c, const std::vector<int>& old_of_new,
                       std::shared_ptr<const ProcessTopology> t, bool synchronize = true) {
  if (synchronize) rs.proc->barrier(c.coll);
  if (std::find(old_of_new.begin(), old_of_new.end(), c.rank) == old_of_new.end()) return MPI_COMM_NULL;
  const MPI_Comm h = add_intracomm(rs, c, rs.proc->subgroup(c.pt2pt, old_of_new));
  rs.comms[static_cast<std::size_t>(h)]->topology = std::move(t);
  return h;
}

// A Cartesian topology from the caller's arguments, checked against c (MPI_ERR_DIMS).
std::shared_ptr<ProcessTopology> cart_topology(const Comm& c, int ndims, const int dims[], const int periods[]) {
  if (ndims < 0) throw MpiError{MPI_ERR_DIMS, fmt::format("ndims {} is negative", ndims)};
  auto t = std::make_shared<ProcessTopology>();
  t->kind = MPI_CART;
  long long n = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) throw MpiError{MPI_ERR_DIMS, fmt::format("dims[{}] = {} is not positive", i, dims[i])};
    n *= dims[i];
    if (n > c.size)
      throw MpiError{MPI_ERR_DIMS, fmt::format("the grid {} has more processes than the communicator's {}",
                                               fmt::join(std::vector<int>(dims, dims + ndims), "x"), c.size)};
    t->dims.push_back(dims[i]);
    t->periods.push_back(periods[i] ? 1 : 0);
  }
  return t;
}

int grid_size(const ProcessTopology& t) {
  int n = 1;
  for (int d : t.dims) n *= d;
  return n;
}

// How many of `have` entries a query writes into an array the program says holds `max`.
std::size_t entries_to_write(std::size_t have, int max) {
  return std::min(have, static_cast<std::size_t>(std::max(max, 0)));
}

// A graph topology from MPI_Graph_create's arguments, checked (MPI_ERR_ARG).
std::shared_ptr<ProcessTopology> graph_topology(const Comm& c, int nnodes, const int index[], const int edges[]) {
  if (nnodes < 0 || nnodes > c.size)
    throw MpiError{MPI_ERR_ARG, fmt::format("nnodes {} is not within 0 .. the communicator's size {}", nnodes, c.size)};
  check_arrays(nnodes, {{"index", index}});
  check_arrays(nnodes > 0 ? index[nnodes - 1] : 0, {{"edges", edges}});
  auto t = std::make_shared<ProcessTopology>();
  t->kind = MPI_GRAPH;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < (i ? index[i - 1] : 0))
      throw MpiError{MPI_ERR_ARG, fmt::format("index[{}] = {} is less than the entry before it", i, index[i])};
    t->index.push_back(index[i]);
  }
  const int nedges = nnodes ? index[nnodes - 1] : 0;
  for (int j = 0; j < nedges; ++j) {
    if (edges[j] < 0 || edges[j] >= nnodes)
      throw MpiError{MPI_ERR_ARG, fmt::format("edges[{}] = {} is not a node (0 .. {})", j, edges[j], nnodes - 1)};
    t->edges.push_back(edges[j]);
  }
  return t;
}

CommGraph graph_edges(const ProcessTopology& t) {
  CommGraph g;
  g.n = static_cast<int>(t.index.size());
  for (int i = 0, j = 0; i < g.n; ++i)
    for (; j < t.index[static_cast<std::size_t>(i)]; ++j)
      g.edges.push_back({i, t.edges[static_cast<std::size_t>(j)], 1});
  return g;
}

std::span<const int> graph_neighbors(const ProcessTopology& t, int rank) {
  const int from = rank ? t.index[static_cast<std::size_t>(rank - 1)] : 0;
  return std::span<const int>(t.edges).subspan(
      static_cast<std::size_t>(from), static_cast<std::size_t>(t.index[static_cast<std::size_t>(rank)] - from));
}

int new_rank_of(const std::vector<int>& old_of_new, int old_rank) {
  const auto it = std::find(old_of_new.begin(), old_of_new.end(), old_rank);
  return it == old_of_new.end() ? MPI_UNDEFINED : static_cast<int>(it - old_of_new.begin());
}

void check_rank(const Comm& c, int rank) {
  if (rank < 0 || rank >= c.size)
    throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is out of range: the communicator has {} rank(s)", rank, c.size)};
}

}  // namespace

Neighbors neighbors_of(const Comm& c) {
  const ProcessTopology& t = topology_of(c, MPI_UNDEFINED);
  Neighbors n;
  if (t.kind == MPI_CART) {
    for (std::size_t i = 0; i < t.dims.size(); ++i)
      for (int disp : {-1, 1}) n.sources.push_back(cart_step(t, c.rank, i, disp));
    n.destinations = n.sources;
    n.cartesian = true;
  } else if (t.kind == MPI_GRAPH) {
    const auto nb = graph_neighbors(t, c.rank);
    n.sources.assign(nb.begin(), nb.end());
    n.destinations = n.sources;
  } else {
    n.sources = t.sources;
    n.destinations = t.destinations;
  }
  return n;
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  return call("MPI_Cart_create", comm_old, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm_old);
    check_arrays(ndims, {{"dims", dims}, {"periods", periods}});
    check_out(comm_cart, "comm_cart");
    auto t = cart_topology(c, ndims, dims, periods);
    const auto old = reorder ? place_cart(*rs.proc, c, t->dims, t->periods) : identity(grid_size(*t));
    *comm_cart = topology_comm(rs, c, old, std::move(t));
  });
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  return call("MPI_Cart_map", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    const auto t = cart_topology(c, ndims, dims, periods);
    check_out(newrank, "newrank");
    *newrank = new_rank_of(place_cart(*rs.proc, c, t->dims, t->periods), c.rank);
  });
}

int MPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  return call("MPI_Cartdim_get", comm,
              [&](RankState& rs) { *ndims = static_cast<int>(topology_of(comm_of(rs, comm), MPI_CART).dims.size()); });
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  return call("MPI_Cart_get", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    check_arrays(maxdims, {{"dims", dims}, {"periods", periods}, {"coords", coords}});
    const ProcessTopology& t = topology_of(c, MPI_CART);
    const std::vector<int> at = cart_coords(t.dims, c.rank);
    for (std::size_t i = 0; i < t.dims.size() && static_cast<int>(i) < maxdims; ++i) {
      dims[i] = t.dims[i];
      periods[i] = t.periods[i];
      coords[i] = at[i];
    }
  });
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  return call("MPI_Cart_rank", comm, [&](RankState& rs) {
    const ProcessTopology& t = topology_of(comm_of(rs, comm), MPI_CART);
    check_arrays(static_cast<int>(t.dims.size()), {{"coords", coords}});
    check_out(rank, "rank");
    const std::vector<int> at(coords, coords + t.dims.size());
    const int r = cart_rank(t.dims, t.periods, at);
    if (r < 0)
      throw MpiError{MPI_ERR_ARG, fmt::format("coordinates ({}) lie off the non-periodic grid {}", fmt::join(at, ", "),
                                              fmt::join(t.dims, "x"))};
    *rank = r;
  });
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  return call("MPI_Cart_coords", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    const ProcessTopology& t = topology_of(c, MPI_CART);
    check_rank(c, rank);
    check_arrays(maxdims, {{"coords", coords}});
    const std::vector<int> at = cart_coords(t.dims, rank);
    for (std::size_t i = 0; i < at.size() && static_cast<int>(i) < maxdims; ++i) coords[i] = at[i];
  });
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return call("MPI_Cart_shift", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    const ProcessTopology& t = topology_of(c, MPI_CART);
    if (direction < 0 || direction >= static_cast<int>(t.dims.size()))
      throw MpiError{MPI_ERR_ARG, fmt::format("direction {} is not a dimension of the {}-dimensional grid", direction,
                                              t.dims.size())};
    const auto d = static_cast<std::size_t>(direction);
    *rank_source = cart_step(t, c.rank, d, -disp);
    *rank_dest = cart_step(t, c.rank, d, disp);
  });
}

// MPI-3.1 7.5.7: one sub-grid per combination of the dropped coordinates; its ranks in the
// row-major order of the kept ones (the order of their ranks in the whole grid).
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return call("MPI_Cart_sub", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    const ProcessTopology& t = topology_of(c, MPI_CART);
    check_arrays(static_cast<int>(t.dims.size()), {{"remain_dims", remain_dims}});
    check_out(newcomm, "newcomm");
    auto sub = std::make_shared<ProcessTopology>();
    sub->kind = MPI_CART;
    for (std::size_t i = 0; i < t.dims.size(); ++i)
      if (remain_dims[i]) sub->dims.push_back(t.dims[i]), sub->periods.push_back(t.periods[i]);
    const std::vector<int> mine = cart_coords(t.dims, c.rank);
    std::vector<int> members;
    for (int r = 0; r < c.size; ++r) {
      const std::vector<int> at = cart_coords(t.dims, r);
      bool same = true;
      for (std::size_t i = 0; i < t.dims.size(); ++i) same = same && (remain_dims[i] || at[i] == mine[i]);
      if (same) members.push_back(r);
    }
    *newcomm = topology_comm(rs, c, members, std::move(sub));
  });
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
  return call("MPI_Graph_create", comm_old, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm_old);
    check_out(comm_graph, "comm_graph");
    auto t = graph_topology(c, nnodes, index, edges);
    const auto old = reorder ? place_graph(*rs.proc, c, graph_edges(*t)) : identity(nnodes);
    *comm_graph = topology_comm(rs, c, old, std::move(t));
  });
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  return call("MPI_Graph_map", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    check_out(newrank, "newrank");
    const auto t = graph_topology(c, nnodes, index, edges);
    *newrank = new_rank_of(place_graph(*rs.proc, c, graph_edges(*t)), c.rank);
  });
}

int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return call("MPI_Graphdims_get", comm, [&](RankState& rs) {
    const ProcessTopology& t = topology_of(comm_of(rs, comm), MPI_GRAPH);
    check_out(nnodes, "nnodes");
    check_out(nedges, "nedges");
    *nnodes = static_cast<int>(t.index.size());
    *nedges = static_cast<int>(t.edges.size());
  });
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  return call("MPI_Graph_get", comm, [&](RankState& rs) {
    const ProcessTopology& t = topology_of(comm_of(rs, comm), MPI_GRAPH);
    const std::size_t ni = entries_to_write(t.index.size(), maxindex), ne = entries_to_write(t.edges.size(), maxedges);
    check_arrays(static_cast<std::int64_t>(ni), {{"index", index}});
    check_arrays(static_cast<std::int64_t>(ne), {{"edges", edges}});
    std::copy_n(t.index.begin(), ni, index);
    std::copy_n(t.edges.begin(), ne, edges);
  });
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return call("MPI_Graph_neighbors_count", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    const ProcessTopology& t = topology_of(c, MPI_GRAPH);
    check_rank(c, rank);
    check_out(nneighbors, "nneighbors");
    *nneighbors = static_cast<int>(graph_neighbors(t, rank).size());
  });
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  return call("MPI_Graph_neighbors", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    const ProcessTopology& t = topology_of(c, MPI_GRAPH);
    check_rank(c, rank);
    const auto nb = graph_neighbors(t, rank);
    const std::size_t n = entries_to_write(nb.size(), maxneighbors);
    check_arrays(static_cast<std::int64_t>(n), {{"neighbors", neighbors}});
    std::copy_n(nb.begin(), n, neighbors);
  });
}

int MPI_Topo_test(MPI_Comm comm, int* status) {
  return call("MPI_Topo_test", comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    check_out(status, "status");
    *status = c.topology ? c.topology->kind : MPI_UNDEFINED;
  });
}

namespace {

// Edges of a distributed graph as ranks of c named them: (source, destination, weight, role), where
// role says whose list the edge belongs in: kOut, the source's destinations; kIn, the destination's
// sources (MPI_Dist_graph_create_adjacent names each edge twice, once per end); both for
// MPI_Dist_graph_create, whose edges any rank may name.
constexpr std::int32_t kOut = 1, kIn = 2;
struct EdgeList {
  std::vector<std::int32_t> flat;  // source, destination, weight, role, source, ...
  void add(int s, int d, int w, std::int32_t role) { flat.insert(flat.end(), {s, d, w, role}); }
};

// Every rank's edges, in rank order, and whether any rank gave weights: an all-gather of the edge
// counts, then of the edges, with real messages (the generic ring) on c's collective context.
EdgeList allgather_edges(RankState& rs, const Comm& c, const EdgeList& mine, bool weighted, bool& any_weighted) {
  const auto p = static_cast<std::size_t>(c.size), me = static_cast<std::size_t>(c.rank);
  constexpr std::size_t word = sizeof(std::int32_t);
  std::vector<std::int32_t> header(2 * p);
  header[2 * me] = static_cast<std::int32_t>(mine.flat.size());
  header[2 * me + 1] = weighted;
  std::vector<std::size_t> counts(p, 2 * word), displs(p);
  for (std::size_t i = 0; i < p; ++i) displs[i] = i * counts[i];
  algorithms::allgatherv_ring(*rs.proc, c.coll, std::as_writable_bytes(std::span(header)), counts, displs);
  any_weighted = false;
  std::size_t total = 0;
  for (std::size_t i = 0; i < p; ++i) {
    counts[i] = static_cast<std::size_t>(header[2 * i]) * word;
    displs[i] = total;
    total += counts[i];
    any_weighted = any_weighted || header[2 * i + 1];
  }
  EdgeList all;
  all.flat.resize(total / word);
  std::copy(mine.flat.begin(), mine.flat.end(), all.flat.begin() + static_cast<std::ptrdiff_t>(displs[me] / word));
  algorithms::allgatherv_ring(*rs.proc, c.coll, std::as_writable_bytes(std::span(all.flat)), counts, displs);
  return all;
}

// The communication graph for placement: every edge once (as its source's out-edge).
CommGraph comm_graph(const Comm& c, const EdgeList& all) {
  CommGraph g;
  g.n = c.size;
  for (std::size_t k = 0; k + 3 < all.flat.size(); k += 4)
    if (all.flat[k + 3] & kOut) g.edges.push_back({all.flat[k], all.flat[k + 1], all.flat[k + 2]});
  return g;
}

// Vertex v's neighbours in the order the edges were named (by rank, then in each rank's order).
std::shared_ptr<ProcessTopology> dist_vertex(const EdgeList& all, int v, bool weighted) {
  auto t = std::make_shared<ProcessTopology>();
  t->kind = MPI_DIST_GRAPH;
  t->weighted = weighted;
  for (std::size_t k = 0; k + 3 < all.flat.size(); k += 4) {
    const int s = all.flat[k], d = all.flat[k + 1], w = all.flat[k + 2], role = all.flat[k + 3];
    if ((role & kOut) && s == v) t->destinations.push_back(d), t->dest_weights.push_back(w);
    if ((role & kIn) && d == v) t->sources.push_back(s), t->source_weights.push_back(w);
  }
  if (!weighted) t->dest_weights.clear(), t->source_weights.clear();
  return t;
}

// The distributed-graph communicator from every rank's edges. Without reorder each rank is its
// own vertex; with it, placement.hpp assigns the vertices (the ranks of comm_old's numbering) to
// processes, and the process that gets new rank v takes vertex v's edges: the graph in ranks stays
// the one the program described, its vertices move on the machine.
MPI_Comm dist_graph_comm(RankState& rs, const Comm& c, const EdgeList& all, bool weighted, bool reorder) {
  const std::vector<int> old = reorder ? place_graph(*rs.proc, c, comm_graph(c, all)) : identity(c.size);
  const int v = static_cast<int>(std::find(old.begin(), old.end(), c.rank) - old.begin());
  return topology_comm(rs, c, old, dist_vertex(all, v, weighted), false);  // the exchange synchronized the ranks
}

void check_weights(const int* weights, int degree, const char* what) {
  for (int i = 0; i < degree; ++i)
    if (weights[i] < 0) throw MpiError{MPI_ERR_ARG, fmt::format("{}[{}] = {} is negative", what, i, weights[i])};
}

void check_neighbors(const Comm& c, const int* ranks, int degree, const char* what) {
  if (degree < 0) throw MpiError{MPI_ERR_ARG, fmt::format("the {} degree {} is negative", what, degree)};
  const std::string array = std::string(what) + "s";  // sources, destinations
  check_arrays(degree, {{array.c_str(), ranks}});
  for (int i = 0; i < degree; ++i)
    if (ranks[i] < 0 || ranks[i] >= c.size)
      throw MpiError{MPI_ERR_RANK, fmt::format("{} rank {} is out of range: the communicator has {} rank(s)", what,
                                               ranks[i], c.size)};
}

// The weights of an MPI_Dist_graph_create_adjacent argument: MPI_UNWEIGHTED gives none;
// MPI_WEIGHTS_EMPTY is allowed for a degree of 0 only.
std::vector<int> weights_of(const int* w, int degree, const char* what) {
  if (w == MPI_UNWEIGHTED) return {};
  if (w == MPI_WEIGHTS_EMPTY) {
    if (degree > 0)
      throw MpiError{MPI_ERR_ARG, fmt::format("{} is MPI_WEIGHTS_EMPTY with a degree of {}", what, degree)};
    return {};
  }
  check_weights(w, degree, what);
  return std::vector<int>(w, w + degree);
}

}  // namespace

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info, int reorder,
                                   MPI_Comm* comm_dist_graph) {
  return call("MPI_Dist_graph_create_adjacent", comm_old, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm_old);
    check_out(comm_dist_graph, "comm_dist_graph");
    check_neighbors(c, sources, indegree, "source");
    check_neighbors(c, destinations, outdegree, "destination");
    const bool weighted = sourceweights != MPI_UNWEIGHTED || destweights != MPI_UNWEIGHTED;
    const std::vector<int> sw = weights_of(sourceweights, indegree, "sourceweights");
    const std::vector<int> dw = weights_of(destweights, outdegree, "destweights");
    if (weighted && (static_cast<int>(sw.size()) != indegree || static_cast<int>(dw.size()) != outdegree))
      throw MpiError{MPI_ERR_ARG, "sourceweights and destweights must both be MPI_UNWEIGHTED or neither"};
    EdgeList mine;
    for (int i = 0; i < indegree; ++i)
      mine.add(sources[i], c.rank, weighted ? sw[static_cast<std::size_t>(i)] : 1, kIn);
    for (int i = 0; i < outdegree; ++i)
      mine.add(c.rank, destinations[i], weighted ? dw[static_cast<std::size_t>(i)] : 1, kOut);
    if (!reorder) {  // no other rank's edges are needed
      *comm_dist_graph = topology_comm(rs, c, identity(c.size), dist_vertex(mine, c.rank, weighted));
      return;
    }
    bool any_weighted = false;
    const EdgeList all = allgather_edges(rs, c, mine, weighted, any_weighted);
    *comm_dist_graph = dist_graph_comm(rs, c, all, weighted, true);
  });
}

// The general form: any rank may name any edge; an all-gather of every rank's edges tells each
// rank its own in- and out-edges, ordered by the rank that named them, then by its order.
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info, int reorder, MPI_Comm* comm_dist_graph) {
  return call("MPI_Dist_graph_create", comm_old, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm_old);
    check_out(comm_dist_graph, "comm_dist_graph");
    if (n < 0) throw MpiError{MPI_ERR_ARG, fmt::format("n {} is negative", n)};
    check_neighbors(c, sources, n, "source");
    const bool weighted = weights != MPI_UNWEIGHTED;
    EdgeList mine;
    for (int i = 0, k = 0; i < n; ++i) {
      if (degrees[i] < 0) throw MpiError{MPI_ERR_ARG, fmt::format("degrees[{}] = {} is negative", i, degrees[i])};
      check_neighbors(c, destinations + k, degrees[i], "destination");
      for (int j = 0; j < degrees[i]; ++j, ++k) {
        if (weighted && weights == MPI_WEIGHTS_EMPTY)
          throw MpiError{MPI_ERR_ARG, "weights is MPI_WEIGHTS_EMPTY but edges are given"};
        if (weighted) check_weights(weights + k, 1, "weights");
        mine.add(sources[i], destinations[k], weighted ? weights[k] : 1, kOut | kIn);
      }
    }
    bool any_weighted = false;
    const EdgeList all = allgather_edges(rs, c, mine, weighted, any_weighted);
    *comm_dist_graph = dist_graph_comm(rs, c, all, any_weighted, reorder != 0);
  });
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  return call("MPI_Dist_graph_neighbors_count", comm, [&](RankState& rs) {
    const ProcessTopology& t = topology_of(comm_of(rs, comm), MPI_DIST_GRAPH);
    check_out(indegree, "indegree");
    check_out(outdegree, "outdegree");
    check_out(weighted, "weighted");
    *indegree = static_cast<int>(t.sources.size());
    *outdegree = static_cast<int>(t.destinations.size());
    *weighted = t.weighted;
  });
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                             int destinations[], int destweights[]) {
  return call("MPI_Dist_graph_neighbors", comm, [&](RankState& rs) {
    const ProcessTopology& t = topology_of(comm_of(rs, comm), MPI_DIST_GRAPH);
    const std::size_t in = entries_to_write(t.sources.size(), maxindegree);
    const std::size_t out = entries_to_write(t.destinations.size(), maxoutdegree);
    check_arrays(static_cast<std::int64_t>(in), {{"sources", sources}});
    check_arrays(static_cast<std::int64_t>(out), {{"destinations", destinations}});
    // MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are not null: a null weight array is the program's error.
    const bool source_weights = t.weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY;
    const bool dest_weights = t.weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
    if (source_weights) check_arrays(static_cast<std::int64_t>(in), {{"sourceweights", sourceweights}});
    if (dest_weights) check_arrays(static_cast<std::int64_t>(out), {{"destweights", destweights}});
    std::copy_n(t.sources.begin(), in, sources);
    std::copy_n(t.destinations.begin(), out, destinations);
    if (source_weights) std::copy_n(t.source_weights.begin(), in, sourceweights);
    if (dest_weights) std::copy_n(t.dest_weights.begin(), out, destweights);
  });
}

namespace {

// Whether the factorization a (non-increasing) is balanced better than b: the smaller spread
// (largest minus smallest factor), then the larger smallest factor, the larger second smallest, ...
// (the choice MPICH's MPI_Dims_create makes among equally spread factorizations).
bool better_balanced(const std::vector<int>& a, const std::vector<int>& b) {
  if (b.empty()) return true;
  const int sa = a.front() - a.back(), sb = b.front() - b.back();
  if (sa != sb) return sa < sb;
  return std::lexicographical_compare(b.rbegin(), b.rend(), a.rbegin(), a.rend());
}

// Every factorization of n into k non-increasing factors of at most `cap`, each a divisor in
// `divisors` (descending), keeping the best balanced in `best`.
void balance(int n, int k, int cap, const std::vector<int>& divisors, std::vector<int>& cur, std::vector<int>& best) {
  if (k == 1) {
    if (n > cap) return;
    cur.push_back(n);
    if (better_balanced(cur, best)) best = cur;
    cur.pop_back();
    return;
  }
  for (int d : divisors) {
    if (d > cap || d > n || n % d) continue;
    long long reach = 1;  // d^k: the most that k factors of at most d can give
    for (int i = 0; i < k && reach < n; ++i) reach *= d;
    if (reach < n) break;  // smaller factors cannot reach n either
    cur.push_back(d);
    balance(n / d, k - 1, d, divisors, cur, best);
    cur.pop_back();
  }
}

}  // namespace

// MPI-3.1 section 7.5.2: the free dimensions as close to each other as possible (the least spread
// between the largest and the smallest), in non-increasing order; entries already positive are kept.
int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
  return call("MPI_Dims_create", MPI_COMM_WORLD, [&](RankState&) {
    if (nnodes < 1 || ndims < 0)
      throw MpiError{MPI_ERR_ARG, fmt::format("nnodes {} or ndims {} is invalid", nnodes, ndims)};
    check_arrays(ndims, {{"dims", dims}});
    int left = nnodes, free_dims = 0;
    for (int i = 0; i < ndims; ++i) {
      if (dims[i] < 0) throw MpiError{MPI_ERR_ARG, fmt::format("dims[{}] = {} is negative", i, dims[i])};
      if (dims[i] > 0) {
        if (left % dims[i])
          throw MpiError{MPI_ERR_DIMS, fmt::format("{} nodes cannot be divided by dims[{}] = {}", nnodes, i, dims[i])};
        left /= dims[i];
      } else {
        ++free_dims;
      }
    }
    if (free_dims == 0) {
      if (left != 1) throw MpiError{MPI_ERR_DIMS, fmt::format("the dimensions do not multiply to {}", nnodes)};
      return;
    }
    std::vector<int> divisors;
    for (int d = 1; d * d <= left; ++d)
      if (left % d == 0) divisors.insert(divisors.end(), {d, left / d});
    std::sort(divisors.rbegin(), divisors.rend());
    divisors.erase(std::unique(divisors.begin(), divisors.end()), divisors.end());
    std::vector<int> cur, best;
    balance(left, free_dims, left, divisors, cur, best);
    for (int i = 0, k = 0; i < ndims; ++i)
      if (dims[i] == 0) dims[i] = best[static_cast<std::size_t>(k++)];
  });
}
