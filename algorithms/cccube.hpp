// Paper 002 (Díaz de Cerio, Valero-García, González), sections 3 and 4: the CC-cube algorithm for
// complete exchange and its pipelined form, on 2^d processors mapped by embedding_for (the standard
// embedding on meshes, the xor embedding on tori).
#pragma once
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "embedding.hpp"
#include "registry.hpp"
#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// Section 4: the positions of M whose blocks form the message x_i of iteration i, in the order
/// they are sent: every position with bit i set, "in reverse order with regard to their positions
/// in M" (x_0 of node 0 with d = 3 holds M[7], M[5], M[3], M[1]).
std::vector<int> cc_cube_message_positions(int d, int i);

/// The block (m, j) = (source, destination) in every position of M of every node, as Figure 1
/// draws it: states[0] after the initial permutation (block (m, j) in M[m XOR j] of node m),
/// states[t] after iteration t - 1 (t = 1..d), states[d + 1] after the final permutation. Computed
/// with the same message layout as the algorithm.
using BlockId = std::pair<int, int>;
std::vector<std::vector<std::vector<BlockId>>> cc_cube_states(int d);

/// Section 3, communication pipelining: the message x_i is cut into `degree` pieces (the first
/// piece holds the first blocks of x_i, sizes differ by at most one block); piece q of iteration i
/// goes out at step i + q, so pieces of up to min(d, degree) iterations (hypercube dimensions) are
/// in flight at once. Piece q of iteration i needs only pieces <= q of earlier iterations, which the
/// reverse order of section 4 guarantees. degree = 1 is the CC-cube of section 4. g.size() must
/// be 2^d and 1 <= degree <= 2^(d-1); otherwise UsageError.
void alltoall_pipelined_cc_cube(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                                std::size_t size, int degree);

/// The hypercube numbering the CC-cube algorithms use on g: embedding_for the machine's topology
/// when g is the whole machine in rank order, group ranks themselves ("identity") otherwise.
Embedding cc_cube_embedding(const Proc& p, const Group& g);

/// Step s of alltoall_pipelined_cc_cube on this node's vector M (2^d blocks of `size` bytes, after
/// the initial permutation): with degree 1, iteration s in its conflict-free rounds. Exposed so
/// that tests can run one iteration alone: `alone` drops the tokens to and from the neighbouring
/// iterations.
void cc_cube_step(Proc& p, const Group& g, const Embedding& e, int degree, int s, std::span<std::byte> M,
                  std::size_t size, bool alone = false);

/// Between iterations s - 1 and s of cc-cube: the node of the last conflict-free round of
/// iteration s - 1 whose token hypercube node h (in round 0 of iteration s) waits for, the nearest
/// one (smallest number on a tie); -1 when iteration s - 1 was a single round.
int cc_cube_boundary_source(const Topology& topo, const Embedding& e, int s, int h);

/// Section 4: the CC-cube algorithm (pipelining degree 1).
AlltoallCollective alltoall_cc_cube;

/// The catalog entry of pipelined-cc-cube(degree) (registry.cpp builds it from the name).
Algorithm pipelined_cc_cube_entry(int degree);

}  // namespace touchstone::algorithms
