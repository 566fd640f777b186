// The signatures every collective of the catalog shares, written once: a header declares an
// algorithm as `AlltoallCollective alltoall_1lev_xor;` and the harness (harness.hpp) wraps any
// function of that type.
#pragma once
#include <cstddef>
#include <functional>
#include <span>

#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// All-to-all personalized communication over group g: send and recv hold g.size() blocks of
/// `size` bytes in group rank order; block i of recv ends up holding what rank i sent.
using AlltoallCollective = void(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                                std::size_t size);

/// A rooted collective over group g (scatter: one-to-all; gather: all-to-one): the root's buffer
/// holds g.size() blocks of `size` bytes, every other processor's one block.
using RootedCollective = void(Proc& p, const Group& g, int root, std::span<const std::byte> send,
                              std::span<std::byte> recv, std::size_t size);

using AlltoallFn = std::function<AlltoallCollective>;
using RootedFn = std::function<RootedCollective>;

/// A reduction operator on packed elements: inout = in (op) inout, both the same number of bytes,
/// `in` holding the operands of the lower ranks (MPI's order: s_0 op s_1 op ... op s_(p-1)).
using Reducer = std::function<void(std::span<const std::byte> in, std::span<std::byte> inout)>;

/// What a reduction collective combines with: the operator, whether it commutes (algorithms that
/// reorder operands need it; docs/algorithms.md says which), and the size of one element in bytes,
/// so that an algorithm that splits a vector splits it between elements.
struct Reduction {
  Reducer op;
  bool commutative = true;
  std::size_t elem = 1;
};

/// One-to-all broadcast over g: the root's buf reaches every member.
using BcastCollective = void(Proc& p, const Group& g, int root, std::span<std::byte> buf);
/// All-gather over g: buf holds g.size() blocks of `size` bytes, each member's own block in place.
using AllgatherCollective = void(Proc& p, const Group& g, std::span<std::byte> buf, std::size_t size);
/// Reduction to `root`: the root's recv gets send_0 op ... op send_(p-1) (others' recv untouched).
using ReduceCollective = void(Proc& p, const Group& g, int root, std::span<const std::byte> send,
                              std::span<std::byte> recv, const Reduction& r);
/// Reduction whose result every member's recv gets.
using AllreduceCollective = void(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                                 const Reduction& r);
/// Reduce-scatter: send holds the whole vector, counts[i] bytes for rank i in rank order; rank i's
/// recv gets its counts[i] bytes of the reduced vector.
using ReduceScatterCollective = void(Proc& p, const Group& g, std::span<const std::byte> send,
                                     std::span<std::byte> recv, std::span<const std::size_t> counts,
                                     const Reduction& r);
/// Prefix reduction: rank i's recv gets send_0 op ... op send_i, or, `exclusive`, send_0 op ... op
/// send_(i-1) (rank 0's recv untouched).
using ScanCollective = void(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                            const Reduction& r, bool exclusive);
/// Barrier over g: no member returns before every member has called it.
using BarrierCollective = void(Proc& p, const Group& g);

}  // namespace touchstone::algorithms
