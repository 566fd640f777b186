// Groups (docs/model.md 5): ordered subsets of ranks with their own numbering and their own matching
// context; mesh helpers for rows, columns, sub-meshes and snake-order halves.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "support/model.hpp"

using namespace touchstone;

namespace {

std::vector<int> members(const Group& g) { return {g.members().begin(), g.members().end()}; }

std::vector<std::byte> tagged(char c) { return {static_cast<std::byte>(c)}; }

// Same ranks, same tag: a message sent in one group is never received by a receive of another
// group, even with any_source/any_tag, even when it arrived first.
TEST(Groups, MessagesOfDifferentGroupsNeverMatch) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  std::vector<char> got;
  std::vector<int> sources;
  run(m, [&](Proc& p) {
    Group same = p.group({0, 1, 2, 3});  // the world's members, but a group of its own
    Group dup = p.group({0, 1, 2, 3});   // created second: yet another context
    EXPECT_NE(same.context(), p.world().context());
    EXPECT_NE(same.context(), dup.context());
    if (p.rank() == 0) {
      p.send(1, 5, tagged('G'), same);  // arrives first
      p.send(1, 5, tagged('D'), dup);
      p.send(1, 5, tagged('W'));        // world
    }
    if (p.rank() == 1) {
      std::vector<std::byte> in(1);
      p.compute(1'000'000);  // everything has arrived
      Status s = p.recv(any_source, any_tag, in);  // world only
      got.push_back(static_cast<char>(in[0]));
      sources.push_back(s.source);
      s = p.recv(any_source, any_tag, in, dup);
      got.push_back(static_cast<char>(in[0]));
      sources.push_back(s.source);
      s = p.recv(0, 5, in, same);
      got.push_back(static_cast<char>(in[0]));
      sources.push_back(s.source);
      EXPECT_FALSE(p.iprobe(any_source, any_tag).has_value());
    }
  });
  EXPECT_EQ(got, (std::vector<char>{'W', 'D', 'G'}));
  EXPECT_EQ(sources, (std::vector<int>{0, 0, 0}));
}

// Ranks in a group are group ranks: sends address group ranks, statuses report group ranks.
TEST(Groups, RanksAreTranslatedToAndFromGroupNumbering) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  Status st;
  std::vector<int> mem;
  run(m, [&](Proc& p) {
    Group g = p.group({3, 1});  // group rank 0 = world 3, group rank 1 = world 1
    if (!g.contains(p.rank())) return;
    EXPECT_EQ(g.size(), 2);
    EXPECT_EQ(g.world_rank(0), 3);
    EXPECT_EQ(g.local_rank(1), 1);
    EXPECT_EQ(g.local_rank(0), -1);
    if (p.rank() == 3) p.send(1, 2, tagged('x'), g);  // to group rank 1 = world 1
    if (p.rank() == 1) {
      std::vector<std::byte> in(1);
      st = p.recv(0, 2, in, g);  // from group rank 0 = world 3
      mem = members(g);
    }
  });
  EXPECT_EQ(st.source, 0);
  EXPECT_EQ(st.tag, 2);
  EXPECT_EQ(mem, (std::vector<int>{3, 1}));
}

// in_world_order: group rank i is world rank i for every member, whatever way the group was made;
// the algorithms use it to tell the whole machine (whose topology describes the group) in O(1).
TEST(Groups, InWorldOrderMeansGroupRankIsWorldRank) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  std::map<std::string, bool> seen;
  std::mutex mu;
  run(m, [&](Proc& p) {
    const std::map<std::string, Group> groups{{"world", p.world()},
                                              {"all in order", p.group({0, 1, 2, 3})},
                                              {"prefix", p.group({0, 1})},
                                              {"subgroup prefix", p.subgroup(p.world(), {0, 1, 2})},
                                              {"all permuted", p.group({1, 0, 2, 3})},
                                              {"not from 0", p.group({1, 2})},
                                              {"gap", p.group({0, 2})}};
    const std::lock_guard lk(mu);
    for (const auto& [name, g] : groups) {
      bool same = true;  // what the flag must say, the slow way
      for (int i = 0; i < g.size(); ++i) same = same && g.world_rank(i) == i;
      EXPECT_EQ(g.in_world_order(), same) << name;
      seen[name] = g.in_world_order();
    }
  });
  EXPECT_TRUE(seen.at("world"));
  EXPECT_TRUE(seen.at("all in order"));
  EXPECT_TRUE(seen.at("prefix"));
  EXPECT_TRUE(seen.at("subgroup prefix"));
  EXPECT_FALSE(seen.at("all permuted"));
  EXPECT_FALSE(seen.at("not from 0"));
  EXPECT_FALSE(seen.at("gap"));
  EXPECT_FALSE(Group().in_world_order());  // the placeholder is not bound to a run
}

// group_like(g) is group(g's members): the n-th group of those members made from the world is the
// same group whichever of the two made it on each rank, with a context of its own.
TEST(Groups, GroupLikeIsTheGroupOfTheSameMembers) {
  const Machine m = ts_test::prime_machine("mesh:2x3");
  std::map<int, std::vector<std::uint64_t>> contexts;
  std::map<int, std::vector<int>> permuted_members;
  std::vector<char> got;
  std::mutex mu;
  run(m, [&](Proc& p) {
    const std::vector<int> all{0, 1, 2, 3, 4, 5};
    // Even ranks list the members first, odd ranks copy the world first: the same two groups.
    Group first = p.rank() % 2 ? p.group_like(p.world()) : p.group(all);
    Group second = p.rank() % 2 ? p.group(all) : p.group_like(p.world());
    Group permuted = p.group({5, 3, 1});
    Group permuted_again = p.group_like(permuted);
    EXPECT_EQ(members(first), all);
    EXPECT_EQ(members(second), all);
    EXPECT_TRUE(first.in_world_order());
    EXPECT_FALSE(permuted_again.in_world_order());
    if (p.rank() == 2) p.send(1, 7, tagged('L'), first);  // made by group() here, group_like() there
    if (p.rank() == 1) {
      std::vector<std::byte> in(1);
      EXPECT_EQ(p.recv(2, 7, in, first).source, 2);
      got.push_back(static_cast<char>(in[0]));
    }
    // Asked before the lock: a call into the runtime may wait for its turn, and a VP waiting there
    // with the lock held would stop every other VP at the lock (docs/parallel.md).
    std::vector<std::uint64_t> mine{p.world().context(), first.context(), second.context(), permuted.context(),
                                    permuted_again.context()};
    const std::lock_guard lk(mu);
    contexts[p.rank()] = std::move(mine);
    permuted_members[p.rank()] = members(permuted_again);
  });
  const std::vector<std::uint64_t>& c = contexts.at(0);
  for (const auto& [rank, mine] : contexts) EXPECT_EQ(mine, c) << "rank " << rank;
  EXPECT_EQ(got, std::vector<char>{'L'});
  EXPECT_EQ(std::set<std::uint64_t>(c.begin(), c.end()).size(), c.size());  // the world's and four of their own
  for (const auto& [rank, mine] : permuted_members) EXPECT_EQ(mine, (std::vector<int>{5, 3, 1})) << "rank " << rank;
}

// subgroup with a key: two ranks that make one group per key, in opposite orders of the keys, agree
// on each key's; the n-th group of one key is the n-th on both, and no two of them share a context.
TEST(Groups, SubgroupsWithAKeyAreCountedApartPerKey) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  std::map<int, std::map<std::uint64_t, std::vector<std::uint64_t>>> contexts;
  std::vector<char> got;
  std::mutex mu;
  run(m, [&](Proc& p) {
    if (p.rank() > 1) return;
    const std::vector<std::uint64_t> keys =
        p.rank() == 0 ? std::vector<std::uint64_t>{7, 9, 7} : std::vector<std::uint64_t>{9, 7, 7};
    std::map<std::uint64_t, std::vector<Group>> made;
    for (const std::uint64_t k : keys) made[k].push_back(p.subgroup(p.world(), {0, 1}, k));
    const Group plain = p.subgroup(p.world(), {0, 1});  // without a key: a count of its own
    if (p.rank() == 0) {
      p.send(1, 3, tagged('9'), made[9][0]);
      p.send(1, 3, tagged('a'), made[7][1]);
    } else {
      std::vector<std::byte> in(1);
      p.recv(0, 3, in, made[7][1]);  // the second of key 7 on both, though made first here
      got.push_back(static_cast<char>(in[0]));
      p.recv(0, 3, in, made[9][0]);
      got.push_back(static_cast<char>(in[0]));
    }
    std::map<std::uint64_t, std::vector<std::uint64_t>> mine;
    for (const auto& [k, groups] : made)
      for (const Group& g : groups) mine[k].push_back(g.context());
    mine[0].push_back(plain.context());
    const std::lock_guard lk(mu);
    contexts[p.rank()] = std::move(mine);
  });
  EXPECT_EQ(contexts.at(0), contexts.at(1));
  std::set<std::uint64_t> all;
  for (const auto& [k, cs] : contexts.at(0)) all.insert(cs.begin(), cs.end());
  EXPECT_EQ(all.size(), 4u);
  EXPECT_EQ(got, (std::vector<char>{'a', '9'}));
}

// split(color, key): members with the same color, ordered by (key, parent rank); a negative color
// gives an empty group. It is collective and uses real messages.
TEST(Groups, SplitOrdersByKeyThenParentRank) {
  const Machine m = ts_test::prime_machine("mesh:2x3");
  std::map<int, std::vector<int>> by_rank;
  std::map<int, std::vector<int>> sub_by_rank;
  const RunResult r = run(m, [&](Proc& p) {
    // color = rank % 2; key = -rank for even ranks (reversed), 0 for odd ranks (ties: parent rank).
    const int color = p.rank() % 2, key = color == 0 ? -p.rank() : 0;
    Group g = p.split(p.world(), color, key);
    by_rank[p.rank()] = members(g);
    // Split a subgroup: the world ranks 5, 4, 3 (in that order), everyone in one color but 4.
    Group parent = p.subgroup(p.world(), {5, 4, 3});
    if (parent.contains(p.rank())) {
      Group h = p.split(parent, p.rank() == 4 ? -1 : 7, 0);
      sub_by_rank[p.rank()] = members(h);
      // The new group works for messages: a ring exchange in it.
      if (h.size() == 2) {
        const int me = h.local_rank(p.rank());
        std::vector<std::byte> in(1);
        p.sendrecv(1 - me, 0, tagged('s'), 1 - me, 0, in, h);
        EXPECT_EQ(static_cast<char>(in[0]), 's');
      }
    }
  });
  for (int rank : {0, 2, 4}) EXPECT_EQ(by_rank[rank], (std::vector<int>{4, 2, 0})) << rank;
  for (int rank : {1, 3, 5}) EXPECT_EQ(by_rank[rank], (std::vector<int>{1, 3, 5})) << rank;
  EXPECT_EQ(sub_by_rank[5], (std::vector<int>{5, 3}));  // parent order: 5 is parent rank 0
  EXPECT_EQ(sub_by_rank[3], (std::vector<int>{5, 3}));
  EXPECT_TRUE(sub_by_rank[4].empty());
  EXPECT_GT(r.stats.messages, 0u);  // split really communicates
}

// Phantom payloads drop the program's bytes, not the runtime's: a split still exchanges every
// member's color and key, and gives the groups a run with payloads gives.
TEST(Groups, SplitWithPhantomPayloadsStillKnowsEveryColorAndKey) {
  const Machine m = ts_test::prime_machine("mesh:2x3");
  const auto split_by_rank = [&](bool phantom) {
    std::map<int, std::vector<int>> by_rank;
    RunOptions o;
    o.phantom_payloads = phantom;
    run(
        m, [&](Proc& p) { by_rank[p.rank()] = members(p.split(p.world(), p.rank() % 2, -p.rank())); }, o);
    return by_rank;
  };
  const std::map<int, std::vector<int>> phantom = split_by_rank(true);
  for (int rank : {0, 2, 4}) EXPECT_EQ(phantom.at(rank), (std::vector<int>{4, 2, 0})) << rank;
  for (int rank : {1, 3, 5}) EXPECT_EQ(phantom.at(rank), (std::vector<int>{5, 3, 1})) << rank;
  EXPECT_EQ(phantom, split_by_rank(false));
}

// Mesh helpers on mesh:3x4 (3 rows of 4, row-major).
TEST(Groups, MeshRowColumnSubmeshAndSnakeHalves) {
  const Machine m = ts_test::prime_machine("mesh:3x4");
  std::vector<int> row1, col2, sub, snake, half0, half1, odd0, odd1, subg;
  run(m, [&](Proc& p) {
    Group r1 = p.mesh_row(1), c2 = p.mesh_column(2), s = p.submesh(1, 1, 2, 3), sn = p.submesh(1, 1, 2, 3, true);
    Group h0 = p.snake_half(1, 1, 2, 3, 0), h1 = p.snake_half(1, 1, 2, 3, 1);
    Group o0 = p.snake_half(0, 0, 3, 3, 0), o1 = p.snake_half(0, 0, 3, 3, 1);
    Group sg = p.subgroup(sn, {5, 0, 2});
    if (p.rank() == 0) {
      row1 = members(r1), col2 = members(c2), sub = members(s), snake = members(sn);
      half0 = members(h0), half1 = members(h1), odd0 = members(o0), odd1 = members(o1), subg = members(sg);
    }
  });
  EXPECT_EQ(row1, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(col2, (std::vector<int>{2, 6, 10}));
  EXPECT_EQ(sub, (std::vector<int>{5, 6, 7, 9, 10, 11}));
  EXPECT_EQ(snake, (std::vector<int>{5, 6, 7, 11, 10, 9}));  // odd rows right to left
  EXPECT_EQ(half0, (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(half1, (std::vector<int>{11, 10, 9}));
  // 3x3 = 9 processors: half 0 holds ceil(9/2) = 5 of the snake 0 1 2 6 5 4 8 9 10.
  EXPECT_EQ(odd0, (std::vector<int>{0, 1, 2, 6, 5}));
  EXPECT_EQ(odd1, (std::vector<int>{4, 8, 9, 10}));
  EXPECT_EQ(subg, (std::vector<int>{9, 5, 7}));
}

// A barrier and messages in a row group only involve the row.
TEST(Groups, RowGroupCommunicationUsesGroupRanks) {
  const Machine m = ts_test::prime_machine("mesh:3x4");
  std::mutex mu;
  std::map<int, int> received_from;
  run(m, [&](Proc& p) {
    const int row = p.rank() / 4;
    Group g = p.mesh_row(row);
    const int me = g.local_rank(p.rank()), n = g.size();
    std::vector<std::byte> in(1);
    Status s = p.sendrecv((me + 1) % n, 0, tagged(static_cast<char>('a' + p.rank())), (me + n - 1) % n, 0, in, g);
    p.barrier(g);
    std::lock_guard lk(mu);
    received_from[p.rank()] = s.source * 100 + (static_cast<char>(in[0]) - 'a');
  });
  for (int r = 0; r < 12; ++r) {
    const int row = r / 4, me = r % 4, prev = (me + 3) % 4;
    EXPECT_EQ(received_from[r], prev * 100 + row * 4 + prev) << r;
  }
}

TEST(Groups, MeshHelpersRejectBadArguments) {
  EXPECT_THROW(run(parse_machine("mesh:2x2x2"), [](Proc& p) { p.mesh_row(0); }), Error);
  EXPECT_THROW(run(parse_machine("mesh:3x4"), [](Proc& p) { p.submesh(2, 2, 2, 3); }), Error);
  EXPECT_THROW(run(parse_machine("mesh:3x4"), [](Proc& p) { p.snake_half(0, 0, 2, 2, 2); }), Error);
  EXPECT_THROW(run(parse_machine("mesh:2x2"), [](Proc& p) { p.group({0, 0}); }), Error);
  EXPECT_THROW(run(parse_machine("mesh:2x2"), [](Proc& p) { p.group({0, 4}); }), Error);
  // The same checks whether or not the members are in world order.
  EXPECT_THROW(run(parse_machine("mesh:2x2"), [](Proc& p) { p.group({2, 0, 2}); }), Error);
  EXPECT_THROW(run(parse_machine("mesh:2x2"), [](Proc& p) { p.group({3, -1}); }), Error);
  std::vector<int> made;
  run(parse_machine("mesh:2x2"), [&](Proc& p) {
    if (p.rank() == 0) made = members(p.group({3, 1, 0}));
  });
  EXPECT_EQ(made, (std::vector<int>{3, 1, 0}));
  EXPECT_THROW(run(parse_machine("mesh:2x2"), [](Proc& p) { p.subgroup(p.world(), {4}); }), Error);
}

}  // namespace
