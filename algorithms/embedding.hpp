// Paper 002 (Díaz de Cerio, Valero-García, González), section 3: the pipelined CC-cube is mapped
// onto a mesh or torus by an embedding of the hypercube graph: "the standard embedding of
// hypercubes onto meshes [5] and the xor embedding of hypercubes onto tori [3]".
//
// Both embeddings split the d = k_0 + ... + k_(C-1) bits of a hypercube node among the C grid
// dimensions of extent 2^(k_c): the lowest bits go to the last (fastest) dimension, as the grid's
// row-major node numbering does. Within one dimension (a line or ring of n = 2^k nodes):
//
//   standard (meshes): hypercube bits b sit at coordinate b, so hypercube dimension j of that
//     group has dilation 2^j.
//   xor (tori): coordinate x holds bits x XOR (n/2 - 1) when x >= n/2, x otherwise: the upper half
//     of the ring is reversed. The short paper does not define the xor embedding (it cites [3]);
//     this is our design from its purpose, using the wrap-around links: the top dimension's pairs
//     x <-> n-1-x nest around both the middle link and the wrap link, so its congestion is n/4
//     instead of the n/2 of the standard embedding on a ring (where every pair is n/2 apart and
//     the tie rule sends both messages of a pair the same way round), and every lower dimension
//     keeps the standard dilation 2^j and congestion 2^j. A Gray-code (fully reflected) placement
//     has the same congestions but dilation 2^(j+1) - 1; docs/paper002.md has the table.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "touchstone/topology.hpp"

namespace touchstone::algorithms {

/// A one-to-one map between the 2^d nodes of a hypercube and the nodes of a topology.
struct Embedding {
  std::string kind;          ///< "standard", "xor" or "identity"
  int d = 0;                 ///< hypercube dimensions
  std::vector<int> node_of;  ///< node_of[h]: topology node hosting hypercube node h
  std::vector<int> cube_of;  ///< cube_of[n]: hypercube node on topology node n
};

/// The standard embedding of a 2^d hypercube onto a mesh (or any grid) whose extents are powers
/// of two. UsageError otherwise.
Embedding standard_embedding(const std::vector<int>& dims);
/// The xor embedding onto a torus whose extents are powers of two. UsageError otherwise.
Embedding xor_embedding(const std::vector<int>& dims);
/// The embedding the CC-cube algorithms use on `topo`: xor on a torus, standard on a mesh, the
/// identity (hypercube node = node number) on any other topology. Needs 2^d nodes.
Embedding embedding_for(const Topology& topo);
/// Hypercube node h on node h, for n = 2^d nodes whatever the topology. UsageError otherwise.
Embedding identity_embedding(int n);

/// Largest topology distance between the images of two hypercube neighbours along dimension i.
int dilation(const Topology& topo, const Embedding& e, int i);

/// The exchange along hypercube dimension i (every node sends one message to its dimension-i
/// neighbour) split into conflict-free rounds: the routes (topo.route) of the messages of one round
/// use pairwise different physical links (virtual channels of a link count as that link). Each
/// round lists the lower hypercube node of every pair in it. Greedy, pairs in increasing order.
std::vector<std::vector<int>> exchange_rounds(const Topology& topo, const Embedding& e, int i);

/// The largest number of the given (source node, destination node) messages whose routes use one
/// physical link (virtual channels of a link count as that link); 0 when no message crosses a link.
int link_load(const Topology& topo, const std::vector<std::pair<int, int>>& messages);

/// The largest number of messages of dimension i's exchange that use one physical link: a lower
/// bound on the number of conflict-free rounds.
int congestion(const Topology& topo, const Embedding& e, int i);

}  // namespace touchstone::algorithms
