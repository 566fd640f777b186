// One-to-all personalized communication, "scatter" (paper 000, section 3, Figure 1): the root
// sends a distinct block of `size` bytes to every processor of group g. On the root, send holds
// g.size() blocks in group rank order (block i goes to rank i); on every processor, recv (size
// bytes) ends up holding its block. Other processors' send spans are ignored.
//
// The mesh algorithms see g as the machine's 2-D mesh when g is the whole machine in row-major
// order, and as a 1 x n linear array otherwise (submachine.hpp, grid_of).
#pragma once
#include <cstddef>
#include <span>

#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// 1-lev-dir: the source issues p-1 sends, one to each destination, farthest first.
RootedCollective scatter_1lev_dir;
/// 1-lev-sys-br: the p-1 blocks concatenated into one long message that a naive system broadcast
/// delivers: the source sends the long message to every processor itself (flat broadcast).
RootedCollective scatter_1lev_sys_br;
/// 1-lev-our-br: the long message broadcast along a binomial-heap tree.
RootedCollective scatter_1lev_our_br;
/// 2-lev-rec: one long message per row to the processors in the source's column, then 1-lev-dir
/// in every row.
RootedCollective scatter_2lev_rec;
/// 3-lev-sq: one long message per about-square sub-mesh to its leader (the processor in the
/// source's position), then 2-lev-rec in every sub-mesh.
RootedCollective scatter_3lev_sq;
/// logp-lev-sq: halves by alternating vertical and horizontal cuts, one long message to the leader
/// of the other half, recursively.
RootedCollective scatter_logp_lev_sq;
/// logp-lev-rec(gamma), 0.5 <= gamma < 1: in snake-like row-major order the source's part keeps
/// gamma p processors, the other part's leader gets one long message; recursively.
void scatter_logp_lev_rec(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                          std::size_t size, double gamma);

inline constexpr double kScatterGamma = 0.75;  ///< section 3.2: "obtained through experiments"

}  // namespace touchstone::algorithms
