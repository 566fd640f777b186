// All-to-one (paper 000, section 4): every gather algorithm brings each processor's block to the
// destination on square, non-square, 1-D and non-power-of-two meshes, to a corner and to a
// processor inside the mesh, including logp-lev-rec(gamma) with gamma < 0.5, where the partition
// around the destination of section 4 happens. The harness checks every byte at the destination
// and throws on wrong data, so a run that completes has delivered everything.
#include <gtest/gtest.h>

#include "algorithms/registry.hpp"
#include "algorithms/submachine.hpp"
#include "support/rooted.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

using Case = ts_test::RootedCase;
using ts_test::inner_root;

class GatherDelivers : public testing::TestWithParam<Case> {};

TEST_P(GatherDelivers, EveryBlockReachesTheDestinationInOneMessagePerSender) {
  const Case c = GetParam();
  const Machine m = parse_machine(c.machine);
  const auto& alg = algorithms::find(c.algorithm);
  const int root = c.root < 0 ? inner_root(m) : c.root;
  RunResult r;
  ASSERT_NO_THROW(r = run(m, [&](Proc& p) { alg.program(p, algorithms::Args{c.size, root, true}); }));
  // Every processor but the destination sends exactly one message: its block alone, or the
  // combined blocks of the submachine it leads.
  EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(m.nodes() - 1));
  for (int v = 0; v < m.nodes(); ++v) EXPECT_EQ(r.sent[static_cast<std::size_t>(v)], v == root ? 0u : 1u) << "rank " << v;
}

std::vector<Case> cases() {
  std::vector<Case> out = ts_test::mesh_cases({"gather/1-lev-dir", "gather/2-lev-rec", "gather/3-lev-sq",
                                               "gather/logp-lev-sq", "gather/logp-lev-rec", "gather/logp-lev-rec(0.3)",
                                               "gather/logp-lev-rec(0.5)", "gather/logp-lev-rec(0.85)"});
  // Section 4's partition around the destination: gamma p < d < (1 - gamma) p in snake order.
  for (const char* alg : {"gather/logp-lev-rec(0.1)", "gather/logp-lev-rec(0.25)", "gather/logp-lev-rec(0.45)"}) {
    out.push_back({alg, "mesh:8x8", 600, 35});
    out.push_back({alg, "mesh:16x16", 16, 120});
  }
  out.push_back({"gather/2-lev-rec", "torus:3x4", 700, 5});
  // A bounded receive buffer that holds every long message bound for the destination at once
  // (14 blocks of 900 B); a smaller one can deadlock the network, as docs/model.md 2.7 describes.
  out.push_back({"gather/logp-lev-rec", "mesh:3x5,ports=all,buffer=16384", 900, 14});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Meshes, GatherDelivers, testing::ValuesIn(cases()), ts_test::case_name);

// Section 4: "In this situation (i.e., gamma p < d < (1 - gamma)p), Algorithm logp-lev-rec(gamma)
// uses d to partition into submachines": processors 0 .. d-1 gather to d-1, the rest keep d.
// "Such a partition around the destination processor occurs at most once": afterwards d is the
// first processor of its run.
TEST(GatherStructure, SmallGammaPartitionsAroundTheDestinationOnce) {
  const auto c = algorithms::gamma_cut(64, 35, 0.25);
  EXPECT_EQ(c.other_lo, 0);
  EXPECT_EQ(c.other_hi, 35);
  EXPECT_EQ(c.leader, 34);
  EXPECT_EQ(c.keep_lo, 35);
  EXPECT_EQ(c.keep_hi, 64);
  int n = c.keep_hi - c.keep_lo, key = 0, around = 0;
  while (n > 1) {
    const auto d = algorithms::gamma_cut(n, key, 0.25);
    if (d.keep_lo == key && d.other_hi == key && key > 0) ++around;
    key -= d.keep_lo;
    n = d.keep_hi - d.keep_lo;
  }
  EXPECT_EQ(around, 0);
}

TEST(GatherCatalog, GammaOutsideTheFamilysRangeIsAUsageErrorNamingIt) {
  EXPECT_EQ(algorithms::find("gather/logp-lev-rec(0.2)").name, "gather/logp-lev-rec(0.2)");
  try {
    algorithms::find("gather/logp-lev-rec(1.5)");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("0 < gamma < 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(algorithms::find("gather/logp-lev-rec(0)"), UsageError);
  EXPECT_EQ(algorithms::select("gather/all").size(), 5u);
}

}  // namespace
