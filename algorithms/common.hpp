// Building blocks shared by the algorithms of every paper.
#pragma once
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// The group an algorithm was called on, with the world placeholder (a default Group) resolved.
inline Group resolve(const Proc& p, const Group& g) { return g.is_world_placeholder() ? p.world() : g; }

/// Whether g is the whole machine in rank order (group rank i is world rank i), so that the
/// machine's topology describes it. O(1): every processor asks, and an O(p) check made the
/// collectives O(p^2) on the host (65,536 VPs).
inline bool is_whole_machine(const Proc& p, const Group& g) {
  const Group w = resolve(p, g);
  return w.size() == p.size() && w.in_world_order();
}

/// Checks the arguments of a rooted collective (scatter, gather): the root is a rank of g, every
/// processor's own buffer (`own`, called `own_name`) holds `size` bytes, and the root's buffer of
/// all blocks (`all`, `all_name`) holds g.size() blocks of `size` bytes.
inline void check_rooted_args(const char* name, const Proc& p, const Group& g, int root, std::size_t own,
                              const char* own_name, std::size_t all, const char* all_name, std::size_t size) {
  const Group w = resolve(p, g);
  if (root < 0 || root >= w.size())
    throw UsageError(fmt::format("{}: root {} out of range, the group has {} processor(s)", name, root, w.size()));
  if (own < size) throw UsageError(fmt::format("{}: the {} buffer holds {} bytes, not {}", name, own_name, own, size));
  if (w.local_rank(p.rank()) == root && all < static_cast<std::size_t>(w.size()) * size)
    throw UsageError(fmt::format("{}: the root's {} buffer holds {} bytes, not {} blocks of {}", name, all_name, all,
                                 w.size(), size));
}

/// Paper 000, section 3.2: "When a processor issues multiple sends, our implementations give
/// higher priority to destinations further away." Orders group ranks by decreasing hop distance
/// from this processor (ties: increasing rank).
inline std::vector<int> farthest_first(const Proc& p, const Group& g, std::vector<int> dsts) {
  std::vector<std::pair<int, int>> keyed;
  keyed.reserve(dsts.size());
  for (int d : dsts) keyed.emplace_back(-p.hops(p.rank(), g.world_rank(d)), d);
  std::sort(keyed.begin(), keyed.end());
  for (std::size_t i = 0; i < dsts.size(); ++i) dsts[i] = keyed[i].second;
  return dsts;
}

/// The block of `size` bytes for group rank `i` in a buffer of per-rank blocks.
template <class Byte>
std::span<Byte> block(std::span<Byte> buf, int i, std::size_t size) {
  return buf.subspan(static_cast<std::size_t>(i) * size, size);
}

/// Smallest power of two >= n.
inline int ceil_pow2(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace touchstone::algorithms
