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

}  // namespace touchstone::algorithms
