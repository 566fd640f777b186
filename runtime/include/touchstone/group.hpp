// Groups (submachines, docs/model.md 5): an ordered subset of ranks with its own numbering and its own
// matching context, so that messages of different groups never match each other.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace touchstone {

namespace detail {
struct GroupData;
}

/// An ordered set of world ranks; group rank i is members()[i]. Cheap to copy.
/// A default-constructed Group stands for the world group of the run.
class Group {
 public:
  Group() = default;

  /// Number of members (0 for the default-constructed world placeholder before a run binds it).
  int size() const;
  /// World rank of group rank `local`.
  int world_rank(int local) const;
  /// Group rank of world rank `world`, or -1 if it is not a member.
  int local_rank(int world) const;
  bool contains(int world) const { return local_rank(world) >= 0; }
  /// Members as world ranks, in group order.
  std::span<const int> members() const;
  /// The matching context: equal for the same group on every member, distinct between groups.
  std::uint64_t context() const;
  bool is_world_placeholder() const { return !d_; }
  /// True when group rank i is world rank i for every member: the world group, or the first
  /// size() world ranks in order (so a group of p.size() members in world order is the machine).
  /// O(1): known since the group was made.
  bool in_world_order() const;

  explicit Group(std::shared_ptr<const detail::GroupData> d) : d_(std::move(d)) {}
  // Runtime internals.
  const detail::GroupData* data() const { return d_.get(); }
  const std::shared_ptr<const detail::GroupData>& shared_data() const { return d_; }

 private:
  std::shared_ptr<const detail::GroupData> d_;
};

}  // namespace touchstone
