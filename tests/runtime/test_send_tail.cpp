// The send's tail (docs/model.md 2.19): with send_tail = T, a send whose CPU work ends at
//   c + C_send + L*s + n*s_p
// hands its message to the network T earlier, at h = max(c, c + C_send + L*s + n*s_p - T); the
// sender's clock still advances by the whole send cost. Expected times are computed here from the
// formulas of 2.4 and 2.5 on the prime machine (every cost a distinct prime).
#include <gtest/gtest.h>

#include <cstdio>

#include "support/model.hpp"
#include "support/trace_check.hpp"
#include "touchstone/topologies/hpam.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr std::size_t kSize = 150;  // 3 packets of 64, 64, 22 bytes: W = 243 wire bytes

Machine tail_machine(Time tail) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.send_tail = tail;
  return m;
}

// Ranks 0 and 1 exchange kSize bytes (irecv, isend, waitall: paper 000's exchange step); returns
// each rank's clock after the waitall and the arrival each saw.
struct Exchange {
  Time done[2] = {-1, -1};
  Time arrival[2] = {-1, -1};
};
Exchange exchange(const Machine& m, const RunOptions& options = {}) {
  Exchange out;
  run(m, [&](Proc& p) {
    const int other = 1 - p.rank();
    std::vector<std::byte> in(kSize), outbuf = ts_test::bytes(kSize, p.rank());
    Request reqs[2] = {p.irecv(other, 0, in), p.isend(other, 0, outbuf)};
    const std::vector<Status> st = p.waitall(reqs);
    out.done[p.rank()] = p.now();
    out.arrival[p.rank()] = st[0].arrival;
    EXPECT_EQ(in, ts_test::bytes(kSize, other));
  }, options);
  return out;
}

// send_cost = 1009 + 150*13 = 2959 ps; the partner's message arrives send_cost - T + 2*23 + 243*7
// = 4706 - T, and the receive completes at max(2959, 4706 - T) + 2003 + 150*17 = ... + 4553. With
// T = 1000 the tail hides 1000 ps of the 1747 ps transfer; with T = 1009 (all of C_send) 1009.
TEST(SendTail, AnExchangeHidesTheTransferUnderTheTail) {
  for (Time tail : {Time{0}, Time{1000}, Time{1009}}) {
    SCOPED_TRACE(tail);
    const Machine m = tail_machine(tail);
    const Model x{m};
    const Time clock = x.send_cost(kSize);  // the clock at the waitall
    const Time h = clock - tail;
    EXPECT_EQ(h, x.handed(0, kSize));
    const Time arrival = h + 2 * x.hop() + x.wire_total(kSize) * x.b(1);
    EXPECT_EQ(arrival, 4706 - tail);
    const Exchange got = exchange(m);
    for (int r : {0, 1}) {
      EXPECT_EQ(got.arrival[r], arrival);
      EXPECT_EQ(got.done[r], std::max(clock, arrival) + x.recv_cost(kSize));
    }
  }
}

// The trace shows what the CPU did: each send span is the whole send work, though its message
// left the tail before the span ends (the flow starts inside it); the trace stays whole.
TEST(SendTail, TheTracesSendSpanIsTheWholeSendWork) {
  const Machine m = tail_machine(1000);
  RunOptions o;
  o.trace_file = testing::TempDir() + "/send_tail_trace.json";
  exchange(m, o);
  const ts_test::CheckedTrace t = ts_test::check_trace(o.trace_file);
  int sends = 0;
  for (const auto& s : t.slices) {
    if (s.name != "send") continue;
    EXPECT_EQ(s.end - s.start, Model{m}.send_cost(kSize));
    ++sends;
  }
  EXPECT_EQ(sends, 2);
  EXPECT_EQ(t.flows.size(), 2u);
  std::remove(o.trace_file.c_str());
}

// A tail longer than the transfer hides all of it: the step costs the CPU work alone. The prime
// machine's C_send (1009 ps) is shorter than this transfer, so a machine with C_send = 3000 ps.
TEST(SendTail, ATailLongerThanTheTransferLeavesTheCpuWorkAlone) {
  Machine m = tail_machine(2500);
  m.costs.send_overhead = 3000;
  const Model x{m};
  const Time transfer = 2 * x.hop() + x.wire_total(kSize) * x.b(1);  // 1747 ps
  ASSERT_GT(m.costs.send_tail, transfer);
  const Exchange got = exchange(m);
  EXPECT_EQ(got.done[0], x.send_cost(kSize) + x.recv_cost(kSize));
  EXPECT_EQ(got.arrival[0], x.send_cost(kSize) - 2500 + transfer);
}

// A blocking send returns when its last packet has left and its CPU work is done:
// max(c + send_cost, h + W*b). Rank 0 sends twice; the second send starts at the first's return.
TEST(SendTail, BlockingSendReturnsAfterBothItsWorkAndItsLastPacket) {
  for (Time tail : {Time{0}, Time{400}, Time{1009}}) {
    SCOPED_TRACE(tail);
    const Machine m = tail_machine(tail);
    const Model x{m};
    Time after[2] = {-1, -1};
    Time arrival[2] = {-1, -1};
    run(m, [&](Proc& p) {
      std::vector<std::byte> buf(kSize);
      for (int k = 0; k < 2; ++k) {
        if (p.rank() == 0) p.send(1, k, buf), after[k] = p.now();
        else arrival[k] = p.recv(0, k, buf).arrival;
      }
    });
    Time c = 0;
    for (int k = 0; k < 2; ++k) {
      const Time h = x.handed(c, kSize);
      EXPECT_EQ(arrival[k], x.arrival_cf(h, 1, kSize));
      c = std::max(c + x.send_cost(kSize), x.send_return_cf(h, 1, kSize));
      EXPECT_EQ(after[k], c);
    }
  }
}

// The inter-level multicast (2.11) hands its one worm over at the same time as a unicast would:
// hpam:2x2/4x8,Q=2,multicast, level-1 source (C_send = 2 us, 10 ns/B), a 1000-byte multicast to the
// four nodes of a level-2 row, d = 5, Lambda = 10 ns, 10 ns per byte on the tree. The option sets
// the tail on every node, HPAM's per-level costs too.
TEST(SendTail, AMulticastLeavesTheTailEarlyToo) {
  const Machine m = parse_machine("hpam:2x2/4x8,Q=2,multicast,send_tail_us=1.5,send_holds_until_received=off");
  const Hpam& t = *as_hpam(m);
  ASSERT_EQ(m.costs_of(t.node(1, 0, 0)).send_tail, nanoseconds(1500));
  const int src = t.node(1, 0, 0);
  std::vector<int> dsts;
  for (int k = 0; k < t.fanout(2); ++k) dsts.push_back(t.node(2, 3, k));
  constexpr std::size_t S = 1000;
  std::vector<Time> arrival(dsts.size(), -1);
  Time sender_after = -1;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(S);
    if (p.rank() == src) p.multicast(dsts, 9, buf), sender_after = p.now();
    for (std::size_t i = 0; i < dsts.size(); ++i)
      if (p.rank() == dsts[i]) arrival[i] = p.recv(src, 9, buf).arrival;
  });
  const Time work = microseconds(2) + static_cast<Time>(S) * nanoseconds(10);
  const Time h = work - nanoseconds(1500);
  for (Time a : arrival) EXPECT_EQ(a, h + (5 + 1) * nanoseconds(10) + static_cast<Time>(S) * nanoseconds(10));
  EXPECT_EQ(sender_after, std::max(work, h + static_cast<Time>(S) * nanoseconds(10)));
}

TEST(SendTail, MachineOptionAndItsBound) {
  EXPECT_EQ(parse_machine("mesh:2x2").costs.send_tail, 0);
  EXPECT_EQ(parse_machine("mesh:2x2,send_tail_us=5").costs.send_tail, microseconds(5));
  EXPECT_THROW(parse_machine("mesh:2x2,send_tail_us=-1"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x2,send_tail_us=soon"), UsageError);
  // The tail is a part of C_send: a longer one is refused when the run starts, and says why.
  const Machine m = parse_machine("mesh:1x2,send_us=10,send_tail_us=11");
  try {
    run(m, [](Proc&) {});
    ADD_FAILURE() << "a tail longer than C_send ran";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("send_tail"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("send_overhead"), std::string::npos) << e.what();
  }
}

}  // namespace
