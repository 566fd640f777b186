// Bounded receive buffers (docs/model.md 2.3): the first packet of a message needs `size` bytes of buffer
// at its destination when its header reaches the ejection channel (admitted when used + size <=
// cap, or when nothing is in use); otherwise the worm waits there, holding its whole path. Space
// is freed when the receive completes, at the receiver's clock after the receive cost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "algorithms/registry.hpp"
#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

// mesh:1x4. M1: 2->3 fills node 3's buffer; node 3 computes for a long time before receiving.
// M2: 1->3 (links 1-2, 2-3) finds no room and waits at node 3's ejection channel holding links 1-2
// and 2-3. M3: 0->2 (links 0-1, 1-2) is delayed at link 1-2 until M2 has streamed.
struct Times {
  Status m1, m2, m3;
  Time r3_after_m1 = -1, r3_after_m2 = -1, r2_after_m3 = -1, sender3_after = -1;
};

constexpr std::size_t kS1 = 60, kS2 = 60, kS3 = 40;
constexpr Time kReceiverComputes = 100'000;

Times run_pushback(const Machine& m, Time delta2, Time delta3) {
  Times t;
  const auto out = ts_test::bytes(64);
  std::vector<std::byte> in(64);
  run(m, [&](Proc& p) {
    switch (p.rank()) {
      case 0:
        p.compute(delta3);
        p.send(2, 0, std::span(out).first(kS3));
        t.sender3_after = p.now();
        break;
      case 1:
        p.compute(delta2);
        p.send(3, 0, std::span(out).first(kS2));
        break;
      case 2:
        p.send(3, 0, std::span(out).first(kS1));
        t.m3 = p.recv(0, 0, in);
        t.r2_after_m3 = p.now();
        break;
      case 3:
        p.compute(kReceiverComputes);
        t.m1 = p.recv(2, 0, in);
        t.r3_after_m1 = p.now();
        t.m2 = p.recv(1, 0, in);
        t.r3_after_m2 = p.now();
        break;
    }
  });
  return t;
}

TEST(ReceiveBuffers, FullBufferPushesBackIntoTheNetworkAndDelaysACrossingMessage) {
  Machine m = ts_test::prime_machine("mesh:1x4");
  m.net.recv_buffer = 100;  // M1 + M2 = 120 > 100
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);

  const Time h1 = x.handed(0, kS1);
  const Time t1 = x.arrival_cf(h1, 1, kS1);  // admitted: the buffer is empty
  const Time delta2 = t1 - x.send_cost(kS2);  // M2 handed over when M1 is in
  const Time h2 = x.handed(delta2, kS2);
  const Time e2 = h2 + 3 * hop;  // M2's header at node 3's ejection channel: no room, waits
  ASSERT_GE(e2, t1);
  const Time f1 = x.recv_done(kReceiverComputes, t1, kS1);  // node 3 receives M1: 60 bytes freed
  ASSERT_GT(f1, e2);
  const Time t2 = f1 + x.wire_total(kS2) * b;  // M2 streams from f1 on
  const Time f2 = x.recv_done(f1, t2, kS2);
  const Time m2_frees_12 = t2 - 2 * hop;  // position 1 of d = 2

  const Time h3 = e2 + 1000;
  const Time delta3 = h3 - x.send_cost(kS3);
  const Time m3_asks_12 = h3 + 2 * hop;  // position 2 of M3
  ASSERT_LT(m3_asks_12, m2_frees_12);
  const Time t3 = m2_frees_12 + hop + x.wire_total(kS3) * b;

  const Times got = run_pushback(m, delta2, delta3);
  EXPECT_EQ(got.m1.arrival, t1);
  EXPECT_EQ(got.r3_after_m1, f1);
  EXPECT_EQ(got.m2.arrival, t2);
  EXPECT_EQ(got.r3_after_m2, f2);
  EXPECT_EQ(got.m3.arrival, t3);
  EXPECT_EQ(got.sender3_after, t3 - 3 * hop);
  EXPECT_EQ(got.r2_after_m3, x.recv_done(x.send_return_cf(x.handed(0, kS1), 1, kS1), t3, kS3));

  // The same traffic with unlimited buffering: M2 ejects at once, its tail is long past link 1-2
  // when M3 asks for it, and M3 is contention-free.
  Machine u = m;
  u.net.recv_buffer = -1;
  const Time t2_free = x.arrival_cf(h2, 2, kS2);
  ASSERT_LE(t2_free - 2 * hop, m3_asks_12);
  const Times free = run_pushback(u, delta2, delta3);
  EXPECT_EQ(free.m1.arrival, t1);
  EXPECT_EQ(free.m2.arrival, t2_free);
  EXPECT_EQ(free.r3_after_m2, x.recv_done(f1, t2_free, kS2));
  EXPECT_EQ(free.m3.arrival, x.arrival_cf(h3, 2, kS3));
  EXPECT_EQ(free.sender3_after, x.send_return_cf(h3, 2, kS3));
}

// A message waiting for buffer space must not stop the later packets of a message already
// admitted: on mesh:2x2, M1 (2->3 from the left, two packets) is admitted; M2 (1->3 from above,
// a disjoint link) reaches node 3 between M1's packets and finds no room. M1's second packet still
// ejects right behind its first (the waiting M2 does not take the ejection channel); M2 streams
// once node 3 has received M1.
void admitted_then_waiting(const std::string& spec, int src1, int src2, int d2, bool expect_deadlock) {
  Machine m = ts_test::prime_machine(spec);
  m.net.recv_buffer = 150;
  const Model x{m};
  const Time hop = x.hop(), b = x.b(1);
  const std::size_t s1 = 64 + 40, s2 = 60;  // 104 + 60 > 150
  const Time h1 = x.handed(0, s1);
  const Time e1 = h1 + 2 * hop;              // M1's first header at node 3's ejection channel
  const Time t1_0 = e1 + x.wire(s1, 0) * b;  // first tail; the second packet follows at once
  const Time t1 = x.arrival_cf(h1, 1, s1);
  ASSERT_EQ(t1, t1_0 + x.wire(s1, 1) * b);
  // M2's header reaches node 3 half-way through M1's first packet.
  const Time e2 = (e1 + t1_0) / 2;
  const Time delta2 = e2 - (d2 + 1) * hop - x.send_cost(s2);
  ASSERT_GT(delta2, 0);
  ASSERT_EQ(x.handed(delta2, s2) + (d2 + 1) * hop, e2);
  constexpr Time kCompute = 200'000;
  const Time f1 = x.recv_done(kCompute, t1, s1);
  const Time t2 = f1 + x.wire_total(s2) * b;  // admitted when M1's receive completes
  Status a1, a2;
  Time after = -1;
  const auto out = ts_test::bytes(s1);
  std::vector<std::byte> in(s1);
  auto program = [&](Proc& p) {
    if (p.rank() == src1) p.send(3, 0, out);
    if (p.rank() == src2) {
      p.compute(delta2);
      p.send(3, 0, std::span(out).first(s2));
    }
    if (p.rank() == 3) {
      p.compute(kCompute);
      a1 = p.recv(src1, 0, in);
      a2 = p.recv(src2, 0, in);
      after = p.now();
    }
  };
  if (expect_deadlock) {
    try {
      run(m, program);
      ADD_FAILURE() << "no deadlock";
    } catch (const RunError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("receive-buffer space at node 3"), std::string::npos) << what;
      EXPECT_NE(what.find("packet 1 of message"), std::string::npos) << what;
      // The report names the cycle through the buffer: M1 (message #1: ids follow the order in which
      // sends execute, and rank 1's send executes first) reserved 104 B with its first packet in; its
      // second waits for link 2-3 held by M2 (#0), which waits for node 3's buffer.
      EXPECT_EQ(what.rfind("message-dependent deadlock at t=", 0), 0u) << what;
      EXPECT_NE(what.find("The receive buffer of node 3 is full (104 of 150 bytes reserved), reserved by:\n"
                          "  messages still arriving, each reserved whole at its first packet, the rest blocked in "
                          "the network:\n"
                          "    message #1 from 2 (104 B reserved; 1 of its 2 packet(s) in): packet 1 of message #1 "
                          "(2 -> 3) waits for link (0,2)->(0,3) held by packet 0 of message #0 (1 -> 3), which waits "
                          "for receive-buffer space at node 3: a cycle through this buffer\n"),
                std::string::npos)
          << what;
    }
    return;
  }
  run(m, program);
  EXPECT_EQ(a1.arrival, t1);
  EXPECT_EQ(a2.arrival, t2);
  EXPECT_EQ(after, x.recv_done(f1, t2, s2));
}

TEST(ReceiveBuffers, WaitingMessageDoesNotBlockTheLaterPacketsOfAnAdmittedOne) {
  admitted_then_waiting("mesh:2x2", 2, 1, 1, false);
}

// On mesh:1x4 the waiting M2 (1->3) holds link 2-3, which M1's (2->3) second packet needs, while
// M1's reservation keeps M2 out: a cycle through the receive buffer. The run ends in a report
// naming the buffer wait and the blocked packet instead of hanging.
TEST(ReceiveBuffers, WaitingWormHoldingTheLinkOfAnAdmittedMessageIsAReportedDeadlock) {
  admitted_then_waiting("mesh:1x4", 2, 1, 2, true);
}

// used + size == cap is admitted: 40 + 60 = 100.
TEST(ReceiveBuffers, MessageThatExactlyFillsTheBufferIsAdmitted) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.net.recv_buffer = 100;
  const Model x{m};
  const std::size_t s1 = 40, s2 = 60;
  Status a, c;
  const auto out = ts_test::bytes(64);
  std::vector<std::byte> in(64);
  const Time h1 = x.handed(0, s1);
  const Time delta2 = x.arrival_cf(h1, 1, s1);  // M2 leaves after M1 is in the buffer
  run(m, [&](Proc& p) {
    if (p.rank() == 1) p.send(2, 0, std::span(out).first(s1));
    if (p.rank() == 0) {
      p.compute(delta2);
      p.send(2, 0, std::span(out).first(s2));
    }
    if (p.rank() == 2) {
      p.compute(1'000'000);
      a = p.recv(1, 0, in);
      c = p.recv(0, 0, in);
    }
  });
  EXPECT_EQ(a.arrival, x.arrival_cf(h1, 1, s1));
  EXPECT_EQ(c.arrival, x.arrival_cf(x.handed(delta2, s2), 2, s2));
}

// A message larger than the whole buffer is admitted when the buffer is empty (it could never fit).
TEST(ReceiveBuffers, MessageLargerThanTheBufferIsAdmittedAlone) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.net.recv_buffer = 100;
  const Model x{m};
  const std::size_t s = 300;
  Status st;
  const auto out = ts_test::bytes(s);
  std::vector<std::byte> in(s);
  run(m, [&](Proc& p) {
    if (p.rank() == 0) p.send(1, 0, out);
    else st = p.recv(0, 0, in);
  });
  EXPECT_EQ(st.arrival, x.arrival_cf(x.handed(0, s), 1, s));
  EXPECT_EQ(in, out);
}

TEST(ReceiveBuffers, BufferOptionOfTheMachineSpec) {
  EXPECT_EQ(parse_machine("mesh:4x4,buffer=4096").net.recv_buffer, 4096);
  EXPECT_EQ(parse_machine("mesh:4x4,buffer=unlimited").net.recv_buffer, -1);
  EXPECT_EQ(parse_machine("mesh:4x4").net.recv_buffer, -1);
}

}  // namespace

// A deadlock that looks like a model bug and is none: on mesh:3x3 with 2 KiB receive buffers an
// all-to-all of 700-byte messages in 64-byte packets deadlocks although every receive is posted.
// Node 0's buffer holds two reservations of 700 B (messages from 4 and 7, each with only its
// first packet in); the third 700-byte message (from 5) does not fit the remaining 648 B, and its
// waiting worm holds the links the later packets of the other two need. A machine that allocates a
// message's buffer at its first packet and holds refused worms in the network (docs/model.md 2.7)
// deadlocks here; the report names the buffer, its reservations and the cycle of each.
TEST(ReceiveBuffers, AllToAllWithPostedReceivesDeadlocksThroughAReservedBuffer) {
  const auto& alg = algorithms::find("alltoall/1-lev-dir");
  const algorithms::Args args{700, 0, true};
  const Machine m = parse_machine("mesh:3x3,buffer=2048,packet=64+0");
  std::string what;
  try {
    run(m, [&](Proc& p) { alg.program(p, args); });
  } catch (const RunError& e) {
    what = e.what();
  }
  ASSERT_FALSE(what.empty()) << "no deadlock";
  EXPECT_EQ(what.rfind("message-dependent deadlock at t=", 0), 0u) << what;
  EXPECT_THAT(what, testing::HasSubstr(
      "The receive buffer of node 0 is full (1400 of 2048 bytes reserved), reserved by:\n"
      "  messages still arriving, each reserved whole at its first packet, the rest blocked in the "
      "network:\n"
      "    message #32 from 4 (700 B reserved; 1 of its 11 packet(s) in): packet 1 of message #32 "
      "(4 -> 0) waits for link (1,1)->(1,0) held by packet 0 of message #40 (5 -> 0), which waits for "
      "receive-buffer space at node 0: a cycle through this buffer\n"
      "    message #56 from 7 (700 B reserved; 1 of its 11 packet(s) in): packet 1 of message #56 "
      "(7 -> 0) waits for link (2,1)->(2,0) held by packet 0 of message #64 (8 -> 0), which waits for "
      "link (1,0)->(0,0) held by packet 0 of message #40 (5 -> 0), which waits for receive-buffer "
      "space at node 0: a cycle through this buffer\n"));
  EXPECT_THAT(what, testing::HasSubstr("packet 0 of message #40 (5 -> 0, 700 bytes) waits for receive-buffer space "
                                       "at node 0 (1400 of 2048 bytes in use)"));
  // With room for four whole messages (2800 B) the same all-to-all completes.
  EXPECT_NO_THROW(run(parse_machine("mesh:3x3,buffer=2800,packet=64+0"), [&](Proc& p) { alg.program(p, args); }));
}
