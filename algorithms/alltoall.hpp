// All-to-all personalized communication (paper 000, section 5): every processor of group g sends
// a distinct block of `size` bytes to every other. send and recv hold g.size() blocks, in group
// rank order; block i of recv ends up holding what rank i sent to this processor.
#pragma once
#include <cstddef>
#include <span>

#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// 1-lev-dir (paper 000, section 5.1 and 5.3): every processor issues its p-1 sends, farthest
/// destination first, and its p-1 receives, and leaves congestion to the network.
void alltoall_1lev_dir(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size);

/// 1-lev-xor (paper 000, section 5.1): p-1 exclusive-or permutations; in permutation i, P_j
/// exchanges with P_(i xor j). Any p: partners outside the group are skipped.
void alltoall_1lev_xor(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size);

}  // namespace touchstone::algorithms
