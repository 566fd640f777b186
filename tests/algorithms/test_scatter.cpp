// One-to-all (paper 000, section 3, Figure 1): every scatter algorithm delivers each processor its
// block from the source on square, non-square, 1-D and non-power-of-two meshes, from a corner and
// from a processor inside the mesh. The harness checks every received byte and throws on wrong
// data, so a run that completes has delivered everything. Section 3.2's counts of the source's
// message set-ups on a 16 x 16 mesh (the text around Figure 5) are checked exactly.
#include <gtest/gtest.h>

#include "algorithms/registry.hpp"
#include "algorithms/scatter.hpp"
#include "algorithms/submachine.hpp"
#include "support/model.hpp"
#include "support/rooted.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

using Case = ts_test::RootedCase;
using ts_test::inner_root;

class ScatterDelivers : public testing::TestWithParam<Case> {};

TEST_P(ScatterDelivers, EveryProcessorGetsItsBlockInOneMessage) {
  const Case c = GetParam();
  const Machine m = parse_machine(c.machine);
  const auto& alg = algorithms::find(c.algorithm);
  const int root = c.root < 0 ? inner_root(m) : c.root;
  const algorithms::Args args{c.size, root, true};
  RunResult r;
  ASSERT_NO_THROW(r = run(m, [&](Proc& p) { alg.program(p, args); }));
  // Every processor but the source receives exactly one message: its block alone or a long
  // message holding the blocks of its submachine (or, for the broadcasts, of everyone).
  EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(m.nodes() - 1));
}

std::vector<Case> cases() {
  std::vector<Case> out = ts_test::mesh_cases(
      {"scatter/1-lev-dir", "scatter/1-lev-sys-br", "scatter/1-lev-our-br", "scatter/2-lev-rec", "scatter/3-lev-sq",
       "scatter/logp-lev-sq", "scatter/logp-lev-rec", "scatter/logp-lev-rec(0.5)", "scatter/logp-lev-rec(0.9)"});
  out.push_back({"scatter/2-lev-rec", "torus:3x4", 700, 5});
  out.push_back({"scatter/logp-lev-rec", "mesh:3x5,ports=all,buffer=4096", 900, 14});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Meshes, ScatterDelivers, testing::ValuesIn(cases()), ts_test::case_name);

// Section 3.2, Figure 5: "For a 256-processor machine, Algorithm logp-lev-sq experiences 8,
// logp-lev-rec(0.75) experiences 15, 3-lev-sq 21, 2-lev-rec 30, and 1-lev-dir experiences 255
// message set-up costs", with P_0 as the source. The source's own sends are 8, 15, 15 + 3 + 3,
// 15 + 15 and 255; the broadcasts add 2 (the system broadcast's corner source starts its row and
// its column) and log2(256) = 8 (binomial heap).
TEST(ScatterStructure, SourceMessageSetUpsOn16x16MatchSection3_2) {
  const Machine m = parse_machine("mesh:16x16");
  const std::pair<const char*, std::uint64_t> expected[] = {
      {"scatter/logp-lev-sq", 8}, {"scatter/logp-lev-rec", 15}, {"scatter/3-lev-sq", 21},   {"scatter/2-lev-rec", 30},
      {"scatter/1-lev-dir", 255}, {"scatter/1-lev-sys-br", 2}, {"scatter/1-lev-our-br", 8}};
  for (const auto& [name, setups] : expected) {
    const auto& alg = algorithms::find(name);
    const RunResult r = run(m, [&](Proc& p) { alg.program(p, algorithms::Args{16, 0, true}); });
    EXPECT_EQ(r.sent[0], setups) << name;
  }
}

// The message combining shows in the sizes: 2-lev-rec's source sends 15 long messages of a row's
// 16 blocks and 15 single blocks in its row, every other row's leader 15 single blocks.
TEST(ScatterStructure, TwoLevRecSendsEveryBlockOnceFromTheSourceAndOnceFromALeader) {
  const Machine m = parse_machine("mesh:16x16");
  const auto& alg = algorithms::find("scatter/2-lev-rec");
  const RunResult r = run(m, [&](Proc& p) { alg.program(p, algorithms::Args{16, 0, true}); });
  EXPECT_EQ(r.stats.payload_bytes, (15u * 16u + 16u * 15u) * 16u);
  for (int row = 1; row < 16; ++row) EXPECT_EQ(r.sent[static_cast<std::size_t>(row * 16)], 15u) << "leader of row " << row;
}

// The system broadcast (section 3.2) forwards the whole long message store-and-forward along the
// source's row, then along every column: on 2 x 3 from P0 the last node, (1,2), is three forwards
// deep (0 -> 1 -> 2 -> 5), each the first send of its sender, so it finishes at exactly three
// contention-free neighbour transfers of the (p-1) L bytes. Every node receives exactly once.
TEST(ScatterStructure, SystemBroadcastIsARowThenColumnStoreAndForwardTree) {
  const Machine m = ts_test::prime_machine("mesh:2x3");
  const ts_test::Model model{m};
  const std::size_t L = 16, long_msg = 5 * L;  // 80 bytes: two packets of 64
  const RunResult r = run(m, [&](Proc& p) {
    std::vector<std::byte> send(p.rank() == 0 ? 6 * L : 0), recv(L);
    algorithms::scatter_1lev_sys_br(p, p.world(), 0, send, recv, L);
  });
  const Time hop = model.send_cost(long_msg) + 2 * model.hop() + model.wire_total(long_msg) * model.b(1) + model.recv_cost(long_msg);
  EXPECT_EQ(r.finish_time[5], 3 * hop);
  // (0,2) forwards to (1,2) and finishes when that message has left its injection channel.
  EXPECT_EQ(r.finish_time[2], 2 * hop + model.send_return_cf(model.send_cost(long_msg), 1, long_msg));
  EXPECT_EQ(r.stats.messages, 5u);
  EXPECT_EQ(r.sent[0], 2u);  // to (0,1), then to (1,0)
  EXPECT_EQ(r.sent[1], 2u);  // to (0,2), then to (1,1)
  EXPECT_EQ(r.sent[3], 0u);
}

// The system broadcast's many concurrent forwards give one trace whatever the host does: fibers,
// threads, and threads with seeded host delays.
TEST(ScatterStructure, SystemBroadcastTraceIsTheSameUnderHostPerturbation) {
  const Machine m = parse_machine("delta:4x8");
  const auto& alg = algorithms::find("scatter/1-lev-sys-br");
  auto go = [&](Execution e, std::uint64_t perturb) {
    RunOptions o;
    o.execution = e;
    o.perturb = perturb;
    return run(m, [&](Proc& p) { alg.program(p, algorithms::Args{100, 5, true}); }, o).trace_hash;
  };
  const auto h = go(Execution::fibers, 0);
  EXPECT_EQ(h, go(Execution::threads, 0));
  EXPECT_EQ(h, go(Execution::threads, 7));
}

TEST(ScatterStructure, LogpLevRecSplitsSnakeRunsAroundTheKey) {
  // 256 processors, gamma 0.75, key first: the first 192 keep the key, the leader is processor 192.
  const auto c = algorithms::gamma_cut(256, 0, 0.75);
  EXPECT_EQ(c.keep_lo, 0);
  EXPECT_EQ(c.keep_hi, 192);
  EXPECT_EQ(c.leader, 192);
  // Key near the end: the last gamma p processors keep it, the leader sits next to the cut.
  const auto d = algorithms::gamma_cut(100, 90, 0.75);
  EXPECT_EQ(d.keep_lo, 25);
  EXPECT_EQ(d.other_hi, 25);
  EXPECT_EQ(d.leader, 24);
}

TEST(ScatterStructure, SquareSubmachinesOf16x16Are16Blocks4x4) {
  const auto squares = algorithms::split_squares({0, 0, 16, 16});
  ASSERT_EQ(squares.size(), 16u);
  for (const auto& s : squares) EXPECT_EQ(s.rows * s.cols, 16);
  const auto halves = algorithms::split_halves({0, 0, 16, 16});
  EXPECT_EQ(halves[0].cols, 8);  // a vertical cut first, then horizontal
  EXPECT_EQ(algorithms::split_halves(halves[0])[0].rows, 8);
}

// An algorithm's group need not be the whole machine: a group that is not the machine's mesh in
// row-major order is treated as a linear array of its ranks.
TEST(ScatterGroups, ScatterOverASubgroupDeliversEveryBlock) {
  const Machine m = parse_machine("mesh:4x4");
  const std::size_t L = 300;
  run(m, [&](Proc& p) {
    if (p.rank() % 3 != 0) return;
    const Group g = p.group({15, 12, 9, 6, 3, 0});
    const int me = g.local_rank(p.rank()), root = 2;
    std::vector<std::byte> send(me == root ? 6 * L : 0), recv(L);
    if (me == root)
      for (int d = 0; d < 6; ++d) std::fill_n(send.begin() + d * static_cast<long>(L), L, std::byte(d + 1));
    algorithms::scatter_logp_lev_sq(p, g, root, send, recv, L);
    for (std::byte b : recv)
      if (b != std::byte(me + 1)) throw std::runtime_error("wrong block");
  });
}

TEST(ScatterCatalog, GammaOutsideTheFamilysRangeIsAUsageErrorNamingIt) {
  EXPECT_EQ(algorithms::find("scatter/logp-lev-rec(0.6)").name, "scatter/logp-lev-rec(0.6)");
  try {
    algorithms::find("scatter/logp-lev-rec(0.4)");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("0.5 <= gamma < 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(algorithms::find("scatter/logp-lev-rec(1)"), UsageError);
  EXPECT_THROW(algorithms::find("scatter/logp-lev-rec(x)"), UsageError);
  EXPECT_EQ(algorithms::select("scatter/all").size(), 7u);
}

}  // namespace
