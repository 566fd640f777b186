// Paper 001 on the HPAM machine: the binary tree inside a mesh, the hybrid broadcast, scatter and
// gather of sections 3.1, 4.1 and 5 deliver the right bytes on several level shapes (the harness
// checks every byte and throws otherwise), and their emulated times against eqs. 4, 5, 9 and 10.
//
// Contention is absent in the broadcast and scatter runs checked for time (the source sends
// farthest root first, so no message crosses a sub-mesh whose tree has started, and a tree's
// halves are disjoint rectangles). The emulated time still differs from the paper's formula, by
// three terms each test names:
//  (a) pipelined sends: eq. 5 charges each of the N inter-level messages a whole A_12 (= the
//      source's C_send + S (lambda'_1/W_1 + Lambda) plus the receiver's C_recv + S lambda'_2/W_2)
//      one after the other, as the preset's held sends do. On a machine whose blocking send returns
//      once the message has left the source (docs/model.md 2.4; `buffered` below), the N receives
//      overlap the later sends and only the last one is on the critical path: the emulation is
//      (N - 1)(C_recv^2 + S lambda'_2/W_2) shorter.
//  (b) inter-level hops: eq. 5 adds every message's hops, Lambda N (1 + (r2 - p2)/2); on the
//      critical path lies only the last message's, Lambda (eta_last + 1) with its ejection channel.
//  (c) tree hops: eq. 4 charges Lambda/2 (l_p^+ + l_q^+); halving a p x q mesh moves p/2 + p/4 + ...
//      + q/2 + ... = (p - 1) + (q - 1) hops, plus one ejection channel per step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <map>
#include <span>

#include <fmt/format.h>

#include "algorithms/hpam.hpp"
#include "algorithms/hpam_model.hpp"
#include "algorithms/registry.hpp"
#include "support/host_independent.hpp"
#include "support/trace_check.hpp"
#include "touchstone/topologies/hpam.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using algorithms::HpamModel;
using algorithms::lg;
using algorithms::Rect;

namespace {

// The machine with a send that returns when its message has left (docs/model.md 2.4), not held
// until the receive completes as the preset's is (send_holds_until_received): term (a) below is
// that difference.
Machine buffered(const std::string& spec) { return parse_machine(spec + ",send_holds_until_received=off"); }

RunResult run_alg(const Machine& m, const std::string& name, std::size_t size) {
  const auto& alg = algorithms::find(name);
  const algorithms::Args args{size, 0, true};
  return run(m, [&](Proc& p) { alg.program(p, args); });
}

// An inter-level message of `bytes` (docs/model.md 2.4-2.5): U_1 = C_send^1 + bytes (s_1 + b), the
// level-1 sender's time until it has left, and C_recv^2 + bytes r_2, the level-2 receiver's cost.
Time inter_send(const HpamModel& h, Time bytes) {
  return h.level[0].send_overhead + bytes * (h.level[0].send_per_byte + h.lambda_byte);
}
Time inter_recv(const HpamModel& h, Time bytes) { return h.level[1].recv_overhead + bytes * h.level[1].recv_per_byte; }

// The header's terms for n inter-level messages of `bytes` each to the roots of p x q sub-meshes:
// (a) all receives but the last overlap later sends;
Time pipelining_term(const HpamModel& h, long long n, Time bytes) { return (n - 1) * inter_recv(h, bytes); }
// (b) eqs. 5, 6 and 10 charge every message Lambda (1 + (r2 - p)/2), the critical path only the
// last one's 1 hop (row 0) and its ejection;
Time inter_hops_term(const HpamModel& h, long long n, int p) {
  return h.lambda_hop * n * (2 + h.r2 - p) / 2 - h.lambda_hop * (1 + 1);
}
// (c) eq. 4's tree hops against the halving tree's (p - 1) + (q - 1) hops and lg p + lg q ejections.
Time tree_hops_term(const HpamModel& h, int p, int q) {
  return h.lambda_hop * ((lg(p) * (lg(p) + 1) + lg(q) * (lg(q) + 1)) / 2) -
         h.lambda_hop * ((p - 1) + (q - 1) + lg(p) + lg(q));
}

// The emulation's critical path of a hybrid broadcast (bytes_per_root = S) or scatter
// (bytes_per_root = p q S) on a one-processor first level, derived from docs/model.md 2.4-2.5:
// the k-th root (farthest first) has received at k U_1 + Lambda (eta_k + 1) + C_recv^2 +
// bytes r_2, U_1 = C_send^1 + bytes (s_1 + b); then the tree's deepest chain.
// With `multicast`, q = 1 and one replicated message per band of p rows reaches all its roots
// (bytes_per_root = p c2 S for the scatter: the router replicates whole messages); the forked
// worm costs its sender and its branches what one unicast worm of the same length does
// (docs/model.md 2.11).
Time emulated_hybrid(const HpamModel& h, const Hpam& t, int p, int q, std::size_t s, bool scatter, bool multicast = false) {
  const auto bytes = static_cast<Time>(scatter ? static_cast<std::size_t>(p * (multicast ? h.c2 : q)) * s : s);
  const Time u1 = inter_send(h, bytes);
  Time inter = 0;
  int k = 0;
  for (int i = h.r2 / p - 1; i >= 0; --i)
    for (int j = 0; j < (multicast ? 1 : h.c2 / q); ++j) {
      ++k;
      const int eta = t.distance(0, t.node(2, i * p, j * q));
      inter = std::max(inter, k * u1 + h.lambda_hop * (eta + 1) + inter_recv(h, bytes));
    }
  const int steps = lg(p) + lg(q);
  const Time tree = scatter ? h.b(2, 2, s, steps, static_cast<long long>(p) * q - 1) : steps * h.a(2, 2, s);
  return inter + tree + h.lambda_hop * ((p - 1) + (q - 1) + steps);
}

}  // namespace

TEST(HpamTree, HalvesColumnsFirstThenRows) {
  // A 4x4 mesh from its corner: log 4 + log 4 = 4 steps (section 3).
  const auto root = algorithms::tree_role({0, 0, 4, 4}, 0, 0);
  ASSERT_EQ(root.children.size(), 4u);
  EXPECT_EQ(root.children[0].c0, 2);
  EXPECT_EQ(root.children[0].w, 2);
  EXPECT_EQ(root.children[1].c0, 1);
  EXPECT_EQ(root.children[2].r0, 2);
  EXPECT_EQ(root.children[3].r0, 1);
  const auto far = algorithms::tree_role({0, 0, 4, 4}, 3, 3);
  EXPECT_TRUE(far.has_parent);
  EXPECT_EQ(far.parent_r, 2);
  EXPECT_EQ(far.parent_c, 3);
  EXPECT_TRUE(far.children.empty());
  const auto mid = algorithms::tree_role({0, 0, 4, 4}, 0, 2);
  EXPECT_EQ(mid.parent_c, 0);
  EXPECT_EQ(mid.children.size(), 3u);
}

struct Shape {
  const char* machine;
  std::vector<std::string> submeshes;
};

// Runs every algorithm of `patterns` ("scatter/hybrid({})": {} stands for the sub-mesh) with every
// sub-mesh of every shape at every size; the harness checks every byte, and `check(m, sub, r)`
// what each run's result must show.
void run_every_shape(std::span<const Shape> shapes, std::initializer_list<const char*> patterns,
                     std::initializer_list<std::size_t> sizes,
                     const std::function<void(const Machine&, const std::string& sub, const RunResult&)>& check) {
  for (const auto& sh : shapes) {
    const Machine m = parse_machine(sh.machine);
    for (const auto& sub : sh.submeshes)
      for (const char* pattern : patterns)
        for (std::size_t size : sizes) {
          const std::string name = fmt::format(fmt::runtime(pattern), sub);
          SCOPED_TRACE(fmt::format("{} {} size {}", sh.machine, name, size));
          RunResult r;
          ASSERT_NO_THROW(r = run_alg(m, name, size));
          check(m, sub, r);
        }
  }
}

// Each processor but the source receives exactly one message (for a gather: sends one).
void one_message_each(const Machine& m, const std::string&, const RunResult& r) {
  EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(m.nodes() - 1));
}

TEST(HpamAlgorithms, DeliverTheRightBytesOnSeveralLevelShapes) {
  const Shape shapes[] = {{"hpam:1x1/4x4,Q=2", {"1x1", "2x2", "4x2", "4x1", "1x4", "4x4"}},
                          {"hpam:1x1/8x4,Q=8", {"1x1", "8x2", "2x4", "8x4"}},
                          {"hpam:1x1/2x8,Q=32", {"1x1", "2x4", "1x8", "2x1"}},
                          {"hpam:1x1/1x2", {"1x1", "1x2"}}};
  // Every level-2 processor receives exactly one message (the source receives one per sub-mesh in
  // the gather): the tree and the inter-level step together are a spanning tree.
  run_every_shape(shapes, {"bcast/hybrid({})", "scatter/hybrid({})", "gather/hybrid({})"}, {0, 1, 300},
                  one_message_each);
  for (const auto& sh : shapes) ASSERT_NO_THROW(run_alg(parse_machine(sh.machine), "bcast/brute-force", 64));
  ASSERT_NO_THROW(run_alg(parse_machine("mesh:4x8"), "bcast/binary-tree", 100));
  ASSERT_NO_THROW(run_alg(parse_machine("mesh:3x5"), "bcast/binary-tree", 100));
}

TEST(HpamAlgorithms, BadArgumentsAreUsageErrors) {
  EXPECT_THROW(algorithms::find("bcast/hybrid(3x2)"), UsageError);
  EXPECT_THROW(algorithms::find("scatter/hybrid(4)"), UsageError);
  EXPECT_THROW(run_alg(parse_machine("hpam:1x1/4x4"), "bcast/hybrid(8x1)", 8), RunError);     // does not tile
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "bcast/hybrid(2x2)", 8), RunError);     // section 3.1 needs 1x1
  EXPECT_THROW(run_alg(parse_machine("mesh:4x4"), "scatter/hybrid(2x2)", 8), RunError);       // not an HPAM
  EXPECT_THROW(HpamModel::of(parse_machine("mesh:4x4")), UsageError);
}

TEST(HpamTimes, BinaryTreeBroadcastIsEq4PlusTheTreesRealDistances) {
  // mesh:4x8 with the generic parameters (C = 10 us, s = r = 10 ns/B, b = 40 ns/B, header 32 B,
  // t_hop = 100 ns), S = 100: each of the log 4 + log 8 = 5 steps costs A = 10 + 1 + 10 + 1 +
  // (100 + 32) * 0.04 = 27.28 us; the deepest chain moves 4/2 + 4/4 + 8/2 + 8/4 + 8/8 = 3 + 7 hops
  // plus 5 ejection channels. Eq. 4 would charge Lambda/2 (l4^+ + l8^+) = 9 hops instead of 15.
  const RunResult r = run_alg(parse_machine("mesh:4x8"), "bcast/binary-tree", 100);
  EXPECT_EQ(r.makespan, 5 * nanoseconds(27'280) + 15 * nanoseconds(100));
}

TEST(HpamTimes, HybridBroadcastIsEq5MinusPipeliningAndHops) {
  for (const char* spec : {"hpam:1x1/4x4,Q=2", "hpam:1x1/8x8,Q=8", "hpam:1x1/16x16,Q=32"}) {
    const Machine m = buffered(spec);
    const HpamModel h = HpamModel::of(m);
    const Hpam& t = *as_hpam(m);
    for (int p = 1; p <= h.r2; p *= 2)
      for (int q = 1; q <= h.c2; q *= 2)
        for (std::size_t s : {std::size_t{0}, std::size_t{1000}}) {
          SCOPED_TRACE(fmt::format("{} {}x{} S={}", spec, p, q, s));
          const RunResult r = run_alg(m, fmt::format("bcast/hybrid({}x{})", p, q), s);
          const Time emulated = emulated_hybrid(h, t, p, q, s, false);
          EXPECT_EQ(r.makespan, emulated);
          EXPECT_EQ(r.stats.blocked_headers, 0u);  // contention absent
          // The same, term by term from eq. 5:
          const long long n = static_cast<long long>(h.r2 / p) * (h.c2 / q);
          EXPECT_EQ(r.makespan, h.eq5_hybrid_bcast(p, q, s) - pipelining_term(h, n, static_cast<Time>(s)) -
                                    inter_hops_term(h, n, p) - tree_hops_term(h, p, q));
        }
  }
}

TEST(HpamTimes, HybridScatterIsEq10MinusPipeliningAndHops) {
  for (const char* spec : {"hpam:1x1/4x4,Q=2", "hpam:1x1/8x8,Q=8"}) {
    const Machine m = buffered(spec);
    const HpamModel h = HpamModel::of(m);
    const Hpam& t = *as_hpam(m);
    for (int p = 1; p <= h.r2; p *= 2)
      for (int q = 1; q <= h.c2; q *= 2)
        for (std::size_t s : {std::size_t{0}, std::size_t{100}}) {
          SCOPED_TRACE(fmt::format("{} {}x{} S={}", spec, p, q, s));
          const RunResult r = run_alg(m, fmt::format("scatter/hybrid({}x{})", p, q), s);
          EXPECT_EQ(r.makespan, emulated_hybrid(h, t, p, q, s, true));
          EXPECT_EQ(r.stats.blocked_headers, 0u);
          const long long n = static_cast<long long>(h.r2 / p) * (h.c2 / q);
          const Time bytes = static_cast<Time>(p * q) * static_cast<Time>(s);  // a sub-mesh's blocks
          EXPECT_EQ(r.makespan, h.eq10_hybrid_scatter(p, q, s) - pipelining_term(h, n, bytes) -
                                    inter_hops_term(h, n, p) - tree_hops_term(h, p, q));
        }
  }
}

// The preset holds each send until its receive completes (section 2.1's uni-port processors): the
// N inter-level messages cost N A_12 in sequence, as eqs. 5 and 10 charge, term (a) is gone. The
// k-th message moves eta_k = 1 + i p2 hops plus its ejection channel, where eq. 5 charges Lambda
// (1 + (r2 - p2)/2) on average: N Lambda more, the ejections. Term (c) remains.
TEST(HpamTimes, HeldSendsMakeHybridBroadcastAndScatterEqs5And10PlusEjections) {
  for (const char* spec : {"hpam:1x1/4x4,Q=2", "hpam:1x1/8x8,Q=8"}) {
    const Machine m = parse_machine(spec);
    const HpamModel h = HpamModel::of(m);
    for (int p = 1; p <= h.r2; p *= 2)
      for (int q = 1; q <= h.c2; q *= 2)
        for (std::size_t s : {std::size_t{0}, std::size_t{100}}) {
          SCOPED_TRACE(fmt::format("{} {}x{} S={}", spec, p, q, s));
          const long long n = static_cast<long long>(h.r2 / p) * (h.c2 / q);
          const RunResult b = run_alg(m, fmt::format("bcast/hybrid({}x{})", p, q), s);
          EXPECT_EQ(b.stats.blocked_headers, 0u);
          EXPECT_EQ(b.makespan, h.eq5_hybrid_bcast(p, q, s) + n * h.lambda_hop - tree_hops_term(h, p, q));
          const RunResult sc = run_alg(m, fmt::format("scatter/hybrid({}x{})", p, q), s);
          EXPECT_EQ(sc.stats.blocked_headers, 0u);
          EXPECT_EQ(sc.makespan, h.eq10_hybrid_scatter(p, q, s) + n * h.lambda_hop - tree_hops_term(h, p, q));
        }
  }
}

TEST(HpamTimes, GatherThroughOneSubMeshIsTheScatterReversed) {
  // One sub-mesh (p2 x q2 = r2 x c2): no two messages meet, and the gather costs what the scatter
  // does with the directions swapped: the tree (C_send^2 and C_recv^2 swap, Gamma_22 and
  // Omega_22 unchanged), then (0,0)_2 sends r2 c2 S bytes up to the source (Gamma_21 = Gamma_12,
  // Omega_21 = Omega_12, section 5), one hop plus the ejection channel.
  const Machine m = parse_machine("hpam:1x1/4x4,Q=8");
  const HpamModel h = HpamModel::of(m);
  const std::size_t s = 100;
  const RunResult r = run_alg(m, "gather/hybrid(4x4)", s);
  const Time tree = h.b(2, 2, s, 4, 15) + h.lambda_hop * (3 + 3 + 4);
  EXPECT_EQ(r.makespan, tree + h.b(2, 1, s, 1, 16) + h.lambda_hop * 2);
  EXPECT_EQ(h.eq10_hybrid_scatter(4, 4, s), h.b(1, 2, s, 1, 16) + h.lambda_hop + h.b(2, 2, s, 4, 15) + h.lambda_hop * 6);
}

TEST(HpamAlgorithms, SeveralLevelOneProcessorsBroadcastToBothLevels) {
  // Section 3.2: the source (0,0)_1, two r2 x c2/2 sub-meshes in level 2.
  for (const char* spec : {"hpam:2x2/4x4,Q=2", "hpam:4x4/16x16,Q=8", "hpam:1x2/2x4", "hpam:2x4/4x8,Q=32"}) {
    const Machine m = parse_machine(spec);
    const Hpam& t = *as_hpam(m);
    const std::string name = fmt::format("bcast/hybrid({}x{})", t.rows(2), t.cols(2) / 2);
    SCOPED_TRACE(fmt::format("{} {}", spec, name));
    RunResult r;
    ASSERT_NO_THROW(r = run_alg(m, name, 100));
    EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(m.nodes() - 1));
  }
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "bcast/hybrid(2x2)", 8), RunError);  // not r2 x c2/2
  EXPECT_THROW(run_alg(parse_machine("hpam:2x1/4x4"), "bcast/hybrid(4x2)", 8), RunError);  // c1 = 1
}

TEST(HpamTimes, SeveralLevelOneProcessorsBroadcastIsEq7PlusHops) {
  // hpam:2x2/8x8, Q = 8, S = 100. The critical path: (0,0)_1 -> (0,1)_1 (1 hop), (0,1)_1 ->
  // (0,4)_2 (r1 = 2 hops), then the 8x4 tree of level 2's right half (lg 8 + lg 4 = 5 steps,
  // 7 + 3 hops). Each message also takes its ejection channel: 1 + 2 + 10 hops + 7 ejections.
  // Eq. 7: A11 + Lambda c1/2 + A12 + Lambda r1 + max(A11 + Lambda/2 (2 + 0),
  // 5 A22 + Lambda/2 (12 + 6)) = A11 + A12 + 5 A22 + 12 Lambda: the emulation's 20 Lambda is 7
  // ejections and one more tree hop (the halving tree moves 7 + 3, eq. 7's term charges 9) more.
  const Machine m = parse_machine("hpam:2x2/8x8,Q=8");
  const HpamModel h = HpamModel::of(m);
  const std::size_t s = 100;
  const RunResult r = run_alg(m, "bcast/hybrid(8x4)", s);
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  EXPECT_EQ(r.makespan, h.a(1, 1, s) + h.a(1, 2, s) + 5 * h.a(2, 2, s) + 20 * h.lambda_hop);
  EXPECT_EQ(h.eq7_hybrid_bcast_multi(s, true), h.a(1, 1, s) + h.a(1, 2, s) + 5 * h.a(2, 2, s) + 12 * h.lambda_hop);
  EXPECT_EQ(r.makespan - h.eq7_hybrid_bcast_multi(s, true), (7 + 1) * h.lambda_hop);
}

TEST(HpamAlgorithms, Section42ScatterAndGatherOfLevelTwoDeliverInBothCases) {
  // Case a (q2 <= f2) and case b (q2 > f2) on several level-1 shapes.
  const Shape shapes[] = {{"hpam:2x2/4x4,Q=2", {"1x1", "2x2", "4x1", "2x4", "4x4"}},
                          {"hpam:4x4/16x16,Q=8", {"4x4", "16x2", "2x8", "16x16"}},
                          {"hpam:1x2/2x8", {"1x1", "2x4", "1x8"}},
                          {"hpam:1x1/4x4", {"2x2"}}};
  run_every_shape(shapes, {"scatter/hybrid-level2({})", "gather/hybrid-level2({})"}, {0, 3, 200},
                  [](const Machine& m, const std::string& sub, const RunResult& r) {
                    // Every level-2 processor sends or receives exactly one message; so do the row
                    // processors of the partial scatter other than the source.
                    const Hpam& t = *as_hpam(m);
                    const int q2 = std::stoi(sub.substr(sub.find('x') + 1));
                    const int row = std::min(t.cols(1), t.cols(2) / q2);
                    EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(t.rows(2) * t.cols(2) + row - 1));
                  });
}

TEST(HpamAlgorithms, Section42ScatterToBothLevelsDeliversEveryBlock) {
  // Equal final sizes in both levels; q2 <= f2 (case a), as the paper's search found best.
  const Shape shapes[] = {{"hpam:2x2/4x4,Q=2", {"1x1", "2x2", "4x1", "4x2"}},
                          {"hpam:4x4/16x16,Q=8", {"4x4", "16x2", "1x1"}},
                          {"hpam:1x2/2x8", {"1x1", "2x4"}},
                          {"hpam:1x1/4x4", {"2x2", "4x4"}}};
  run_every_shape(shapes, {"scatter/hybrid-both({})"}, {0, 5, 120}, one_message_each);
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "scatter/hybrid-both(2x4)", 8), RunError);  // q2 > f2
}

TEST(HpamTimes, Section42ScatterCaseAIsEq12MinusPipeliningPlusHops) {
  // hpam:2x2/4x4, Q = 2, S = 100, 2x2 sub-meshes (q2 = f2 = 2: case a). Critical path:
  // (0,0)_1 gives (0,1)_1 the r2 f2 S = 800 bytes of columns 2-3 (1 hop); (0,1)_1 sends 400 bytes
  // to (2,2)_2 (4 hops), then to (0,2)_2 (2 hops), whose 2x2 tree scatter is last (2 steps, 2 hops).
  const Machine m = buffered("hpam:2x2/4x4,Q=2");
  const HpamModel h = HpamModel::of(m);
  const RunResult r = run_alg(m, "scatter/hybrid-level2(2x2)", 100);
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  const Time u12 = inter_send(h, 400), recv2 = inter_recv(h, 400);
  const Time emulated = h.b(1, 1, 100, 1, 8) + h.lambda_hop * 2 + 2 * u12 + recv2 + h.lambda_hop * 3 + h.b(2, 2, 100, 2, 3) +
                        h.lambda_hop * 4;
  EXPECT_EQ(r.makespan, emulated);
  // Eq. 12: B11(1, 8) + Lambda/2 * 2 + 2 [B12(1, 4) + Lambda (2 + 2/4)] + B22(2, 3) + Lambda/2 * 4.
  EXPECT_EQ(h.eq12_13_hybrid_scatter_multi(2, 2, 100),
            h.b(1, 1, 100, 1, 8) + h.lambda_hop + 2 * h.b(1, 2, 100, 1, 4) + 5 * h.lambda_hop + h.b(2, 2, 100, 2, 3) + 2 * h.lambda_hop);
  // The difference: the second inter-level message's receive overlaps (term a of the header);
  // eq. 12 charges Lambda (1 + 5 + 2) hops, the critical path takes 2 + 3 + 4 (ejections included).
  EXPECT_EQ(h.eq12_13_hybrid_scatter_multi(2, 2, 100) - r.makespan, recv2 + (8 - 9) * h.lambda_hop);
}

TEST(HpamModelTest, Eq5MatchesTheTermsOfTable1ByHand) {
  // hpam:1x1/4x4, Q = 2, S = 100, p2 x q2 = 4x2: Gamma_12 = 2 + 4 = 6 us, Omega_12 = 0.01 + 0.01 +
  // 0.02 = 0.04 us/B, A_12 = 10 us; Gamma_22 = 8 us, Omega_22 = 0.05 us/B, A_22 = 13 us.
  // Eq. 5: 2 [10 + 0.01 (1 + 0)] + (2 + 1) 13 + 0.005 (6 + 2) = 20.02 + 39 + 0.04 = 59.06 us.
  const HpamModel h = HpamModel::of(parse_machine("hpam:1x1/4x4,Q=2"));
  EXPECT_EQ(h.a(1, 2, 100), microseconds(10));
  EXPECT_EQ(h.a(2, 2, 100), microseconds(13));
  EXPECT_EQ(h.eq5_hybrid_bcast(4, 2, 100), nanoseconds(59'060));
  // Eq. 4 for the 4x4 level 2 alone: 4 * 13 + 0.005 * 12 = 52.06 us.
  EXPECT_EQ(h.eq4_tree_bcast(2, 4, 4, 100), nanoseconds(52'060));
  // Eq. 9 with S = 10: 4 * 8 + 15 * 10 * 0.05 + 0.06 = 39.56 us.
  EXPECT_EQ(h.eq9_tree_scatter(2, 4, 4, 10), nanoseconds(39'560));
}

// ---- Inter-level multicast hardware (hpam:...,multicast; docs/model.md 2.11) ----

TEST(HpamMulticast, DeliverTheRightBytesOnSeveralLevelShapes) {
  const Shape shapes[] = {{"hpam:1x1/4x4,Q=2,multicast", {"1x1", "2x1", "4x1"}},
                          {"hpam:1x1/8x4,Q=8,multicast", {"1x1", "4x1", "8x1"}},
                          {"hpam:1x1/2x8,Q=32,multicast", {"1x1", "2x1"}},
                          {"hpam:1x1/1x2,multicast", {"1x1"}},
                          {"hpam:1x1/4x1,multicast", {"2x1"}}};
  // Every level-2 processor receives exactly one message (a multicast delivers one per branch).
  run_every_shape(shapes, {"bcast/multicast({})", "scatter/multicast({})"}, {0, 1, 300},
                  [](const Machine& m, const std::string& sub, const RunResult& r) {
                    one_message_each(m, sub, r);
                    EXPECT_EQ(r.stats.blocked_headers, 0u);
                  });
  // Section 3.2: several level-1 processors, source (0,0)_1, both levels.
  const Shape multi[] = {{"hpam:2x2/4x4,Q=2,multicast", {"1x1", "2x1", "4x1"}},
                         {"hpam:4x4/16x16,Q=8,multicast", {"8x1", "2x1"}},
                         {"hpam:1x2/2x4,multicast", {"1x1", "2x1"}},
                         {"hpam:2x4/4x8,Q=32,multicast", {"2x1"}},
                         {"hpam:2x1/4x2,multicast", {"2x1"}}};
  run_every_shape(multi, {"bcast/multicast({})"}, {0, 7, 200}, one_message_each);
}

TEST(HpamMulticast, BadArgumentsAreUsageErrors) {
  EXPECT_THROW(run_alg(parse_machine("hpam:1x1/4x4"), "bcast/multicast(2x1)", 8), RunError);             // no hardware
  EXPECT_THROW(run_alg(parse_machine("hpam:1x1/4x4,multicast"), "bcast/multicast(2x2)", 8), RunError);   // q2 != 1
  EXPECT_THROW(run_alg(parse_machine("hpam:1x1/4x4,multicast"), "scatter/multicast(8x1)", 8), RunError); // does not tile
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4,multicast"), "scatter/multicast(2x1)", 8), RunError); // 4.1 needs 1x1
  EXPECT_THROW(run_alg(parse_machine("mesh:4x4"), "bcast/multicast(2x1)", 8), RunError);
}

TEST(HpamTimes, MulticastBroadcastIsEq6MinusPipeliningAndHops) {
  // Eq. 6: (r2/p2) [A12 + Lambda (1 + (r2 - p2)/2)] + l_p2 A22 + Lambda/2 l_p2^+. The same three
  // terms as the hybrid broadcast's, with r2/p2 messages: (a) the multicasts' receives overlap the
  // later multicasts, (b) only the last one's hops (row 0: 1 + its ejection) are on the critical
  // path, (c) the p2 x 1 tree moves p2 - 1 hops plus lg p2 ejections.
  for (const char* spec : {"hpam:1x1/4x4,Q=2,multicast", "hpam:1x1/8x8,Q=8,multicast", "hpam:1x1/16x16,Q=32,multicast"}) {
    const Machine m = buffered(spec);
    const HpamModel h = HpamModel::of(m);
    const Hpam& t = *as_hpam(m);
    for (int p = 1; p <= h.r2; p *= 2)
      for (std::size_t s : {std::size_t{0}, std::size_t{1000}}) {
        SCOPED_TRACE(fmt::format("{} {}x1 S={}", spec, p, s));
        const RunResult r = run_alg(m, fmt::format("bcast/multicast({}x1)", p), s);
        EXPECT_EQ(r.makespan, emulated_hybrid(h, t, p, 1, s, false, true));
        EXPECT_EQ(r.stats.blocked_headers, 0u);  // contention absent
        const long long n = h.r2 / p;
        EXPECT_EQ(r.makespan, h.eq6_multicast_bcast(p, s) - pipelining_term(h, n, static_cast<Time>(s)) -
                                  inter_hops_term(h, n, p) - tree_hops_term(h, p, 1));
      }
  }
}

TEST(HpamTimes, MulticastScatterIsEq11MinusPipeliningAndHops) {
  // Eq. 11: (r2/p2) [B12(1, p2 c2) + Lambda] + B22(l_p2, p2 - 1) + Lambda/2 l_p2^+. Each multicast
  // carries a band's p2 c2 blocks to all its roots. (a) as above with p2 c2 S bytes received;
  // (b) eq. 11 charges each message one Lambda, the last one's 1 hop + ejection is on the path;
  // (c) the tree's hops.
  for (const char* spec : {"hpam:1x1/4x4,Q=2,multicast", "hpam:1x1/8x8,Q=8,multicast"}) {
    const Machine m = buffered(spec);
    const HpamModel h = HpamModel::of(m);
    const Hpam& t = *as_hpam(m);
    for (int p = 1; p <= h.r2; p *= 2)
      for (std::size_t s : {std::size_t{0}, std::size_t{100}}) {
        SCOPED_TRACE(fmt::format("{} {}x1 S={}", spec, p, s));
        const RunResult r = run_alg(m, fmt::format("scatter/multicast({}x1)", p), s);
        EXPECT_EQ(r.makespan, emulated_hybrid(h, t, p, 1, s, true, true));
        EXPECT_EQ(r.stats.blocked_headers, 0u);
        const long long n = h.r2 / p;
        const Time bytes = static_cast<Time>(p * h.c2) * static_cast<Time>(s);  // a band's blocks
        const Time b_inter_hops = h.lambda_hop * n - h.lambda_hop * (1 + 1);      // one Lambda per message
        EXPECT_EQ(r.makespan, h.eq11_multicast_scatter(p, s) - pipelining_term(h, n, bytes) - b_inter_hops -
                                  tree_hops_term(h, p, 1));
      }
  }
}

TEST(HpamTimes, SeveralLevelOneProcessorsMulticastBroadcastIsEq8MinusPipeliningAndHops) {
  // hpam:2x2/8x8, Q = 8, S = 100, r2/2 x 1 = 4x1. Critical path: (0,0)_1 -> (0,1)_1 (1 hop + the
  // ejection: A11 + 2 Lambda); (0,1)_1 multicasts to row 4 (U_1 = C_send^1 + S (s_1 + b)), then
  // to row 0 (U_1 again; (0,1)_1 -> (1,1)_1 -> (0,k)_2: 2 hops + ejection), whose roots receive
  // (C_recv^2 + S r_2) and run the 4x1 tree (2 A22, 3 hops + 2 ejections).
  const Machine m = buffered("hpam:2x2/8x8,Q=8,multicast");
  const HpamModel h = HpamModel::of(m);
  const std::size_t s = 100;
  const RunResult r = run_alg(m, "bcast/multicast(4x1)", s);
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  const Time u1 = inter_send(h, static_cast<Time>(s)), recv2 = inter_recv(h, static_cast<Time>(s));
  EXPECT_EQ(r.makespan, h.a(1, 1, s) + 2 * h.lambda_hop + 2 * u1 + 3 * h.lambda_hop + recv2 + 2 * h.a(2, 2, s) + 5 * h.lambda_hop);
  // Eq. 8: l_c1 (A11 + Lambda/2 (l_c1 + 1)) + 2 [A12 + Lambda (r1 + r2/4)] + max(l_r1 A11 +
  // Lambda/2 l_r1^+, (l_r2 - 1) A22 + Lambda/2 l_r2^-) = A11 + Lambda + 2 A12 + 8 Lambda + 2 A22 + 3 Lambda.
  EXPECT_EQ(h.eq8_multicast_bcast_multi(s, true), h.a(1, 1, s) + 2 * h.a(1, 2, s) + 2 * h.a(2, 2, s) + 12 * h.lambda_hop);
  // 2 A12 = 2 (U_1 + C_recv^2 + S r_2): the first multicast's receive overlaps the second (a);
  // eq. 8 charges 12 hops, the critical path takes 2 + 3 + 5 = 10 (b, c).
  EXPECT_EQ(h.eq8_multicast_bcast_multi(s, true) - r.makespan, recv2 + 2 * h.lambda_hop);
}

TEST(HpamMulticast, Section42MulticastScatterDeliversOnSeveralShapes) {
  const Shape shapes[] = {{"hpam:2x2/4x4,Q=2,multicast", {"1x1", "2x1", "4x1"}},
                          {"hpam:4x4/16x16,Q=8,multicast", {"1x1", "4x1", "16x1"}},
                          {"hpam:1x2/2x8,multicast", {"1x1", "2x1"}},
                          {"hpam:2x4/4x4,multicast", {"2x1"}},
                          {"hpam:1x1/4x4,multicast", {"2x1"}}};
  run_every_shape(shapes, {"scatter/multicast-level2({})"}, {0, 3, 200},
                  [](const Machine& m, const std::string&, const RunResult& r) {
                    // Every level-2 processor receives one message; so does every row processor but the source.
                    const Hpam& t = *as_hpam(m);
                    EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(t.rows(2) * t.cols(2) + t.cols(1) - 1));
                  });
}

TEST(HpamTimes, Section42MulticastScatterIsEq14PlusEjections) {
  // hpam:2x2/4x4, Q = 2, S = 100, 4x1 (one band): (0,0)_1 gives (0,1)_1 the r2 f2 S = 800 bytes
  // of columns 2-3 (1 hop + ejection); (0,1)_1 multicasts them, the band's p2 f2 = 8 blocks, to
  // (0,2)_2 and (0,3)_2 (r1 = 2 hops + ejection); each scatters down its 4x1 sub-mesh (2 steps,
  // 3 hops + 2 ejections). One multicast: no pipelining term. Eq. 14 charges Lambda (l_c1^+/2 =
  // 1, r1 = 2, l_4^+/2 = 3) = 6 hops where the path takes 2 + 3 + 5 = 10.
  const Machine m = parse_machine("hpam:2x2/4x4,Q=2,multicast");
  const HpamModel h = HpamModel::of(m);
  const RunResult r = run_alg(m, "scatter/multicast-level2(4x1)", 100);
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  EXPECT_EQ(r.makespan, h.b(1, 1, 100, 1, 8) + h.b(1, 2, 100, 1, 8) + h.b(2, 2, 100, 2, 3) + 10 * h.lambda_hop);
  EXPECT_EQ(h.eq14_multicast_scatter_multi(4, 100), h.b(1, 1, 100, 1, 8) + h.b(1, 2, 100, 1, 8) + h.b(2, 2, 100, 2, 3) + 6 * h.lambda_hop);
}

TEST(HpamMulticast, Section42MulticastScatterToBothLevelsDeliversEveryBlock) {
  // The multicast does the inter-level transfer of scatter/hybrid-both (q2 = 1); the harness
  // checks every byte of both levels' blocks.
  const Shape shapes[] = {{"hpam:2x2/4x4,Q=2,multicast", {"1x1", "2x1", "4x1"}},
                          {"hpam:4x4/16x16,Q=8,multicast", {"1x1", "4x1", "16x1"}},
                          {"hpam:1x2/2x8,multicast", {"1x1", "2x1"}},
                          {"hpam:2x4/4x4,multicast", {"2x1"}},
                          {"hpam:1x1/4x4,multicast", {"2x1", "4x1"}}};
  // Each processor but the source receives one message (a multicast: one per branch).
  run_every_shape(shapes, {"scatter/multicast-both({})"}, {0, 5, 120}, one_message_each);
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "scatter/multicast-both(2x1)", 8), RunError);             // no hardware
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4,multicast"), "scatter/multicast-both(2x2)", 8), RunError);   // q2 != 1
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4,multicast"), "scatter/multicast-both(8x1)", 8), RunError);   // does not tile
  EXPECT_THROW(run_alg(parse_machine("mesh:4x4"), "scatter/multicast-both(2x1)", 8), RunError);
}

TEST(HpamTimes, Section42MulticastScatterToBothLevelsIsTheLevelTwoPathOfEq14) {
  // hpam:2x2/4x4, Q = 2, S = 100, 4x1: as in the level-2-only case (eq. 14's test below), but the
  // row's partial scatter carries r1 S + r2 f2 S = 1000 bytes to (0,1)_1, which multicasts the band's
  // 800 bytes first ("as early as possible") and only then scatters its level-1 column (100 bytes,
  // off the critical path: level 1 is Q times faster). Hops: 2 + 3 + 5, ejections included.
  const Machine m = parse_machine("hpam:2x2/4x4,Q=2,multicast");
  const HpamModel h = HpamModel::of(m);
  const RunResult r = run_alg(m, "scatter/multicast-both(4x1)", 100);
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  EXPECT_EQ(r.makespan, h.b(1, 1, 100, 1, 10) + h.b(1, 2, 100, 1, 8) + h.b(2, 2, 100, 2, 3) + 10 * h.lambda_hop);
  // The hybrid with 4x2 sub-meshes sends the same 800 bytes as one unicast message: same time.
  EXPECT_EQ(run_alg(m, "scatter/hybrid-both(4x2)", 100).makespan, r.makespan + (h.b(2, 2, 100, 3, 7) - h.b(2, 2, 100, 2, 3)) + 2 * h.lambda_hop);
  // both_levels_scatter, the paper's cost terms along these steps, has the same B terms; its hops are
  // eqs. 12 and 14's, l_c1^+/2 = 1 + r1 + (r2 - p2)/(2 p2) = 2 + l_p2^+/2 = 3, 6 against the route's
  // 10 (ejections included). Level 1's column scatter, eq. 9 on 2 x 1, is off the path here.
  EXPECT_EQ(h.both_levels_scatter(4, 1, true, 100, 100), r.makespan - 4 * h.lambda_hop);
  // The 4x2 hybrid: hops 1 + 2 + (l_4^+ + l_2^+)/2 = 7, against the route's 12.
  EXPECT_EQ(h.both_levels_scatter(4, 2, false, 100, 100),
            h.b(1, 1, 100, 1, 10) + h.b(1, 2, 100, 1, 8) + h.b(2, 2, 100, 3, 7) + 7 * h.lambda_hop);
  EXPECT_THROW(h.both_levels_scatter(4, 2, true, 100, 100), UsageError);   // a multicast's sub-mesh is one column wide
  EXPECT_THROW(h.both_levels_scatter(4, 4, false, 100, 100), UsageError);  // q2 > f2 = 2
}

TEST(HpamAlgorithms, OnThePresetAProcessorSendsOrReceivesOneMessageAtATime) {
  // Section 2.1: "a processor can either send or receive one message at a time". A message is in
  // progress at both its ends from its send's start to its receive's end (with held sends the send
  // completes then; a multicast, at its sender, when its last branch is received). At every
  // processor the messages it sends or receives never overlap, in every broadcast and scatter of
  // sections 3 and 4 (the gather's roots contend for their row processor: t_cont, section 2.4).
  // The buffered interface breaks it: a source's next send starts while its previous message is
  // still being received.
  const std::pair<const char*, std::vector<const char*>> runs[] = {
      {"hpam:1x1/4x4,Q=8,multicast",
       {"bcast/brute-force", "bcast/hybrid(4x2)", "bcast/multicast(2x1)", "scatter/hybrid(2x2)",
        "scatter/multicast(2x1)"}},
      {"hpam:2x2/8x8,Q=8,multicast",
       {"bcast/hybrid(8x4)", "bcast/multicast(4x1)", "scatter/hybrid-level2(2x2)", "scatter/multicast-level2(2x1)",
        "scatter/hybrid-both(2x2)", "scatter/multicast-both(2x1)", "scatter/multicast-both-qs(4x1)"}}};
  const auto overlaps = [](const Machine& m, const char* name) {
    RunOptions o;
    o.trace_file = testing::TempDir() + "/hpam_one_message_at_a_time.json";
    const auto& alg = algorithms::find(name);
    const algorithms::Args args{64, 0, true};
    run(
        m, [&](Proc& p) { alg.program(p, args); }, o);
    const ts_test::CheckedTrace t = ts_test::check_trace(o.trace_file);
    std::remove(o.trace_file.c_str());
    std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> lives;  // by trace thread (VP)
    // A multicast is one message of its sender (one send, section 3.1's replication), with a flow to
    // each of its destinations: the sender's message lasts until its last branch is received.
    std::map<const ts_test::TraceSlice*, std::int64_t> sent;  // send slice -> its last receive's end
    for (const auto& [id, f] : t.flows) {
      if (!f.from || !f.to) continue;
      sent[f.from] = std::max(sent[f.from], f.to->end);
      lives[f.to->tid].emplace_back(f.from->start, f.to->end);
    }
    for (const auto& [send, end] : sent) lives[send->tid].emplace_back(send->start, end);
    int n = 0;
    for (auto& [tid, v] : lives) {
      std::sort(v.begin(), v.end());
      for (std::size_t i = 1; i < v.size(); ++i) n += v[i].first < v[i - 1].second;
    }
    return n;
  };
  for (const auto& [spec, names] : runs)
    for (const char* name : names) {
      SCOPED_TRACE(fmt::format("{} on {}", name, spec));
      EXPECT_EQ(overlaps(parse_machine(spec), name), 0);
    }
  EXPECT_GT(overlaps(buffered("hpam:1x1/4x4,Q=8"), "bcast/brute-force"), 0);
  // The gather's 16 roots send to the level-1 processor at once: their messages overlap there (its
  // receives do not), which is why it is faster than eq. 10 read backwards (docs/paper001.md).
  EXPECT_GT(overlaps(parse_machine("hpam:1x1/4x4,Q=8"), "gather/hybrid(1x1)"), 0);
}

TEST(HpamAlgorithms, Section42BothLevelsScattersAreDeterministicUnderPerturbation) {
  // Same trace, makespan and blocked time whatever the host does (fibers or threads, random delays).
  for (const char* name : {"scatter/hybrid-both(2x2)", "scatter/multicast-both(2x1)", "scatter/multicast-both-qs(2x1)"}) {
    SCOPED_TRACE(name);
    const Machine m = parse_machine("hpam:2x2/8x8,Q=8,multicast");
    const auto& alg = algorithms::find(name);
    const algorithms::Args args{64, 0, true};
    const RunResult ref = ts_test::expect_host_independent(m, [&](Proc& p) { alg.program(p, args); }, 4, 40);
    EXPECT_EQ(ref.stats.messages, static_cast<std::uint64_t>(m.nodes() - 1));
  }
}

TEST(HpamAlgorithms, Section42ScatterWithQTimesTheBytesInLevelOneDeliversEveryBlock) {
  // The paper's second scenario: Q S bytes for each level-1 processor, S for each level-2 one. The
  // harness sizes level 1's receive buffers Q S and checks every byte of both levels.
  const Shape shapes[] = {{"hpam:2x2/4x4,Q=2,multicast", {"1x1", "2x1", "4x1", "4x2"}},
                          {"hpam:4x4/16x16,Q=8,multicast", {"1x1", "4x1", "16x4"}},
                          {"hpam:1x2/2x8,Q=32,multicast", {"1x1", "2x4"}},
                          {"hpam:1x1/4x4,Q=3,multicast", {"2x1", "4x4"}}};
  run_every_shape(shapes, {"scatter/hybrid-both-qs({})"}, {0, 5, 120}, one_message_each);
  // The same shapes' p2 x 1 sub-meshes, the multicast's.
  const Shape columns[] = {{"hpam:2x2/4x4,Q=2,multicast", {"1x1", "2x1", "4x1"}},
                           {"hpam:4x4/16x16,Q=8,multicast", {"1x1", "4x1"}},
                           {"hpam:1x2/2x8,Q=32,multicast", {"1x1"}},
                           {"hpam:1x1/4x4,Q=3,multicast", {"2x1"}}};
  run_every_shape(columns, {"scatter/multicast-both-qs({})"}, {0, 5, 120}, one_message_each);
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "scatter/hybrid-both-qs(2x4)", 8), RunError);     // q2 > f2
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "scatter/multicast-both-qs(2x1)", 8), RunError);  // no hardware
  EXPECT_THROW(run_alg(parse_machine("hpam:2x2/4x4"), "scatter/hybrid-both-qs(8x1)", 8), RunError);     // does not tile
}

TEST(HpamTimes, Section42ScatterWithQTimesTheBytesInLevelOneOnlyLengthensTheRowStep) {
  // hpam:2x2/4x4, Q = 2, S = 100, 4x1, multicast: as in the equal-size test above, but the row's
  // partial scatter carries r1 Q S + r2 f2 S = 400 + 800 bytes; the inter-level transfer and level
  // 2's trees are unchanged, and level 1's column scatter (200 bytes) stays off the critical path.
  const Machine m = parse_machine("hpam:2x2/4x4,Q=2,multicast");
  const HpamModel h = HpamModel::of(m);
  EXPECT_EQ(h.q_ratio(), 2);
  const RunResult r = run_alg(m, "scatter/multicast-both-qs(4x1)", 100);
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  EXPECT_EQ(r.makespan, h.b(1, 1, 100, 1, 12) + h.b(1, 2, 100, 1, 8) + h.b(2, 2, 100, 2, 3) + 10 * h.lambda_hop);
  EXPECT_EQ(r.makespan - run_alg(m, "scatter/multicast-both(4x1)", 100).makespan, 200 * h.omega(1, 1));
  EXPECT_EQ(h.both_levels_scatter(4, 1, true, 100, 200), r.makespan - 4 * h.lambda_hop);  // the hops as above
}

TEST(HpamTimes, Section42QTimesTheBytesInLevelOneMakesLevelOneCriticalAndGrowsTheHybridOptimum) {
  // 4x4/16x16, Q = 8, S = 256 (paper001 both42 --qs): with equal sizes the hybrid's 1x1 beats 1x2
  // and the last processor to finish is in level 2; with Q S bytes in level 1 the row processor's
  // 64 inter-level sends (1x1) delay its level-1 column scatter, now Q times longer, which ends
  // last, and 1x2 (32 sends) wins: the larger sub-mesh "compensates" (section 4.2). On the buffered
  // machine: with held sends (the preset) the 64 inter-level sends of 1x1 make level 1 critical
  // already at equal sizes, and 1x2 wins there too.
  const Machine m = buffered("hpam:4x4/16x16,Q=8,multicast");
  const Hpam& t = *as_hpam(m);
  auto last_level = [&](const RunResult& r) {
    const auto it = std::max_element(r.finish_time.begin(), r.finish_time.end());
    return t.pos(static_cast<int>(it - r.finish_time.begin())).level;
  };
  const RunResult eq1 = run_alg(m, "scatter/hybrid-both(1x1)", 256), eq2 = run_alg(m, "scatter/hybrid-both(1x2)", 256);
  const RunResult qs1 = run_alg(m, "scatter/hybrid-both-qs(1x1)", 256), qs2 = run_alg(m, "scatter/hybrid-both-qs(1x2)", 256);
  EXPECT_LT(eq1.makespan, eq2.makespan);
  EXPECT_EQ(last_level(eq1), 2);
  EXPECT_GT(qs1.makespan, qs2.makespan);
  EXPECT_EQ(last_level(qs1), 1);
}
