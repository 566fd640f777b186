// Network-interface set-up (docs/model.md 2.17): with ni_setup = X, a message that takes an
// injection port at t starts on it at
//   start = max(t, freed + X)
// where `freed` is when the port's previous message left it (no previous message: start = t), and
// t is the hand-over h = c + C_send + L*s when the port is free then, else the time it frees. The
// message then leaves at start + W*b and arrives at start + W*b + (d+1)*t_hop (2.4). Expected times
// are computed here from those formulas on the prime machine (every cost a distinct prime).
#include <gtest/gtest.h>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr std::size_t kSize = 150;  // 3 packets of 64, 64, 22 bytes on the prime machine
constexpr Time kSetup = 5003;       // X: longer than C_send + L*s = 1009 + 150*13 = 2959 ps

Machine setup_machine(Time setup) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.ni_setup = setup;
  return m;
}

struct Arrivals {
  std::vector<Time> arrival;  // of each message, at the receiver
  Time sender_done = -1;      // the sender's clock after its sends (and waits)
};

// Rank 0 sends three kSize-byte messages to rank 1, computing `gap` before each; non-blocking
// (isend, then waitall) or blocking (send). Rank 1 receives them in order.
Arrivals three_sends(const Machine& m, Time gap, bool blocking) {
  Arrivals out;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(kSize);
    if (p.rank() == 0) {
      std::vector<Request> reqs;
      for (int k = 0; k < 3; ++k) {
        p.compute(gap);
        if (blocking) p.send(1, k, buf);
        else reqs.push_back(p.isend(1, k, buf));
      }
      p.waitall(reqs);
      out.sender_done = p.now();
    } else {
      for (int k = 0; k < 3; ++k) out.arrival.push_back(p.recv(0, k, buf).arrival);
    }
  });
  return out;
}

// The expected times of three_sends from the formula above, one port, d = 1.
Arrivals expected(const Machine& m, Time gap, bool blocking) {
  const Model x{m};
  const Time send = x.send_cost(kSize), body = x.wire_total(kSize) * x.b(1);
  Arrivals out;
  Time clock = 0, leaves = kNever;
  for (int k = 0; k < 3; ++k) {
    const Time handed = clock + gap + send;
    clock = handed;
    const Time take = leaves == kNever ? handed : std::max(handed, leaves);  // the port frees at `leaves`
    const Time start = leaves == kNever ? take : std::max(take, leaves + m.costs.ni_setup);
    leaves = start + body;
    out.arrival.push_back(leaves + 2 * x.hop());
    if (blocking) clock = leaves;
  }
  out.sender_done = std::max(clock, leaves);
  return out;
}

void expect_times(const Machine& m, Time gap, bool blocking) {
  const Arrivals got = three_sends(m, gap, blocking), want = expected(m, gap, blocking);
  EXPECT_EQ(got.arrival, want.arrival);
  EXPECT_EQ(got.sender_done, want.sender_done);
}

// Back-to-back isends: without the rule the CPU is the bottleneck (2959 ps per message against
// W*b = 243*7 = 1701 ps on the wire), so message k leaves the port at (k+1)*2959 + 1701. With it,
// message 1 starts X after message 0 left, and message 2 X after message 1: 1701 + X apart.
TEST(InterfaceSetup, BackToBackSendsWaitForThePreviousMessageToLeave) {
  const Machine m = setup_machine(kSetup);
  expect_times(m, 0, false);
  const Model x{m};
  const Arrivals got = three_sends(m, 0, false);
  const Time body = x.wire_total(kSize) * x.b(1);
  ASSERT_EQ(got.arrival.size(), 3u);
  EXPECT_EQ(got.arrival[0], x.arrival_cf(x.handed(0, kSize), 1, kSize));  // a lone message: unchanged
  EXPECT_EQ(got.arrival[1] - got.arrival[0], body + kSetup);
  EXPECT_EQ(got.arrival[2] - got.arrival[1], body + kSetup);
  // Without the rule, the same program is CPU-bound: arrivals one send cost apart.
  const Arrivals free = three_sends(setup_machine(0), 0, false);
  EXPECT_EQ(free.arrival[1] - free.arrival[0], x.send_cost(kSize));
}

// A port idle for at least X since its last message does not delay the next one: with a gap of
// X between sends every message costs exactly what it does without the rule.
TEST(InterfaceSetup, AnIdlePortDoesNotDelay) {
  const Machine m = setup_machine(kSetup);
  expect_times(m, kSetup, false);
  EXPECT_EQ(three_sends(m, kSetup, false).arrival, three_sends(setup_machine(0), kSetup, false).arrival);
}

// Blocking sends: the sender's clock reaches the time the last packet left, then pays C_send + L*s
// (2959 ps) before the hand-over, less than X, so each message starts X after the previous left:
// the rule hides the part of X that the next set-up already covers.
TEST(InterfaceSetup, BlockingSendsPayOnlyWhatTheSetUpDoesNotCover) {
  const Machine m = setup_machine(kSetup);
  expect_times(m, 0, true);
  const Model x{m};
  const Arrivals got = three_sends(m, 0, true);
  EXPECT_EQ(got.arrival[1] - got.arrival[0], x.wire_total(kSize) * x.b(1) + kSetup);
  // A set-up shorter than C_send + L*s is hidden completely under blocking sends.
  const Machine small = setup_machine(1999);
  EXPECT_EQ(three_sends(small, 0, true).arrival, three_sends(setup_machine(0), 0, true).arrival);
  expect_times(small, 0, false);
}

TEST(InterfaceSetup, MachineOption) {
  EXPECT_EQ(parse_machine("mesh:2x2").costs.ni_setup, 0);
  EXPECT_EQ(parse_machine("mesh:2x2,ni_setup_us=150").costs.ni_setup, microseconds(150));
  EXPECT_EQ(parse_machine("delta:2x2,ni_setup_us=0").costs.ni_setup, 0);
  // On every node, per-node costs too: HPAM's levels each have their own NodeCosts (a family that
  // builds its own NodeCosts could leave it at 0, silently).
  const Machine h = parse_machine("hpam:2x2/4x8,Q=2,ni_setup_us=5");
  for (int n = 0; n < h.nodes(); ++n) EXPECT_EQ(h.costs_of(n).ni_setup, microseconds(5)) << n;
  EXPECT_THROW(parse_machine("mesh:2x2,ni_setup_us=-1"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x2,ni_setup_us=fast"), UsageError);
}

}  // namespace
