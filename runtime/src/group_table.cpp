#include "group_table.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sorted.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

namespace {
constexpr std::uint64_t kWorldCtx = 1;
// What a context is made from besides its parent's context: a group made by a split (whose parent
// key also holds the color), the groups of a spawn and those made with a key are never a make()'s
// group. Group contexts are below 2^60, so these bits are free.
constexpr std::uint64_t kSplitKey = 1ULL << 63, kSpawnKey = 1ULL << 62, kKeyedKey = 1ULL << 61;

// A group's context is a function of what each member knows as it makes the group (the parent's
// key, the members' hash, how many such groups it made before), not of which member was first to
// make it: the processes of a split run, each seeing only its own members make groups, give every
// group the context one process gives it. It is below the bits contexts.hpp reserves (2^60), and
// never 0 (no group) or 1 (the world).
std::uint64_t context_of(std::uint64_t parent_key, std::uint64_t members_hash, std::uint64_t nth) {
  std::uint64_t x = parent_key * 0x9e3779b97f4a7c15ULL ^ members_hash ^ (nth + 1) * 0xd6e8feb86659fd93ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64's finalizer
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x = (x ^ (x >> 31)) & ((1ULL << 60) - 1);
  return x < 2 ? x + 2 : x;
}

// The hash of a member list: each member mixed with its position, the terms summed. No term
// depends on another, so the loop over the p members of each of p ranks' MPI_COMM_WORLD is not a
// chain of p dependent multiplies (a serial hash was most of an 8,192-rank program's run).
std::uint64_t members_hash(const std::vector<int>& members) {
  std::uint64_t h = members.size() * 0xbf58476d1ce4e5b9ULL;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(members[i])) << 32 | i) * 0x9e3779b97f4a7c15ULL;
    h += x ^ (x >> 29);
  }
  return h;
}
// `hash`: members_hash(members), when the caller has it already.
std::shared_ptr<GroupData> new_group(std::vector<int> members, std::uint64_t ctx,
                                     std::optional<std::uint64_t> hash = {}) {
  auto g = std::make_shared<GroupData>();
  g->members = std::move(members);
  g->ctx = ctx;
  g->members_hash = hash ? *hash : members_hash(g->members);
  g->by_world.reserve(g->members.size());
  for (std::size_t i = 0; i < g->members.size(); ++i) g->by_world.emplace_back(g->members[i], static_cast<int>(i));
  sort_unless_sorted(g->by_world);
  g->in_world_order = true;
  for (std::size_t i = 0; g->in_world_order && i < g->members.size(); ++i)
    g->in_world_order = g->members[i] == static_cast<int>(i);
  return g;
}
}  // namespace

GroupTable::GroupTable(int nodes) : nodes_(nodes) {
  std::vector<int> all(static_cast<std::size_t>(nodes));
  std::iota(all.begin(), all.end(), 0);
  world_ = new_group(std::move(all), kWorldCtx);
}

void GroupTable::out_of_range(const GroupData& g, int local, const char* what) {
  throw UsageError(fmt::format("{} rank {} out of range: the group has {} member(s)", what, local, g.members.size()));
}

int GroupTable::member_index(const GroupData& g, int world) {
  auto it = std::lower_bound(g.by_world.begin(), g.by_world.end(), std::pair{world, -1});
  return it != g.by_world.end() && it->first == world ? it->second : -1;
}

Group GroupTable::make(Made& made, std::uint64_t parent_ctx, std::vector<int> members) {
  return make_keyed(made, parent_ctx, std::move(members), 0);
}

Group GroupTable::make_keyed(Made& made, std::uint64_t parent_key, std::vector<int> members, std::uint64_t salt) {
  // Members in world order, as every MPI rank's MPI_COMM_WORLD and most groups are, are checked
  // in one pass without branches and without a sorted copy: p ranks each making a group of p
  // members sorted p log p apiece, and then checked them one branch at a time.
  bool increasing = true;
  for (std::size_t i = 1; i < members.size(); ++i) increasing &= members[i - 1] < members[i];
  if (!increasing || (!members.empty() && (members.front() < 0 || members.back() >= nodes_))) {
    std::vector<int> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (sorted[i] < 0 || sorted[i] >= nodes_)
        throw UsageError(fmt::format("group member {} out of range 0..{}", sorted[i], nodes_ - 1));
      if (i && sorted[i] == sorted[i - 1]) throw UsageError(fmt::format("rank {} appears twice in a group", sorted[i]));
    }
  }
  // Members agree on the context without communicating: the n-th group with these members made
  // from this parent is the same group on every member (as MPI communicators are created in order).
  const std::uint64_t h = members_hash(members);
  auto [group, fresh, ctx] = slot(made, parent_key, h ^ salt);
  if (fresh)
    group = new_group(std::move(members), ctx, h);
  else if (group->members != members) [[unlikely]]
    hash_collision();
  return Group(group);
}

Group GroupTable::make_with_key(Made& made, std::uint64_t parent_ctx, std::vector<int> members, std::uint64_t key) {
  return make_keyed(made, parent_ctx | kKeyedKey, std::move(members), (key + 1) * 0x9e3779b97f4a7c15ULL);
}

Group GroupTable::make_like(Made& made, std::uint64_t parent_ctx, const GroupData& like) {
  auto [group, fresh, ctx] = slot(made, parent_ctx, like.members_hash);
  if (fresh) {
    auto g = new_group(like.members, ctx, like.members_hash);
    g->made_like = like.ctx;
    group = std::move(g);
  } else if (const bool twin = like.ctx != 0 && group->made_like == like.ctx;
             !twin && group->members != like.members) [[unlikely]] {
    hash_collision();
  }
  return Group(group);
}

// The n-th group with members hashing to h that this VP makes from the parent: the table's entry,
// whether it is still to be made (this VP is the first member here to make it), and its context.
GroupTable::Slot GroupTable::slot(Made& made, std::uint64_t parent_key, std::uint64_t h) {
  const int nth = made[{parent_key, h}]++;
  auto [it, fresh] = groups_.try_emplace(std::make_tuple(parent_key, h, nth));
  const std::uint64_t ctx = context_of(parent_key, h, static_cast<std::uint64_t>(nth));
  // Two groups sharing a context would match each other's messages: a run that makes G groups meets
  // that with a chance of G^2 / 2^61, and stops rather than go on wrong.
  if (fresh && !contexts_.insert(ctx).second) [[unlikely]]
    throw std::logic_error("internal error: two groups have the same context (please report this)");
  return {it->second, fresh, ctx};
}

// Two member lists of one parent that hash alike would share their count of groups made.
void GroupTable::hash_collision() {
  throw std::logic_error("internal error: two groups' member lists have the same hash (please report this)");
}

Group GroupTable::split(Made& made, const GroupData& parent, int me, int color, std::span<const std::int32_t> known) {
  if (color < 0) return Group(new_group({}, 0));
  const int n = static_cast<int>(parent.members.size());
  std::vector<std::tuple<int, int, int>> same;  // (key, parent rank, world rank)
  for (int i = 0; i < n; ++i) {
    const int who = (me + i) % n;
    if (known[static_cast<std::size_t>(2 * i)] == color)
      same.emplace_back(known[static_cast<std::size_t>(2 * i + 1)], who, parent.members[static_cast<std::size_t>(who)]);
  }
  std::sort(same.begin(), same.end());
  std::vector<int> members;
  for (auto& [k, pr, w] : same) members.push_back(w);
  // The color goes into the members' hash (one-to-one for given members), so the groups of different
  // colors count apart, as they did when the color was part of the parent's key.
  return make_keyed(made, parent.ctx | kSplitKey, std::move(members),
                    static_cast<std::uint64_t>(static_cast<std::uint32_t>(color)) * 0x9e3779b97f4a7c15ULL);
}

// The n-th spawn on a group is the same on every member (as MPI requires collectives on a
// communicator to start in the same order everywhere): its two groups are made by the first member
// to spawn it and handed to the others, so that the members agree on them without a message and no
// other group or task shares them. They are forgotten once every member has them (the tasks hold
// them): a program that starts a million collectives keeps only the groups of those in flight.
std::pair<Group, Group> GroupTable::spawn_groups(const GroupData& scope, std::uint64_t nth) {
  auto [it, fresh] = instances_.try_emplace({scope.ctx, nth});
  if (fresh) {
    // Not kept in contexts_: a program may start millions of collectives, and their groups are
    // forgotten here once taken.
    it->second.scope = new_group(scope.members, context_of(scope.ctx | kSpawnKey, 0, nth));
    it->second.world = new_group(world_->members, context_of(scope.ctx | kSpawnKey, 1, nth));
  }
  std::pair<Group, Group> out{Group(it->second.scope), Group(it->second.world)};
  if (++it->second.taken == scope.members.size()) instances_.erase(it);
  return out;
}

}  // namespace touchstone::detail
