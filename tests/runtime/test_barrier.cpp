// Barriers (docs/model.md 6): hardware (everyone leaves at the last arrival + barrier_latency) and
// software (a dissemination barrier of zero-byte messages over the data network).
#include <gtest/gtest.h>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

Time arrival_clock(int rank) { return 1000 * ((rank * 7) % 16) + 3 * rank; }

TEST(Barrier, HardwareBarrierReleasesEveryoneAtLastArrivalPlusLatency) {
  Machine m = ts_test::prime_machine("mesh:4x4");
  m.net.barrier = BarrierKind::hardware;
  m.net.barrier_latency = 5003;
  Time last = 0;
  for (int r = 0; r < 16; ++r) last = std::max(last, arrival_clock(r));
  const Time release1 = last + m.net.barrier_latency;
  // Second round: only the even row group (rows 0 and 2), each member computing rank ps more.
  Time last2 = 0;
  for (int r = 0; r < 16; ++r)
    if ((r / 4) % 2 == 0) last2 = std::max(last2, release1 + r);
  const Time release2 = last2 + m.net.barrier_latency;
  std::vector<Time> left1(16), left2(16);
  const RunResult res = run(m, [&](Proc& p) {
    const auto r = static_cast<std::size_t>(p.rank());
    p.compute(arrival_clock(p.rank()));
    p.barrier();
    left1[r] = p.now();
    Group even_rows = p.group({0, 1, 2, 3, 8, 9, 10, 11});
    if (even_rows.contains(p.rank())) {
      p.compute(p.rank());
      p.barrier(even_rows);
    }
    left2[r] = p.now();
  });
  for (int r = 0; r < 16; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(left1[i], release1) << r;
    EXPECT_EQ(left2[i], (r / 4) % 2 == 0 ? release2 : release1) << r;
    EXPECT_EQ(res.finish_time[i], left2[i]);
  }
  EXPECT_EQ(res.stats.messages, 0u);  // a control network, not the data network
  EXPECT_EQ(res.makespan, release2);
}

TEST(Barrier, BarrierOptionsOfTheMachineSpec) {
  const Machine m = parse_machine("mesh:2x2,barrier=hardware,barrier_us=5");
  EXPECT_EQ(m.net.barrier, BarrierKind::hardware);
  EXPECT_EQ(m.net.barrier_latency, microseconds(5));
  EXPECT_EQ(parse_machine("mesh:2x2,barrier=software").net.barrier, BarrierKind::software);
}

// Two processors: one round of the dissemination barrier, each sends a zero-byte message to the
// other and waits for the other's. Everything follows from the point-to-point formulas.
TEST(Barrier, SoftwareBarrierOnTwoNodesHasExactTimes) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.net.barrier = BarrierKind::software;
  const Model x{m};
  const Time c0 = 1000, c1 = 9000;
  // Rank r hands its zero-byte message over at h_r = c_r + C_send; it arrives one hop away.
  const Time h0 = x.handed(c0, 0), h1 = x.handed(c1, 0);
  const Time a01 = x.arrival_cf(h0, 1, 0), a10 = x.arrival_cf(h1, 1, 0);
  const Time left0 = std::max(x.recv_done(h0, a10, 0), x.send_return_cf(h0, 1, 0));
  const Time left1 = std::max(x.recv_done(h1, a01, 0), x.send_return_cf(h1, 1, 0));
  std::vector<Time> left(2);
  const RunResult r = run(m, [&](Proc& p) {
    p.compute(p.rank() == 0 ? c0 : c1);
    p.barrier();
    left[static_cast<std::size_t>(p.rank())] = p.now();
  });
  EXPECT_EQ(left[0], left0);
  EXPECT_EQ(left[1], left1);
  EXPECT_EQ(r.stats.messages, 2u);
  EXPECT_GE(left[0], c1);  // nobody leaves before the last one arrived
}

// mesh:4x4, software: ceil(log2 16) = 4 rounds of 16 messages; everyone leaves after the last
// arrival; the result is the same with fibers and threads.
TEST(Barrier, SoftwareBarrierWaitsForTheLastArrivalAndIsDeterministic) {
  Machine m = ts_test::prime_machine("mesh:4x4");
  m.net.barrier = BarrierKind::software;
  Time last = 0;
  for (int r = 0; r < 16; ++r) last = std::max(last, arrival_clock(r));
  std::vector<RunResult> results;
  for (Execution e : {Execution::fibers, Execution::threads}) {
    RunOptions o;
    o.execution = e;
    std::vector<Time> left(16);
    results.push_back(run(
        m,
        [&](Proc& p) {
          p.compute(arrival_clock(p.rank()));
          p.barrier();
          left[static_cast<std::size_t>(p.rank())] = p.now();
        },
        o));
    for (int r = 0; r < 16; ++r) EXPECT_GE(left[static_cast<std::size_t>(r)], last) << r;
    // At least one round trip of the last arrival's signal: C_send + 1 hop + C_recv.
    const Model x{m};
    for (int r = 0; r < 16; ++r)
      EXPECT_GE(left[static_cast<std::size_t>(r)], last + x.send_cost(0) + x.recv_cost(0)) << r;
    EXPECT_EQ(results.back().stats.messages, 64u);
  }
  EXPECT_EQ(results[0].makespan, results[1].makespan);
  EXPECT_EQ(results[0].trace_hash, results[1].trace_hash);
  EXPECT_EQ(results[0].finish_time, results[1].finish_time);
}

}  // namespace
