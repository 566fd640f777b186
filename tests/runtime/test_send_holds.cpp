// A send held until its receive completes (NetworkParams::send_holds_until_received, docs/model.md
// 2.21): the send completes at the receive's completion, max(posted, arrival) + C_recv + L*r, not
// when its last packet has left. Expected times are computed here from the formulas of 2.4 and 2.5
// on the prime machine (every cost a distinct prime).
#include <gtest/gtest.h>

#include <array>

#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "support/split_run.hpp"
#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/topologies/hpam.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr std::size_t kSize = 150;  // 3 packets of 64, 64, 22 bytes: 243 wire bytes

Machine line(bool holds) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.net.send_holds_until_received = holds;
  return m;
}

// Runs `program` in one process or, with parts > 1, split over that many (a process per rank with
// parts = 3; docs/parallel.md, "Several processes"): every process must end with the single
// process's run, trace_hash and times included.
void run_whole_or_split(const Machine& m, const Program& program, int parts) {
  if (parts == 1) return static_cast<void>(run(m, program));
  const RunResult one = run(m, program);
  const ts_test::SplitRun split = ts_test::run_split(m, program, RunOptions{}, parts);
  for (int k = 0; k < parts; ++k) {
    SCOPED_TRACE(::testing::Message() << "process " << k << " of " << parts);
    if (const std::exception_ptr& f = split.failures[static_cast<std::size_t>(k)]) {
      try {
        std::rethrow_exception(f);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "the split run failed: " << e.what();
      }
      continue;
    }
    const RunResult& r = split.results[static_cast<std::size_t>(k)];
    EXPECT_EQ(r.trace_hash, one.trace_hash);
    EXPECT_EQ(r.makespan, one.makespan);
    EXPECT_EQ(r.finish_time, one.finish_time);
    EXPECT_EQ(r.stats.events, one.stats.events);
  }
}

// Rank 0 sends kSize bytes to rank 1, then to rank 2 (blocking sends); rank r > 0 posts its receive
// after computing for late[r]. Returns the clocks after each send and each receive (with parts > 1,
// those of the run split over that many processes).
struct Sends {
  Time sent[2] = {-1, -1};
  Time received[3] = {-1, -1, -1};
};
Sends two_sends(const Machine& m, Time late1 = 0, Time late2 = 0, int parts = 1) {
  Sends out;
  run_whole_or_split(
      m,
      [&](Proc& p) {
        if (p.rank() == 0) {
          const std::vector<std::byte> data = ts_test::bytes(kSize, 5);
          p.send(1, 0, data);
          out.sent[0] = p.now();
          p.send(2, 0, data);
          out.sent[1] = p.now();
          return;
        }
        p.compute(p.rank() == 1 ? late1 : late2);
        std::vector<std::byte> in(kSize);
        p.recv(0, 0, in);
        out.received[p.rank()] = p.now();
        EXPECT_EQ(in, ts_test::bytes(kSize, 5));
      },
      parts);
  return out;
}

// Each send returns when its receiver has taken the message: the second starts only then, so the
// two messages cost two whole send + network + receive times in sequence (paper 001's eq. 5).
TEST(SendHolds, EachSendWaitsForItsReceive) {
  const Machine m = line(true);
  const Model x{m};
  const Time r1 = x.recv_done(0, x.arrival_cf(x.send_cost(kSize), 1, kSize), kSize);
  const Time h2 = r1 + x.send_cost(kSize);
  const Time r2 = x.recv_done(0, x.arrival_cf(h2, 2, kSize), kSize);
  // By hand: send 1009 + 150*13 = 2959; arrival 2959 + 2*23 + 243*7 = 4706; receive 2003 + 150*17
  // = 4553, so r1 = 9259; the second: 9259 + 2959 + 3*23 + 1701 + 4553 = 18541.
  EXPECT_EQ(r1, 9259);
  EXPECT_EQ(r2, 18541);
  const Sends got = two_sends(m);
  EXPECT_EQ(got.sent[0], r1);
  EXPECT_EQ(got.received[1], r1);
  EXPECT_EQ(got.sent[1], r2);
  EXPECT_EQ(got.received[2], r2);
}

// Split over processes, the receiver's process tells the sender's when the receive completed, and
// the send completes then: the same times as in one process, ranks 1 and 2 in another process than
// rank 0 (2 processes) or each in its own (3).
TEST(SendHolds, SplitOverProcessesEachSendCompletesWithItsReceiveElsewhere) {
  const Machine m = line(true);
  for (const int parts : {2, 3}) {
    SCOPED_TRACE(::testing::Message() << parts << " processes");
    const Sends got = two_sends(m, 0, 0, parts);
    EXPECT_EQ(got.sent[0], 9259);
    EXPECT_EQ(got.received[1], 9259);
    EXPECT_EQ(got.sent[1], 18541);
    EXPECT_EQ(got.received[2], 18541);
    const Sends late = two_sends(m, 20000, 0, parts);  // ALateReceiveHoldsTheSenderUntilItCompletes
    EXPECT_EQ(late.sent[0], 24553);
    EXPECT_EQ(late.sent[1], late.received[2]);
  }
}

// Off (the default), the send returns when its last packet has left: 2959 + 243*7 = 4660.
TEST(SendHolds, OffTheSendReturnsWhenTheMessageHasLeft) {
  const Machine m = line(false);
  const Model x{m};
  const Time left1 = x.send_return_cf(x.send_cost(kSize), 1, kSize);
  EXPECT_EQ(left1, 4660);
  const Sends got = two_sends(m);
  EXPECT_EQ(got.sent[0], left1);
  EXPECT_EQ(got.received[1], 9259);
}

// A receive posted after the message arrived holds the sender until it completes: rank 1 posts at
// 20000, completes at 20000 + 4553 = 24553, and rank 0's second send starts then.
TEST(SendHolds, ALateReceiveHoldsTheSenderUntilItCompletes) {
  const Machine m = line(true);
  const Model x{m};
  const Time r1 = 20000 + x.recv_cost(kSize);
  EXPECT_EQ(r1, 24553);
  const Time r2 = x.recv_done(0, x.arrival_cf(r1 + x.send_cost(kSize), 2, kSize), kSize);
  const Sends got = two_sends(m, 20000);
  EXPECT_EQ(got.sent[0], r1);
  EXPECT_EQ(got.sent[1], r2);
  EXPECT_EQ(got.received[2], r2);
}

// An isend's wait completes with the receive too; the sender's CPU is free in between.
TEST(SendHolds, AnIsendCompletesWithItsReceive) {
  const Machine m = line(true);
  Time waited = -1, after_isend = -1;
  run(m, [&](Proc& p) {
    const std::vector<std::byte> data = ts_test::bytes(kSize, 1);
    if (p.rank() == 0) {
      Request r = p.isend(2, 0, data);
      after_isend = p.now();
      p.wait(r);
      waited = p.now();
    } else if (p.rank() == 2) {
      std::vector<std::byte> in(kSize);
      p.recv(0, 0, in);
    }
  });
  const Model x{m};
  EXPECT_EQ(after_isend, x.send_cost(kSize));
  EXPECT_EQ(waited, x.recv_done(0, x.arrival_cf(x.send_cost(kSize), 2, kSize), kSize));
}

TEST(SendHolds, IsAMachineOptionOnInTheHpamPreset) {
  EXPECT_FALSE(parse_machine("mesh:1x3").net.send_holds_until_received);
  EXPECT_TRUE(parse_machine("mesh:1x3,send_holds_until_received=on").net.send_holds_until_received);
  EXPECT_TRUE(parse_machine("hpam:1x1/4x4,Q=8").net.send_holds_until_received);
  EXPECT_FALSE(parse_machine("hpam:1x1/4x4,Q=8,send_holds_until_received=off").net.send_holds_until_received);
  EXPECT_THROW(parse_machine("mesh:1x3,send_holds_until_received=yes"), UsageError);
}

}  // namespace

namespace {

// On hpam:2x2/4x8,Q=2,multicast (Table 1: C^1 = 2 us, 10 ns/B; C^2 = 4 us, 20 ns/B; Lambda = 10 ns
// per byte and per hop), (1,0)_1 multicasts 100 bytes to (0,0)_2 .. (0,3)_2, one hop below; receiver
// k computes for late[k] before it posts its receive. Returns the sender's clock after the multicast
// and each receiver's after its receive.
struct HeldMulticast {
  Time sender_after = -1;
  std::vector<Time> received = std::vector<Time>(4, -1);
};
HeldMulticast held_multicast(const std::array<Time, 4>& late, int parts = 1) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast");
  const Hpam& t = *as_hpam(m);
  const int src = t.node(1, 1, 0);
  std::vector<int> dsts;
  for (int k = 0; k < 4; ++k) dsts.push_back(t.node(2, 0, k));
  HeldMulticast out;
  run_whole_or_split(
      m,
      [&](Proc& p) {
        std::vector<std::byte> buf(100);
        if (p.rank() == src) {
          p.multicast(dsts, 3, buf);
          out.sender_after = p.now();
        }
        for (std::size_t k = 0; k < 4; ++k)
          if (p.rank() == dsts[k]) {
            p.compute(late[k]);
            p.recv(src, 3, buf);
            out.received[k] = p.now();
          }
      },
      parts);
  return out;
}

// A multicast is held until its last branch has been received: receives posted at 0, 1, 2 and
// 3 us; the last completes at max(3 us, arrival) + 4 us + 100 x 20 ns.
TEST(SendHolds, AMulticastCompletesWithItsLastReceive) {
  const HeldMulticast h = held_multicast({0, microseconds(1), microseconds(2), microseconds(3)});
  // The worm: send 2 us + 100 x 10 ns = 3 us, then 1 hop + ejection (20 ns) and 100 x 10 ns:
  // arrival 4.02 us everywhere; receives complete at 4.02 + 6 = 10.02 us, the last (posted at 3 us,
  // before the arrival) too.
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(h.received[k], nanoseconds(10'020));
  EXPECT_EQ(h.sender_after, nanoseconds(10'020));
}

// The last receive later than the arrival decides: posted at 10 us, it completes at 16 us.
TEST(SendHolds, AMulticastWaitsForItsLatestReceive) {
  EXPECT_EQ(held_multicast({0, 0, microseconds(10), 0}).sender_after, microseconds(16));
}

// Split over processes, the sender's process hears of each branch's receive from the branch's
// process: the same times. Over 6 processes of 6 ranks each, the sender (rank 2) and two receivers
// (ranks 4 and 5) are in the first, the latest receiver (rank 6) and rank 7 in the second; over
// 36 every rank is in a process of its own.
TEST(SendHolds, SplitOverProcessesAMulticastCompletesWithItsLatestReceiveElsewhere) {
  for (const int parts : {6, 36}) {
    SCOPED_TRACE(::testing::Message() << parts << " processes");
    const HeldMulticast h = held_multicast({0, 0, microseconds(10), 0}, parts);
    EXPECT_EQ(h.sender_after, microseconds(16));
    EXPECT_EQ(h.received[2], microseconds(16));
    EXPECT_EQ(h.received[0], nanoseconds(10'020));
  }
}

}  // namespace

namespace {

// Held sends and multicasts contending on the preset: the same trace_hash whatever the host does.
TEST(SendHolds, DeterministicUnderPerturbationAndThreads) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast");
  const Hpam& t = *as_hpam(m);
  auto program = [&](Proc& p) {
    std::vector<std::byte> buf(300);
    const HpamPos me = t.pos(p.rank());
    if (me.level == 1) {
      std::vector<int> row;
      for (int k = 0; k < 4; ++k) row.push_back(t.node(2, me.row, me.col * 4 + k));
      p.multicast(row, 1, std::span(buf).first(100));
      return;
    }
    // Rows 0 and 1 of level 2 take their multicast, then pass 200 bytes around the row: even
    // columns send first, odd ones receive first, so that held sends cannot wait on each other.
    if (me.row >= 2) return;
    p.recv(t.node(1, me.row, me.col / 4), 1, std::span(buf).first(100));
    const int right = t.node(2, me.row, (me.col + 1) % 8), left = t.node(2, me.row, (me.col + 7) % 8);
    if (me.col % 2 == 0) {
      p.send(right, 7, std::span(buf).first(200));
      p.recv(left, 7, buf);
    } else {
      p.recv(left, 7, buf);
      p.send(right, 7, std::span(buf).first(200));
    }
  };
  EXPECT_EQ(ts_test::expect_host_independent(m, program, 6, 100).stats.messages, 16u + 16u);
}

}  // namespace
