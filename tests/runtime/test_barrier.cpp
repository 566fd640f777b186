// Barriers (docs/model.md 6): hardware (everyone leaves at the last arrival + barrier_latency) and
// software (a dissemination barrier of zero-byte messages over the data network).
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

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

// docs/parallel.md, stage 1: VPs resumed at one virtual time form a batch whose code could run
// concurrently (RunStats::batches). Every VP starts at t = 0 (one batch of all five); the hardware
// barrier releases the four that blocked in it at one time (a second batch). The last to arrive,
// rank 4 (clock 4000), does not block: it leaves at the release time within its first segment.
TEST(Batches, VpsResumedAtOneTimeFormOneBatch) {
  const Machine m = parse_machine("mesh:1x5,barrier=hardware,barrier_us=5");
  const auto program = [](Proc& p) {
    p.compute(1000 * p.rank());
    p.barrier();
  };
  const RunResult r = run(m, program);
  const BatchStats& b = r.stats.batches;
  EXPECT_EQ(b.segments, 5u + 5u);
  EXPECT_EQ(b.instants, 2u);
  EXPECT_EQ(b.widest, 5u);
  // 2 ceil(5 / W) rounds for W = 2, 4, 8, 16.
  EXPECT_EQ(b.rounds[0], 3u + 3u);
  EXPECT_EQ(b.rounds[1], 2u + 2u);
  EXPECT_EQ(b.rounds[2], 1u + 1u);
  EXPECT_EQ(b.rounds[3], 1u + 1u);
  // The hooks around each segment: every VP resumes at t = 0, and again at the release, 5 us after
  // rank 4's arrival at 4000 ps (rank 4, the last to arrive, waits for it too); each resumption is
  // followed by one pause.
  std::vector<std::pair<int, Time>> resumed;
  int paused = 0;
  RunOptions hooks;
  hooks.on_vp_resume = [&](int rank, Time now, std::uint64_t) { resumed.emplace_back(rank, now); };
  hooks.on_vp_pause = [&](int) { ++paused; };
  run(m, program, hooks);
  const Time release = 4000 + microseconds(5);
  const std::vector<std::pair<int, Time>> expected = {
      {0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {0, release}, {1, release}, {2, release}, {3, release}, {4, release}};
  EXPECT_EQ(resumed, expected);
  EXPECT_EQ(paused, 10);
  // The batches follow from the event order alone: the same under threads and host delays.
  RunOptions threads;
  threads.execution = Execution::threads;
  threads.perturb = 7;
  const BatchStats t = run(m, program, threads).stats.batches;
  EXPECT_EQ(t.segments, b.segments);
  EXPECT_EQ(t.instants, b.instants);
  EXPECT_EQ(t.widest, b.widest);
  EXPECT_EQ(t.rounds[0], b.rounds[0]);
}

// Rank 0 sends one 8-byte message to each of ranks 1..3 and waits for all three sends: it resumes
// each time one of them completes (its last packet left the node), the receivers each at their
// message's arrival. On the generic mesh a send takes C_send = 10 us of rank 0's CPU and its
// message arrives about 2 us after it left (40 bytes at 40 ns, two hops of 100 ns), so the six
// times leave_1 < arrive_1 < leave_2 < arrive_2 < leave_3 < arrive_3 are distinct: after the
// start (4 VPs at t = 0) every batch holds one VP.
TEST(Batches, StaggeredCompletionsResumeOneVpAtATime) {
  const Machine m = parse_machine("mesh:1x4");
  const RunResult r = run(m, [](Proc& p) {
    std::array<std::byte, 8> buf{};
    if (p.rank() == 0) {
      std::vector<Request> sends;
      for (int dst = 1; dst < 4; ++dst) sends.push_back(p.isend(dst, 0, buf));
      p.waitall(sends);
    } else {
      p.recv(0, 0, buf);
    }
  });
  const BatchStats& b = r.stats.batches;
  EXPECT_EQ(b.widest, 4u);
  EXPECT_EQ(b.segments, 4u + 3u + 3u);
  EXPECT_EQ(b.instants, 1u + 6u);
  EXPECT_EQ(b.rounds[0], 2u + 6u);  // W = 2: the start takes two rounds
  EXPECT_EQ(b.rounds[1], 1u + 6u);  // W = 4: one
}
