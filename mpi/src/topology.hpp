// Process topologies (MPI-3.1 chapter 7; docs/mpi.md, "Process topologies"): what a Cartesian,
// graph or distributed-graph communicator knows of its shape, shared by topology.cpp (creation
// and queries) and neighbor.cpp (neighborhood collectives). Internal.
#pragma once
#include <vector>

#include "state.hpp"

namespace touchstone::mpi {

/// The topology attached to a communicator; MPI_Comm_dup shares it with the duplicate.
struct ProcessTopology {
  int kind = MPI_UNDEFINED;  ///< MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
  // MPI_CART: the grid, row-major (the last dimension varies fastest, MPI-3.1 7.5.1).
  std::vector<int> dims, periods;
  // MPI_GRAPH: every node's neighbours, as MPI_Graph_create's index and edges.
  std::vector<int> index, edges;
  // MPI_DIST_GRAPH: the calling process's own in- and out-edges, in the order the neighborhood
  // collectives use; weights are empty when the graph is unweighted.
  std::vector<int> sources, source_weights, destinations, dest_weights;
  bool weighted = false;
};

/// Cartesian coordinates of `rank` in the grid `dims` (row-major).
std::vector<int> cart_coords(const std::vector<int>& dims, int rank);
/// The rank at `coords`, wrapped along periodic dimensions; -1 when off a non-periodic one.
int cart_rank(const std::vector<int>& dims, const std::vector<int>& periods, std::vector<int> coords);

/// The neighbours the neighborhood collectives exchange with, in MPI's order: Cartesian, for each
/// dimension the -1 then the +1 neighbour (MPI_PROC_NULL off a non-periodic edge), as both
/// sources and destinations; graph, the node's neighbours as both; distributed graph, its own
/// sources and destinations. MpiError MPI_ERR_TOPOLOGY when the communicator has no topology.
struct Neighbors {
  std::vector<int> sources, destinations;
  /// Cartesian: the block a rank sends along a direction (slot 2d + 1 for +1 along dimension d)
  /// arrives in its neighbour's slot of the opposite direction (2d), even when both neighbours are
  /// the same rank (a periodic dimension of one or two processes).
  bool cartesian = false;
};
Neighbors neighbors_of(const Comm& c);

}  // namespace touchstone::mpi
