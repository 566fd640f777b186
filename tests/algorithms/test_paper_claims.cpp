// The winner and ordering statements of papers 000, 003 and 004 that the claims tables
// (`paper000 claims`, `paper003 claims`, `paper004 claims`) report as reproduced, asserted on the
// emulator's own runs: if a model change breaks one, the test says which sentence of which paper.
// Nothing here is a recorded number; every side of every comparison is an emulated run.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "touchstone/topologies/switch_network.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

double run_ms(const std::string& machine, const std::string& algorithm, std::size_t size, std::uint64_t seed = 1,
              const algorithms::TrafficSpec* traffic = nullptr) {
  const Machine m = parse_machine(machine);
  const auto& alg = algorithms::find(algorithm);
  // The two-stage algorithm reads the lengths its messages carry: traffic runs keep real payloads.
  algorithms::Args args{size, 0, traffic != nullptr};
  if (traffic) args.traffic = *traffic;
  RunOptions o;
  o.seed = seed;
  o.phantom_payloads = traffic == nullptr;
  return to_us(run(m, [&](Proc& p) { alg.program(p, args); }, o).makespan) / 1e3;
}

std::string fastest(const std::string& machine, const std::vector<std::string>& algs, std::size_t size) {
  std::string best;
  double t = 1e300;
  for (const auto& a : algs) {
    const double x = run_ms(machine, a, size);
    if (x < t) t = x, best = a;
  }
  return best;
}

// Paper 000, section 5.3: "Algorithm 1-lev-xor gives the best performance for larger message
// sizes ... For small messages sizes ..., Algorithm 2-lev-c,r achieved the best performance. This
// conclusion holds not only for a 256-processors machine, but for all machine sizes we considered"
// -- among the five algorithms of Figure 10, at its two sizes, on 64 processors.
TEST(Paper000Claims, AllToAllWinnersOf64ProcessorsAreFigure10s) {
  const std::vector<std::string> five = {"alltoall/1-lev-dir", "alltoall/1-lev-xor", "alltoall/2-lev-c,r", "alltoall/2-lev-c,r-int",
                                         "alltoall/2-lev-sq"};
  EXPECT_EQ(fastest("delta:8x8", five, 64), "alltoall/2-lev-c,r");
  EXPECT_EQ(fastest("delta:8x8", five, 4096), "alltoall/1-lev-xor");
}

// Paper 000, section 3.2: "Of all the algorithms, 2-lev-rec, 3-lev-sq and logp-lev-rec(0.75) perform
// the best. This holds for all message and machine sizes" and "For large message sizes, Algorithm
// logp-lev-rec(0.75) is the best choice" -- on the 256-processor Delta of Figure 2, at its smallest
// and largest sizes. 16 bytes is the winner a delta preset with C_send = 200 us misses (logp-lev-sq
// wins there); 1-lev-sys-br was not run from 4 KB up (section 3.2), nor here.
TEST(Paper000Claims, OneToAllWinnerIsOneOfTheThreeTheTextNamesAtSixteenBytesAndSixteenKilobytes) {
  const std::vector<std::string> large = {"scatter/1-lev-dir", "scatter/1-lev-our-br",  "scatter/2-lev-rec",
                                          "scatter/3-lev-sq",  "scatter/logp-lev-sq", "scatter/logp-lev-rec(0.75)"};
  std::vector<std::string> small = large;
  small.push_back("scatter/1-lev-sys-br");
  const std::string at16 = fastest("delta:16x16", small, 16);
  const std::vector<std::string> best_three = {"scatter/2-lev-rec", "scatter/3-lev-sq", "scatter/logp-lev-rec(0.75)"};
  EXPECT_NE(std::find(best_three.begin(), best_three.end(), at16), best_three.end()) << at16;
  EXPECT_EQ(fastest("delta:16x16", large, 16384), "scatter/logp-lev-rec(0.75)");
}

// Paper 000, section 3.2: the system broadcast performs "significantly worse than our own
// broadcast" (more than 1.25x, the claims table's reading), and both broadcasts are slower than
// the message-combining algorithms.
TEST(Paper000Claims, SystemBroadcastIsSignificantlyWorseThanTheBinomialHeap) {
  for (std::size_t L : {256, 2048}) {
    const double sys = run_ms("delta:8x8", "scatter/1-lev-sys-br", L), ours = run_ms("delta:8x8", "scatter/1-lev-our-br", L);
    EXPECT_GT(sys, 1.25 * ours) << L;
    EXPECT_GT(ours, run_ms("delta:8x8", "scatter/logp-lev-rec(0.75)", L)) << L;
  }
}

// Paper 003, section 7, on the cm5 preset (section 3's costs: docs/machines.md, "The CM-5"):
// Figure 10 (k = 2, l = 1/2), "Both the single-stage algorithms out-performed the two-stage one",
// and Figure 9 (k = 32, l = 1/32), two-stage "even out-performing the single-stage algorithm
// without the improvements" where the traffic is large. Seed 1.
TEST(Paper003Claims, SingleStageWinsFigureTenAndTwoStageBeatsBasicRandomSchedulingInFigureNine) {
  for (long long t : {1024LL, 65536LL}) {
    const auto spec = algorithms::parse_traffic(fmt::format("k=2,l=1/2,t={}", t));
    const double two = run_ms("cm5:32", "alltoallv/two-stage", 0, 1, &spec);
    EXPECT_LT(run_ms("cm5:32", "alltoallv/random-scheduling", 0, 1, &spec), two) << "t = " << t;
    EXPECT_LT(run_ms("cm5:32", "alltoallv/random-scheduling-plus", 0, 1, &spec), two) << "t = " << t;
  }
  const auto spec = algorithms::parse_traffic("k=32,l=1/32,t=65536");
  EXPECT_LT(run_ms("cm5:32", "alltoallv/two-stage", 0, 1, &spec),
            run_ms("cm5:32", "alltoallv/random-scheduling", 0, 1, &spec));
}

// Paper 003: why two-stage cannot come within 1.5x of the single-stage algorithms at small t on
// section 3's rates (docs/paper003.md, "Claims"). Each of its 2 x 31 steps sends t/p bytes plus
// p 4-byte lengths in 20-byte packets (16 bytes of payload) to the XOR partner k, 3 of them inside
// a cluster of 4 (50 ns/B), 12 inside 16 (100 ns/B), 16 beyond (200 ns/B): 4550 ns per byte of a
// step's message over a stage, with no contention and no CPU cost, plus 62 barriers of 5 us.
// The emulated two-stage stays above that floor and within 15% of it; the plus variant of random
// scheduling on Figure 10 at 1 KB takes less than two thirds of the floor. Seed 1.
TEST(Paper003Claims, TwoStageStaysAboveTheFloorOfSectionThreesRates) {
  for (long long t : {1024LL, 65536LL}) {
    const long long bytes = t / 32 + 4 * 32, packets = (bytes + 15) / 16, wire = bytes + 4 * packets;
    const double floor_ms = (2.0 * static_cast<double>(wire) * 4550e-6 + 62 * 5e-3);
    const auto spec = algorithms::parse_traffic(fmt::format("k=32,l=1/32,t={}", t));
    const double two = run_ms("cm5:32", "alltoallv/two-stage", 0, 1, &spec);
    EXPECT_GE(two, floor_ms) << "t = " << t;
    EXPECT_LT(two, 1.15 * floor_ms) << "t = " << t;
  }
  const auto fig10 = algorithms::parse_traffic("k=2,l=1/2,t=1024");
  EXPECT_LT(run_ms("cm5:32", "alltoallv/random-scheduling-plus", 0, 1, &fig10), (2 * 200 * 4550e-6 + 62 * 5e-3) / 1.5);
}

// Paper 004, section 5: on generated irregular networks ranks follow MPICH's order on nodes
// numbered independently of the switches (random placement by default), and RO-ring, "the
// default implementation supplied by MPICH, becomes less attractive": slower than SO-ring and LS.
TEST(Paper004Claims, IrregularDefaultPlacementIsRandomAndRoRingTrailsSoRingAndLs) {
  for (int seed = 1; seed <= 3; ++seed) {
    const std::string m = fmt::format("irregular:switches=10,nodes=7-21,links=1-5,parallel=2,total=128,seed={}", seed);
    const Machine machine = parse_machine(m);
    // Block placement would put ranks 0 and 1 on one switch (the first has at least 7 nodes); a
    // random one does not keep switch order: some neighbouring ranks sit on different switches.
    int crossings = 0;
    std::vector<LinkId> path;
    for (int r = 0; r + 1 < machine.nodes(); ++r) {
      path.clear();
      machine.topology->route(r, r + 1, path);
      crossings += !path.empty();
    }
    EXPECT_GT(crossings, 9) << "seed " << seed << ": a switch-major placement crosses between switches at most 9 times";
    const double ro = run_ms(m, "allgather/RO-ring", 256, static_cast<std::uint64_t>(seed));
    EXPECT_GT(ro, run_ms(m, "allgather/SO-ring", 256, static_cast<std::uint64_t>(seed))) << seed;
    EXPECT_GT(ro, run_ms(m, "allgather/LS", 256, static_cast<std::uint64_t>(seed))) << seed;
  }
}

// Paper 004, section 5.3, at the start-up it states ("We again used a 5 microsecond startup time",
// C_send = C_recv = 5 us): LS beats SO-ring (the abstract's "27.1% improvement ... compared to
// other available algorithms"), and SO-ring runs free of contention: its 127 steps cost at least
// a single-switch step each (2 x 5 us + t_hop + 256 flits x 16 ns) and at most that plus t_hop per
// further switch on its longest ring edge.
TEST(Paper004Claims, AtThePapersStartupLsBeatsSoRingWhoseStepsAreContentionFree) {
  constexpr double kStepUs = 2 * 5.0 + 0.532 + 256 * 0.016, kHopUs = 0.532;
  for (int seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(fmt::format("network {}", seed));
    const std::string m =
        fmt::format("irregular:switches=10,nodes=7-21,links=1-5,parallel=2,total=128,seed={},send_us=5,recv_us=5", seed);
    const Machine machine = parse_machine(m);
    const auto& net = dynamic_cast<const SwitchNetwork&>(*machine.topology);
    const auto order = net.switch_ordered_ranks();
    std::size_t longest = 0;
    std::vector<LinkId> path;
    for (std::size_t i = 0; i < order.size(); ++i) {
      path.clear();
      machine.topology->route(order[i], order[(i + 1) % order.size()], path);
      longest = std::max(longest, path.size());
    }
    const double so = run_ms(m, "allgather/SO-ring", 256, static_cast<std::uint64_t>(seed)) * 1e3;
    EXPECT_GE(so, 127 * kStepUs);
    EXPECT_LE(so, 127 * (kStepUs + static_cast<double>(longest) * kHopUs));
    EXPECT_LT(run_ms(m, "allgather/LS", 256, static_cast<std::uint64_t>(seed)) * 1e3, so);
  }
}

}  // namespace
