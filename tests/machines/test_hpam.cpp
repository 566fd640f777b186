// The HPAM topology and machine of paper 001, section 2: eq. 1 inter-level links, eq. 2 extended
// X-Y routes (the settings of Figure 3), Table 1's per-level costs, and eq. 3 end to end.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "touchstone/topologies/hpam.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

// The nodes a route visits, from src (inclusive) to its end, checking that consecutive links join.
std::vector<int> walk(const Hpam& t, int src, int dst) {
  std::vector<LinkId> path;
  t.route(src, dst, path);
  std::vector<int> nodes{src};
  std::set<LinkId> seen;
  for (LinkId id : path) {
    EXPECT_LT(id, t.link_channels());
    EXPECT_TRUE(seen.insert(id).second) << "link used twice: " << t.link_name(id);
    const auto [a, b] = t.link_ends(id);
    EXPECT_EQ(a, nodes.back()) << t.link_name(id) << " does not continue the route " << src << "->" << dst;
    nodes.push_back(b);
  }
  EXPECT_EQ(nodes.back(), dst);
  EXPECT_EQ(t.distance(src, dst), static_cast<int>(path.size()));
  return nodes;
}

// Eq. 2 written out independently for two adjacent levels: the waypoints of the paper's paths,
// joined by straight runs ("a ~> b denotes a path from a to b along the same direction").
std::vector<int> eq2_reference(const Hpam& t, HpamPos s, HpamPos d) {
  std::vector<HpamPos> way{s};
  auto go = [&](HpamPos to) {
    HpamPos at = way.back();
    if (at.level != to.level) {
      way.push_back(to);
      return;
    }
    while (at.col != to.col) way.push_back(at = {at.level, at.row, at.col + (to.col > at.col ? 1 : -1)});
    while (at.row != to.row) way.push_back(at = {at.level, at.row + (to.row > at.row ? 1 : -1), at.col});
  };
  if (s.level == d.level) {
    go({d.level, s.row, d.col});
    go(d);
  } else if (d.level == s.level + 1) {
    const int f = t.cols(d.level) / t.cols(s.level), b = d.col / f;
    go({s.level, s.row, b});
    go({s.level, t.rows(s.level) - 1, b});
    go({d.level, 0, d.col});
    go(d);
  } else {
    const int f = t.cols(s.level) / t.cols(d.level), j = d.col, n = s.col;
    const int chi = n < j * f ? j * f : n > (j + 1) * f - 1 ? (j + 1) * f - 1 : n;
    go({s.level, s.row, chi});
    go({s.level, 0, chi});
    go({d.level, t.rows(d.level) - 1, j});
    go(d);
  }
  std::vector<int> nodes;
  for (const auto& p : way) nodes.push_back(t.node(p));
  return nodes;
}

}  // namespace

TEST(HpamTopology, Eq1JoinsRowZeroOfLevelTwoToTheLastRowOfLevelOne) {
  // Figure 2's kind of machine: a 2x2 first level over a 4x8 second level, f_2 = 8/2 = 4.
  const Hpam t({{2, 2}, {4, 8}});
  EXPECT_EQ(t.nodes(), 4 + 32);
  EXPECT_EQ(t.fanout(2), 4);
  for (int a = 0; a < 8; ++a) EXPECT_EQ(t.parent_col(2, a), a / 4);
  // Processor (0,5)_2 climbs to (1,1)_1 in one hop and back.
  EXPECT_EQ(t.distance(t.node(2, 0, 5), t.node(1, 1, 1)), 1);
  EXPECT_EQ(t.distance(t.node(1, 1, 1), t.node(2, 0, 5)), 1);
  EXPECT_EQ(t.pos_name(t.node(2, 0, 5)), "(0,5)_2");
}

TEST(HpamTopology, Figure3bOneFirstLevelProcessorReachesEveryColumnInOneHop) {
  // Figure 3(b): one processor in level 1 over a 4x4 level 2. (0,0)_1 is joined to every (0,n)_2,
  // so a root (i, j)_2 is i + 1 hops away whatever its column (section 3.1: eta = i*p_2 + 1).
  const Hpam t({{1, 1}, {4, 4}});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(t.distance(0, t.node(2, i, j)), i + 1);
  EXPECT_EQ(walk(t, 0, t.node(2, 3, 2)), (std::vector<int>{0, t.node(2, 0, 2), t.node(2, 1, 2), t.node(2, 2, 2), t.node(2, 3, 2)}));
  // Upward, chi is n itself (f = 4 covers every column): (3,2) ~> (0,2) -> (0,0)_1.
  EXPECT_EQ(walk(t, t.node(2, 3, 2), 0), (std::vector<int>{t.node(2, 3, 2), t.node(2, 2, 2), t.node(2, 1, 2), t.node(2, 0, 2), 0}));
}

TEST(HpamTopology, Figure3cTwoFirstLevelProcessorsRouteThroughEq2sChi) {
  // Figure 3(c): two processors (1x2) in level 1 over a 4x4 level 2, f_2 = 2.
  const Hpam t({{1, 2}, {4, 4}});
  // Down from (0,1)_1 to (2,0)_2: X in level 1 to column floor(0/2) = 0, cross, then Y.
  EXPECT_EQ(walk(t, t.node(1, 0, 1), t.node(2, 2, 0)),
            (std::vector<int>{t.node(1, 0, 1), t.node(1, 0, 0), t.node(2, 0, 0), t.node(2, 1, 0), t.node(2, 2, 0)}));
  // Up from (3,3)_2 to (0,0)_1: chi = (0+1)*2 - 1 = 1, so X to column 1 of level 2, Y to row 0.
  EXPECT_EQ(t.chi(2, 3, 0), 1);
  EXPECT_EQ(walk(t, t.node(2, 3, 3), t.node(1, 0, 0)),
            (std::vector<int>{t.node(2, 3, 3), t.node(2, 3, 2), t.node(2, 3, 1), t.node(2, 2, 1), t.node(2, 1, 1),
                              t.node(2, 0, 1), t.node(1, 0, 0)}));
  // chi's three cases (eq. 2): n below, above and inside j's columns.
  EXPECT_EQ(t.chi(2, 0, 1), 2);
  EXPECT_EQ(t.chi(2, 3, 0), 1);
  EXPECT_EQ(t.chi(2, 2, 1), 2);
}

TEST(HpamTopology, BruteForceRoutesEqualEq2OnRandomLevelSizes) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 40; ++trial) {
    const int c1 = 1 << (rng() % 3), c2 = c1 << (rng() % 3);
    const int r1 = 1 + static_cast<int>(rng() % 3), r2 = 1 + static_cast<int>(rng() % 5);
    const Hpam t({{r1, c1}, {r2, c2}});
    SCOPED_TRACE(t.name());
    // Eq. 1, link by link: exactly one up and one down channel per row-0 processor of level 2.
    int inter = 0;
    for (LinkId id = 0; id < t.link_channels(); ++id) {
      if (id % 6 < 4) continue;
      const HpamPos child = t.pos(static_cast<int>(id / 6));
      if (child.level != 2 || child.row != 0) continue;
      const auto [a, b] = t.link_ends(id);
      const int parent = t.node(1, r1 - 1, child.col / (c2 / c1));
      EXPECT_EQ(id % 6 == 4 ? std::pair(a, b) : std::pair(b, a), std::pair(t.node(child), parent));
      ++inter;
    }
    EXPECT_EQ(inter, 2 * c2);
    for (int s = 0; s < t.nodes(); ++s)
      for (int d = 0; d < t.nodes(); ++d) EXPECT_EQ(walk(t, s, d), eq2_reference(t, t.pos(s), t.pos(d))) << s << "->" << d;
  }
}

TEST(HpamTopology, ThreeLevelRoutesChainEq2ThroughTheMiddleLevel) {
  const Hpam t({{1, 1}, {2, 2}, {3, 8}});
  for (int s = 0; s < t.nodes(); ++s)
    for (int d = 0; d < t.nodes(); ++d) walk(t, s, d);  // contiguous, ends at d, no link twice
  // (0,0)_1 to (2,5)_3: down to (0,1)_2 (over column 5 of level 3: 5 / 4 = 1), Y to row 1, down
  // to (0,5)_3, Y to row 2.
  EXPECT_EQ(t.distance(0, t.node(3, 2, 5)), 1 + 1 + 1 + 2);
}

TEST(HpamTopology, BadLevelsAreUsageErrors) {
  for (const char* bad : {"hpam:1x3/4x4", "hpam:1x4/4x2", "hpam:1x1/4", "hpam:", "hpam:1x1/0x4", "hpam:1x1/4x4,Q=0",
                          "hpam:1x1/4x4,send_us=3"}) {
    EXPECT_THROW(parse_machine(bad), UsageError) << bad;
  }
}

TEST(HpamMachine, Table1CostsPerLevel) {
  const Machine m = parse_machine("hpam:1x1/16x16,Q=8");
  ASSERT_NE(as_hpam(m), nullptr);
  EXPECT_EQ(m.nodes(), 257);
  EXPECT_EQ(m.name, "hpam:1x1/16x16,Q=8");
  // C^1_send = C^1_recv = 2 us, lambda'_1/W_1 = 0.01 us/byte; level 2: 2Q us and 0.01Q us/byte.
  EXPECT_EQ(m.costs_of(0).send_overhead, microseconds(2));
  EXPECT_EQ(m.costs_of(0).recv_per_byte, nanoseconds(10));
  for (int n : {1, 128, 256}) {
    EXPECT_EQ(m.costs_of(n).send_overhead, microseconds(16));
    EXPECT_EQ(m.costs_of(n).recv_overhead, microseconds(16));
    EXPECT_EQ(m.costs_of(n).send_per_byte, nanoseconds(80));
    EXPECT_EQ(m.costs_of(n).recv_per_byte, nanoseconds(80));
  }
  // Lambda = lambda/W = 0.01 us/byte everywhere; uni-port; one worm per message.
  EXPECT_EQ(m.net.link_byte_time, nanoseconds(10));
  EXPECT_EQ(m.net.hop_time, nanoseconds(10));
  EXPECT_EQ(m.net.inj_ports, 1);
  EXPECT_EQ(m.net.ej_ports, 1);
  EXPECT_EQ(m.net.packet_header, 0);
  EXPECT_EQ(parse_machine("hpam:1x1/4x4").costs_of(1).send_overhead, microseconds(16));  // Q = 8 by default
}

TEST(HpamMachine, OneMessageCostsEq3PlusTheEjectionHop) {
  // Eq. 3: t_comm^{12} = Gamma_12 + Omega_12 * S + Lambda * eta, contention absent. Touchstone's
  // worm also takes the destination's ejection channel (docs/model.md 2.4: (d+1) * t_hop), one
  // more Lambda than eq. 3's eta hops.
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2");
  const Hpam& t = *as_hpam(m);
  const int src = t.node(1, 0, 0), dst = t.node(2, 3, 6);
  const std::size_t S = 1000;
  Time got = 0;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(S);
    if (p.rank() == src) p.send(dst, 0, buf);
    if (p.rank() == dst) {
      p.recv(src, 0, buf);
      got = p.now();
    }
  });
  const int eta = t.distance(src, dst);
  EXPECT_EQ(eta, 1 + 1 + 1 + 3);  // X to column floor(6/4) = 1, Y to row 1, cross, Y to row 3
  const Time gamma = microseconds(2) + microseconds(4);
  const Time omega = nanoseconds(10) + nanoseconds(10) + nanoseconds(20);
  const Time lambda = nanoseconds(10);
  EXPECT_EQ(got, gamma + omega * static_cast<Time>(S) + lambda * eta + lambda);
}
