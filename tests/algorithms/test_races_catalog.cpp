// No catalog algorithm uses a wildcard receive (grep any_source algorithms/ finds none), so race
// detection must report no race on any of them (docs/debugging.md): a false positive here would
// be a flaw of the happens-before bookkeeping, not of the algorithm.
#include <gtest/gtest.h>

#include "algorithms/registry.hpp"
#include "algorithms/traffic.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

TEST(RacesCatalog, NoAlgorithmOfTheCatalogHasARace) {
  // The HPAM machines with buffered sends: under the preset's held sends (docs/model.md 2.21) a
  // polling protocol such as alltoallv/random-scheduling spins until the time limit.
  const std::vector<std::string> machines{"mesh:4x4", "hpam:2x2/2x2,Q=4,send_holds_until_received=off",
                                          "hpam:1x1/4x4,send_holds_until_received=off", "cm5:32", "switch:8",
                                          "switch2:4+4"};
  int ran = 0;
  for (const auto& alg : algorithms::catalog()) {
    if (alg.name == "selftest/deadlock") continue;  // ends in a deadlock report by design
    bool ran_this = false;
    for (const auto& spec : machines) {
      const Machine m = parse_machine(spec);
      algorithms::Args args{64, 0, true};
      args.traffic = algorithms::parse_traffic("k=2,l=0.5,t=64");
      RunOptions o;
      o.races = RaceCheck::report;
      try {
        const RunResult r = run(m, [&](Proc& p) { alg.program(p, args); }, o);
        EXPECT_TRUE(r.races.empty()) << alg.name << " on " << spec << ":\n" << describe_races(r.races);
        ran_this = true;
      } catch (const Error&) {
        // the algorithm does not apply to this machine (shape, multicast hardware, group size):
        // a UsageError, or a RunError wrapping the one its VPs threw
      }
    }
    EXPECT_TRUE(ran_this) << alg.name << " ran on none of the machines";
    ran += ran_this;
  }
  EXPECT_GT(ran, 20);
}

}  // namespace
