// Inter-level multicast hardware (paper 001 section 3.1; docs/model.md 2.11): one worm
// that forks at the replicating router of a level's last row onto all its inter-level outgoing
// channels, branches in lock-step, the body streaming once every branch holds its ejection channel.
// Times are computed by hand from the model's formulas.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "touchstone/topologies/hpam.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The network alone, the sends returning when the worm has left (send_holds_until_received=off;
// the preset holds a send until its receives complete, tests/runtime/test_send_holds.cpp).
// hpam:2x2/4x8,Q=2,multicast: f_2 = 4, so the router of (1,0)_1 replicates onto the down links
// of (0,0)_2 .. (0,3)_2. Level 1: C = 2 us, 10 ns/B; level 2: C = 4 us, 20 ns/B; Lambda = 10 ns.
constexpr Time kHop = nanoseconds(10), kByte = nanoseconds(10);

std::vector<int> row_below(const Hpam& t, int parent_col, int row) {
  std::vector<int> d;
  const int f = t.fanout(2);
  for (int k = 0; k < f; ++k) d.push_back(t.node(2, row, parent_col * f + k));
  return d;
}

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(seed)) & 0xff);
  return b;
}

TEST(Multicast, MachineOptionTurnsTheHardwareOn) {
  EXPECT_FALSE(parse_machine("hpam:4x4/16x16,Q=8").net.multicast);
  const Machine m = parse_machine("hpam:4x4/16x16,Q=8,multicast");
  EXPECT_TRUE(m.net.multicast);
  EXPECT_EQ(m.name, "hpam:4x4/16x16,Q=8,multicast");
  EXPECT_EQ(m.costs_of(as_hpam(m)->first(2)).send_overhead, microseconds(16));
  EXPECT_THROW(parse_machine("mesh:4x4,multicast"), UsageError);
  EXPECT_THROW(parse_machine("hpam:1x1/4x4,multicast=yes"), UsageError);
}

// Contention-free, every branch's tail arrives at h + (d + 1) t_hop + S b, d the links from the
// source to any destination (all equal), b the bottleneck of the whole tree; the sender's multicast
// returns when the tail leaves its injection channel, h + S b (for a worm at least as long as its
// path; a shorter one frees the channel as its header moves on, at h + S b too).
TEST(Multicast, ForkedWormArrivesEverywhereAtTheUnicastFormula) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast,send_holds_until_received=off");
  const Hpam& t = *as_hpam(m);
  const int src = t.node(1, 0, 0);
  for (std::size_t S : {std::size_t{0}, std::size_t{5}, std::size_t{1000}}) {
    SCOPED_TRACE(S);
    const std::vector<int> dsts = row_below(t, 0, 3);
    std::vector<Time> done(static_cast<std::size_t>(m.nodes()), -1);
    std::vector<std::vector<std::byte>> got(static_cast<std::size_t>(m.nodes()));
    Time sender_after = -1;
    const RunResult r = run(m, [&](Proc& p) {
      if (p.rank() == src) {
        const auto data = pattern(S, 3);
        p.multicast(dsts, 9, data);
        sender_after = p.now();
      }
      for (int d : dsts)
        if (p.rank() == d) {
          std::vector<std::byte> buf(S + 8);
          const Status st = p.recv(src, 9, buf);
          EXPECT_EQ(st.size, S);
          buf.resize(st.size);
          got[static_cast<std::size_t>(d)] = buf;
          done[static_cast<std::size_t>(d)] = p.now();
        }
    });
    const int d = t.distance(src, dsts[0]);
    EXPECT_EQ(d, 1 + 1 + 3);  // (0,0)_1 -> (1,0)_1, down to (0,k)_2, 3 rows down
    const Time h = microseconds(2) + static_cast<Time>(S) * nanoseconds(10);
    const Time arrival = h + (d + 1) * kHop + static_cast<Time>(S) * kByte;
    for (int dst : dsts) {
      EXPECT_EQ(got[static_cast<std::size_t>(dst)], pattern(S, 3));
      EXPECT_EQ(done[static_cast<std::size_t>(dst)], arrival + microseconds(4) + static_cast<Time>(S) * nanoseconds(20));
    }
    EXPECT_EQ(sender_after, h + static_cast<Time>(S) * kByte);
    EXPECT_EQ(r.stats.messages, dsts.size());  // one delivered message per branch, received once
    EXPECT_EQ(r.stats.packets, 1u);            // ... carried by one worm
    EXPECT_EQ(r.stats.blocked_headers, 0u);
  }
}

// A unicast worm holds a channel of branch 2; the forked header waits for it holding the channels
// of branches 0 and 1 (lock-step), and every branch delivers late by the same wait.
TEST(Multicast, BlockingOneBranchHoldsTheOthers) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast,send_holds_until_received=off");
  const Hpam& t = *as_hpam(m);
  const int src = t.node(1, 0, 0), blocker = t.node(2, 0, 2), sink = t.node(2, 2, 2);
  const std::vector<int> dsts = row_below(t, 0, 3);
  const std::size_t S = 100, L = 1000;
  std::vector<Time> arrival(static_cast<std::size_t>(m.nodes()), -1);
  Time sender_after = -1, probe_done = -1;
  const RunResult r = run(m, [&](Proc& p) {
    std::vector<std::byte> buf(L);
    if (p.rank() == blocker) p.send(sink, 1, buf);
    if (p.rank() == sink) p.recv(blocker, 1, buf);
    if (p.rank() == src) {
      p.compute(microseconds(28));
      p.multicast(dsts, 2, std::span(buf).first(S));
      sender_after = p.now();
    }
    for (int d : dsts)
      if (p.rank() == d) arrival[static_cast<std::size_t>(d)] = p.recv(src, 2, buf).arrival;
    // (0,1)_2 -> (1,1)_2 is branch 1's first channel in level 2: a message that wants it while
    // the forked worm waits for branch 2 waits too.
    if (p.rank() == t.node(2, 0, 1)) {
      p.compute(microseconds(28));
      p.send(t.node(2, 1, 1), 3, std::span(buf).first(0));
    }
    if (p.rank() == t.node(2, 1, 1)) probe_done = p.recv(t.node(2, 0, 1), 3, buf).arrival;
  });
  // Blocker: h_b = 4 us + 1000 * 20 ns = 24 us; its header takes (0,2)->(1,2) at 24.01 us and its
  // tail reaches (2,2)_2 at 24 + 3 * 0.01 + 1000 * 0.01 = 34.03 us, leaving (0,2)->(1,2) at
  // 34.03 - 2 * 0.01 = 34.01 us.
  const Time h_b = microseconds(24), tail_b = h_b + 3 * kHop + static_cast<Time>(L) * kByte;
  const Time free_at = tail_b - 2 * kHop;
  // Multicast: h = 28 + 2 + 100 * 0.01 = 31 us; it wants position 3 (the first link inside level
  // 2, one per branch) at h + 3 t_hop = 31.03 us, takes branches 0 and 1's, waits for branch 2's
  // until 34.01 us, then moves on unhindered (the blocker's tail keeps one hop ahead): ejection at
  // 34.01 + 3 t_hop, every tail at + S b.
  const Time h = microseconds(31);
  ASSERT_LT(h + 3 * kHop, free_at);
  const Time eject = free_at + 3 * kHop, tail = eject + static_cast<Time>(S) * kByte;
  for (int d : dsts) EXPECT_EQ(arrival[static_cast<std::size_t>(d)], tail) << t.pos_name(d);
  EXPECT_EQ(tail, microseconds(35) + nanoseconds(40));
  EXPECT_EQ(sender_after, tail - 6 * kHop);  // the injection channel frees 6 positions behind the tail
  // The 0-byte message (0,1)_2 -> (1,1)_2, handed over at 28 + 4 = 32 us, wants branch 1's
  // (0,1)->(1,1) at 32.01 us: held by the waiting forked worm until its tail leaves it, 3
  // positions before the end, tail - 3 t_hop = 35.01 us; it then arrives one hop later.
  const Time probe_wait_from = microseconds(32) + kHop, probe_got = tail - 3 * kHop;
  EXPECT_EQ(probe_done, probe_got + kHop);
  EXPECT_EQ(r.stats.blocked_headers, 2u);
  EXPECT_EQ(r.stats.blocked_time, (free_at - (h + 3 * kHop)) + (probe_got - probe_wait_from));
}

// Sets the hardware cannot reach, and machines without it, are usage errors with a reason.
TEST(Multicast, UnreachableSetsAreUsageErrors) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast");
  const Hpam& t = *as_hpam(m);
  const int src = t.node(1, 0, 0);
  struct Case {
    std::vector<int> dsts;
    std::string must_name;
  };
  const std::vector<Case> cases = {
      {{}, "no destinations"},
      {{t.node(2, 3, 0), t.node(2, 3, 1), t.node(2, 3, 2)}, "exactly one destination below each"},
      {{t.node(2, 3, 0), t.node(2, 3, 1), t.node(2, 3, 2), t.node(2, 2, 3)}, "same distance"},
      {{t.node(2, 3, 0), t.node(2, 3, 1), t.node(2, 3, 2), t.node(2, 3, 4)}, "same distance"},
      {{t.node(2, 3, 0), t.node(2, 3, 0), t.node(2, 3, 2), t.node(2, 3, 3)}, "both lie below"},
      {{t.node(1, 1, 1)}, "crosses no replicating router"},
      {{m.nodes()}, "out of range"},
  };
  std::vector<std::string> errors;
  run(m, [&](Proc& p) {
    if (p.rank() != src) return;
    for (const auto& c : cases) {
      try {
        p.multicast(c.dsts, 0, {});
        errors.emplace_back("accepted");
      } catch (const UsageError& e) {
        errors.emplace_back(e.what());
      }
    }
  });
  ASSERT_EQ(errors.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_TRUE(contains(errors[i], cases[i].must_name)) << i << ": " << errors[i];
  std::string without;
  run(parse_machine("hpam:2x2/4x8,Q=2"), [&](Proc& p) {
    if (p.rank() != src) return;
    try {
      p.multicast(row_below(t, 0, 3), 0, {});
    } catch (const UsageError& e) {
      without = e.what();
    }
  });
  EXPECT_TRUE(contains(without, "multicast hardware")) << without;
}

// A level-1 processor that is not on the last row sends through (r1 - 1, b)_1's router, and a
// source in another column walks there first; every child column of the fork gets the same bytes once.
TEST(Multicast, TrunkAcrossLevelsDeliversOnceToEveryBranch) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast");
  const Hpam& t = *as_hpam(m);
  for (int src : {t.node(1, 0, 1), t.node(1, 0, 0), t.node(1, 1, 0)}) {
    SCOPED_TRACE(t.pos_name(src));
    const std::vector<int> dsts = row_below(t, 1, 2);  // (2,4)_2 .. (2,7)_2, below (1,1)_1
    std::vector<int> received(static_cast<std::size_t>(m.nodes()), 0);
    const RunResult r = run(m, [&](Proc& p) {
      if (p.rank() == src) p.multicast(dsts, 4, pattern(64, src));
      for (int d : dsts)
        if (p.rank() == d) {
          std::vector<std::byte> buf(64);
          p.recv(src, 4, buf);
          EXPECT_EQ(buf, pattern(64, src));
          ++received[static_cast<std::size_t>(d)];
        }
    });
    EXPECT_EQ(std::accumulate(received.begin(), received.end(), 0), 4);
    for (int d : dsts) EXPECT_EQ(received[static_cast<std::size_t>(d)], 1);
    EXPECT_EQ(r.stats.messages, 4u);
  }
}

// Several multicasts and unicasts contending: the same trace_hash whatever the host does.
TEST(Multicast, DeterministicUnderPerturbationAndThreads) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast,send_holds_until_received=off");
  const Hpam& t = *as_hpam(m);
  auto program = [&](Proc& p) {
    std::vector<std::byte> buf(300);
    const int b = t.pos(p.rank()).level == 1 ? t.pos(p.rank()).col : -1;
    if (b >= 0)
      for (int row = 0; row < 4; ++row) p.multicast(row_below(t, b, row), row, std::span(buf).first(100 + 50 * row));
    if (t.pos(p.rank()).level == 2) {
      // Both level-1 processors of column me.col / 4 multicast to this row once.
      const HpamPos me = t.pos(p.rank());
      const int other = t.node(2, (me.row + 1) % 4, (me.col + 3) % 8);
      const int from = t.node(2, (me.row + 3) % 4, (me.col + 5) % 8);
      p.send(other, 7, std::span(buf).first(200));
      p.recv(t.node(1, 0, me.col / 4), me.row, buf);
      p.recv(t.node(1, 1, me.col / 4), me.row, buf);
      p.recv(from, 7, buf);
    }
  };
  const RunResult ref = ts_test::expect_host_independent(m, program, 6, 100);
  EXPECT_GT(ref.stats.blocked_headers, 0u);
  EXPECT_EQ(ref.stats.messages, 4u * 4u * 4u + 32u);
}

}  // namespace
