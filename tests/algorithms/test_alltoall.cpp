// All-to-all personalized communication (paper 000, section 5): 1-lev-dir and 1-lev-xor deliver
// every block to its place on many mesh shapes, including non-square and non-power-of-two ones.
// The harness checks every received byte and throws on wrong data, so a run that completes has
// delivered everything.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

struct Case {
  std::string algorithm, machine;
  std::size_t size;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.algorithm << " on " << c.machine << ", " << c.size << " B"; }
};

class AlltoallDelivers : public testing::TestWithParam<Case> {};

TEST_P(AlltoallDelivers, EveryBlockArrivesIntact) {
  const Case c = GetParam();
  const Machine m = parse_machine(c.machine);
  const auto& alg = algorithms::find(c.algorithm);
  const algorithms::Args args{c.size, 0, true};
  RunResult r;
  ASSERT_NO_THROW(r = run(m, [&](Proc& p) { alg.program(p, args); }));
  const auto p = static_cast<std::uint64_t>(m.nodes());
  // Both algorithms send exactly one message to every other processor.
  EXPECT_EQ(r.stats.messages, p * (p - 1));
  const std::uint64_t per_msg =
      std::max<std::uint64_t>(1, (c.size + static_cast<std::uint64_t>(m.net.packet_payload) - 1) /
                                     static_cast<std::uint64_t>(m.net.packet_payload));
  EXPECT_EQ(r.stats.packets, p * (p - 1) * per_msg);
  EXPECT_EQ(r.stats.payload_bytes, p * (p - 1) * c.size);
  if (p > 1) {
    EXPECT_GT(r.makespan, 0);
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* alg : {"alltoall/1-lev-dir", "alltoall/1-lev-xor"})
    for (const char* mesh : {"mesh:1x1", "mesh:1x5", "mesh:2x2", "mesh:3x5", "mesh:4x4", "mesh:7x3", "mesh:8x8"})
      for (std::size_t size : {std::size_t{1}, std::size_t{1500}})  // one packet; two packets
        out.push_back({alg, mesh, size});
  out.push_back({"alltoall/1-lev-dir", "torus:3x4", 700});
  out.push_back({"alltoall/1-lev-xor", "torus:3x4", 700});
  out.push_back({"alltoall/1-lev-dir", "mesh:3x5,ports=all,buffer=4096", 900});
  out.push_back({"alltoall/1-lev-xor", "mesh:3x5,ports=2,buffer=2000", 900});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Meshes, AlltoallDelivers, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string s = fmt::format("{}_{}_{}", info.param.algorithm, info.param.machine,
                                                       info.param.size);
                           for (auto& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// Inconsistent arguments (rank 2 uses another block size than the others) make the run fail
// with an error instead of completing silently.
TEST(AlltoallHarness, InconsistentBlockSizesEndInAnError) {
  const Machine m = parse_machine("mesh:2x2");
  const auto& alg = algorithms::find("alltoall/1-lev-dir");
  EXPECT_THROW(run(m, [&](Proc& p) { alg.program(p, algorithms::Args{p.rank() == 2 ? 8u : 16u, 0, true}); }),
               Error);
}

TEST(AlltoallCatalog, UnknownAlgorithmIsAUsageErrorListingTheKnownOnes) {
  try {
    algorithms::find("alltoall/nope");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("alltoall/1-lev-dir"), std::string::npos) << e.what();
  }
  EXPECT_GE(algorithms::select("alltoall/all").size(), 8u);  // the eight of paper 000, sec. 5.3, then later papers'
  EXPECT_NO_THROW(algorithms::find("alltoall/cc-cube"));  // paper 002
  EXPECT_THROW(algorithms::select("nosuch/all"), UsageError);
}

// Names hold commas, so a list splits only where the next piece starts a new collective/name.
TEST(AlltoallCatalog, ListsSplitBetweenNamesNotInsideThem) {
  const auto algs = algorithms::select("alltoall/2-lev-c,r,alltoall/2-lev-c,r-int,scatter/logp-lev-rec(0.6)");
  ASSERT_EQ(algs.size(), 3u);
  EXPECT_EQ(algs[0]->name, "alltoall/2-lev-c,r");
  EXPECT_EQ(algs[1]->name, "alltoall/2-lev-c,r-int");
  EXPECT_EQ(algs[2]->name, "scatter/logp-lev-rec(0.6)");
  EXPECT_THROW(algorithms::select("alltoall/2-lev-c,x"), UsageError);  // "alltoall/2-lev-c,x" is unknown
}

}  // namespace
