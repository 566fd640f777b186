// The groups of a run and their matching contexts (docs/model.md 5): the world, the groups made
// from a parent, the result of a split, and the private groups of each spawn. Its own part because
// a context must be agreed on by every member without a message: the n-th group a member makes with
// the same parent and members is the same group everywhere, its context a hash of those three (so
// the processes of a split run agree on it too), apart from the engine that moves the messages a
// split needs.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "op.hpp"
#include "touchstone/group.hpp"

namespace touchstone::detail {

class GroupTable {
 public:
  /// What one VP has made so far: (parent context, members hash) -> how many such groups.
  using Made = std::map<std::pair<std::uint64_t, std::uint64_t>, int>;

  explicit GroupTable(int nodes);

  /// The world group: every node in order, context 1.
  const std::shared_ptr<const GroupData>& world() const { return world_; }
  /// The group `members` (world ranks, in group order) made from the group of context `parent_ctx`
  /// by a VP that has made the groups `made` so far. UsageError for a member out of range or twice.
  Group make(Made& made, std::uint64_t parent_ctx, std::vector<int> members);
  /// make(made, parent_ctx, like.members), without a pass over the members to check and hash them:
  /// p ranks each making a group of all p ranks cost p^2 so (MPI_COMM_WORLD's groups).
  Group make_like(Made& made, std::uint64_t parent_ctx, const GroupData& like);
  /// make(made, parent_ctx, members) counted apart for each `key`: the n-th group of these members
  /// made from this parent with this key is the same on every member, whatever groups of other keys
  /// each made between (MPI's partitioned requests, matched in order per peer and tag).
  Group make_with_key(Made& made, std::uint64_t parent_ctx, std::vector<int> members, std::uint64_t key);
  /// The end of a split: every member's (color, key) known, entry i at known[2i], known[2i + 1]
  /// for the parent's member (me + i) mod n. The members of my color ordered by key (then by
  /// parent rank), as a group made from the parent; an empty group for a negative color.
  Group split(Made& made, const GroupData& parent, int me, int color, std::span<const std::int32_t> known);
  /// The two groups of the n-th spawn on `scope` (the scope's members and the world, each with a
  /// context of its own), the same for every member of the scope; forgotten once every member has them.
  std::pair<Group, Group> spawn_groups(const GroupData& scope, std::uint64_t nth);

  /// World rank of group rank `local`; UsageError naming `what` ("source", ...) if out of range.
  /// Inline: every send and receive translates its peer.
  static int to_world(const GroupData& g, int local, const char* what) {
    if (local < 0 || local >= static_cast<int>(g.members.size())) [[unlikely]] out_of_range(g, local, what);
    return g.members[static_cast<std::size_t>(local)];
  }
  /// Group rank of world rank `world` in g, or -1 if it is not a member.
  static int member_index(const GroupData& g, int world);

  /// The groups made so far, for reports, in no particular order: ((parent context, members' hash, n), group).
  auto begin() const { return groups_.begin(); }
  auto end() const { return groups_.end(); }

 private:
  [[noreturn]] static void out_of_range(const GroupData& g, int local, const char* what);
  Group make_keyed(Made& made, std::uint64_t parent_key, std::vector<int> members, std::uint64_t salt);
  struct Slot {
    std::shared_ptr<const GroupData>& group;
    bool fresh;
    std::uint64_t ctx;
  };
  Slot slot(Made& made, std::uint64_t parent_key, std::uint64_t h);
  [[noreturn]] static void hash_collision();

  int nodes_;
  std::unordered_set<std::uint64_t> contexts_;  // of the groups in groups_
  std::shared_ptr<const GroupData> world_;
  // (parent context, members' hash, n): hashed, not ordered, since a run of many VPs makes tens of
  // thousands of groups and a tree's walk misses the cache at every level (1.3 us a group made on
  // 65,536 VPs); nothing depends on their order (the deadlock report looks one up by context).
  using Key = std::tuple<std::uint64_t, std::uint64_t, int>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      const auto [parent, members, nth] = k;
      return static_cast<std::size_t>((parent * 0x9E3779B97F4A7C15ull) ^ members ^
                                       (static_cast<std::uint64_t>(static_cast<std::uint32_t>(nth)) << 17));
    }
  };
  std::unordered_map<Key, std::shared_ptr<const GroupData>, KeyHash> groups_;
  // The groups of the n-th spawn on a scope (context, n), until every member of the scope has them.
  struct Instance {
    std::shared_ptr<const GroupData> scope, world;
    std::size_t taken = 0;
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, Instance> instances_;
};

}  // namespace touchstone::detail
