// Where a reordering topology constructor puts its ranks on the machine (docs/mpi.md, "Rank
// placement"): a Cartesian grid laid on the machine's own mesh or torus (a box, or several grid
// dimensions folded onto one machine dimension) or placed greedily, any other graph greedily; the
// identity unless a placement costs strictly fewer hop-weighted edges. Internal.
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
/// The same for a Cartesian grid: the cheapest of its layouts on the machine's grid (each grid
/// dimension along one machine dimension, several folded onto one in boustrophedon order) whose
/// nodes are c's members, and of the greedy placement.
std::vector<int> place_cart(Proc& p, const Comm& c, const std::vector<int>& dims, const std::vector<int>& periods);

/// Sum over the edges of weight x hops between the machine nodes of the new ranks' old ranks.
std::int64_t placement_cost(Proc& p, const Comm& c, const CommGraph& g, const std::vector<int>& old_of_new);

}  // namespace touchstone::mpi
