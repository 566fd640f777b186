// Where a reordering topology constructor puts its ranks on the machine (docs/mpi.md, "Rank
// placement"): a Cartesian grid as a box of the machine's own mesh or torus when one fits, any
// other graph by greedy placement; the identity unless the placement costs strictly fewer
// hop-weighted edges. Internal.
#pragma once
#include <cstdint>
#include <vector>

#include "state.hpp"

namespace touchstone::mpi {

/// An undirected communication graph on n vertices (the new ranks): edges (u, v, weight).
struct CommGraph {
  int n = 0;
  struct Edge {
    int u, v;
    std::int64_t weight;
  };
  std::vector<Edge> edges;
};

/// The old rank (in c) of each new rank 0..g.n-1 (g.n <= c.size), distinct: greedy placement
/// minimising the sum over edges of weight x hops, kept only when cheaper than the identity.
std::vector<int> place_graph(Proc& p, const Comm& c, const CommGraph& g);
/// The same for a Cartesian grid: an embedding as a box of the machine's grid (each grid dimension
/// along its own machine dimension) when one lies inside c's members; else place_graph.
std::vector<int> place_cart(Proc& p, const Comm& c, const std::vector<int>& dims, const std::vector<int>& periods);

/// Sum over the edges of weight x hops between the machine nodes of the new ranks' old ranks.
std::int64_t placement_cost(Proc& p, const Comm& c, const CommGraph& g, const std::vector<int>& old_of_new);

}  // namespace touchstone::mpi
