// All-to-one personalized communication, "gather" (paper 000, section 4): every processor of group
// g sends a distinct block of `size` bytes to the root. On every processor send holds its block
// (size bytes); on the root, recv ends up holding g.size() blocks in group rank order (block i
// came from rank i). Other processors' recv spans are ignored.
//
// The algorithms are the one-to-all algorithms of Figure 1 with the roles of sends and receives
// reversed: combined long messages travel towards the destination. The mesh algorithms see g as
// the machine's 2-D mesh when g is the whole machine in row-major order, and as a 1 x n linear
// array otherwise (submachine.hpp, grid_of).
#pragma once
#include <cstddef>
#include <span>

#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// 1-lev-dir: every processor sends its block to the destination, which issues p-1 receives.
RootedCollective gather_1lev_dir;
/// 2-lev-rec: 1-lev-dir in every row towards the processor in the destination's column, then one
/// long message per row up that column.
RootedCollective gather_2lev_rec;
/// 3-lev-sq: 2-lev-rec in every about-square sub-mesh towards its leader (the processor in the
/// destination's position), then one long message per sub-mesh to the destination.
RootedCollective gather_3lev_sq;
/// logp-lev-sq: halves by alternating vertical and horizontal cuts, recursively; the leader of the
/// other half sends its half's blocks to the destination in one long message.
RootedCollective gather_logp_lev_sq;
/// logp-lev-rec(gamma), 0 < gamma < 1: snake-order parts of gamma p and (1-gamma) p processors,
/// and for gamma < 0.5 the partition around the destination of section 4.
void gather_logp_lev_rec(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                         std::size_t size, double gamma);

inline constexpr double kGatherGamma = 0.60;  ///< section 4.1: best for L > 2048 on 256 processors

}  // namespace touchstone::algorithms
