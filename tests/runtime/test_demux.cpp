// Demultiplexing per packet (docs/model.md 2.18): with demux=packet, a packet other than the first
// of its message whose node took a packet of another message just before is matched again: it pays
// match_per_entry for every receive-queue entry that search examines (the rules of 2.5, at the time
// its header takes the ejection channel) and demux_switch, both added to its message's receive.
// Expected times below are worked out by hand from the model's formulas (2.3 to 2.5).
#include <gtest/gtest.h>

#include "support/model.hpp"

using namespace touchstone;

namespace {

constexpr std::size_t kSize = 100;  // 2 packets of 64 + 31 and 36 + 31 wire bytes on the prime machine
constexpr Time kMatch = 101;        // match_per_entry
constexpr Time kSwitch = 1009;      // demux_switch

Machine demux_machine(bool per_packet) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.costs.match_per_entry = kMatch;
  m.costs.demux_per_packet = per_packet;
  m.costs.demux_switch = kSwitch;
  return m;
}

struct Converging {
  Time arrival_a = 0, arrival_b = 0, done = 0;
};

// Ranks 0 (A) and 2 (B) each send kSize bytes to rank 1 at time 0; rank 1 posts the receive for B
// first, then the one for A, and waits for A, then B.
Converging converge(const Machine& m) {
  Converging c;
  const auto out = ts_test::bytes(kSize);
  std::vector<std::byte> from_a(kSize), from_b(kSize);
  run(m, [&](Proc& p) {
    if (p.rank() != 1) return p.send(1, 0, out);
    Request rb = p.irecv(2, 0, from_b);
    Request ra = p.irecv(0, 0, from_a);
    c.arrival_a = p.wait(ra).arrival;
    c.arrival_b = p.wait(rb).arrival;
    c.done = p.now();
  });
  EXPECT_EQ(from_a, out);
  EXPECT_EQ(from_b, out);
  return c;
}

// Both senders hand their message over at h = C_send + L*s = 1009 + 100*13 = 2309. Each path is
// injection, one link, ejection (d = 1), b = max(3, 5, 7) = 7 ps/B; wire sizes 95 and 67 bytes.
//   A0 takes rank 1's ejection channel at h + 2*23 = 2355, tail 2355 + 95*7 = 3020.
//   B0 waits there from 2355 and takes it at 3020, tail 3685.
//   A1 left A's injection channel when A0's tail did (3020 - 46 = 2974) and waits at the ejection
//   channel from 3020, behind B0: it takes it at 3685, tail 3685 + 67*7 = 4154 (A has arrived).
//   B1 takes it at 4154, tail 4623.
// The packets are taken A0, B0, A1, B1: A1 and B1 each follow another message's packet.
TEST(Demux, InterleavedPacketsAreMatchedAgain) {
  constexpr Time arrival_a = 4154, arrival_b = 4623;
  constexpr Time recv = 2003 + 100 * 17;  // C_recv + L*r
  // Per message (2.5): A's arrival walks [rB, rA] (2 entries), B's walks [rB] (1).
  const Converging off = converge(demux_machine(false));
  EXPECT_EQ(off.arrival_a, arrival_a);
  EXPECT_EQ(off.arrival_b, arrival_b);
  // A is received at 4154 + recv + 2m; B has arrived by then (4623 < 7857 + 2m).
  EXPECT_EQ(off.done, arrival_a + recv + 2 * kMatch + recv + 1 * kMatch);

  // Per packet: A1's search (at 3685, both receives posted) walks [rB, rA]: 2 entries and a
  // switch; B1's (at 4154) walks to rB, the first entry whichever of A's arrival and B1's header
  // comes first at 4154: 1 entry and a switch. The network's times do not change.
  const Converging on = converge(demux_machine(true));
  EXPECT_EQ(on.arrival_a, arrival_a);
  EXPECT_EQ(on.arrival_b, arrival_b);
  const Time done_a = arrival_a + recv + (2 + 2) * kMatch + kSwitch;
  EXPECT_EQ(on.done, done_a + recv + (1 + 1) * kMatch + kSwitch);
}

// One message at a time never switches: a 3-packet message between neighbours, and two messages
// from one sender one after the other, cost exactly what they cost without the rule.
TEST(Demux, MessagesArrivingOneAtATimeAreMatchedOnce) {
  auto program = [](Time& done) {
    return [&done](Proc& p) {
      const auto out = ts_test::bytes(150);  // 3 packets
      std::vector<std::byte> in(150);
      if (p.rank() == 0) p.send(1, 0, out), p.send(1, 1, out);
      if (p.rank() == 1) {
        Request r1 = p.irecv(0, 1, in);  // posted first: every search walks it
        p.recv(0, 0, in);
        p.wait(r1);
        done = p.now();
      }
    };
  };
  Time on = 0, off = 0;
  const RunResult a = run(demux_machine(true), program(on));
  const RunResult b = run(demux_machine(false), program(off));
  EXPECT_EQ(on, off);
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.stats.packets, 6u);
}

// A packet whose message has no receive posted yet walks every receive posted by then (2.5's
// unexpected case), and a receive posted later pays the per-message rules on top.
TEST(Demux, UnexpectedMessagesPacketsWalkEveryPostedReceive) {
  // As in InterleavedPacketsAreMatchedAgain, but rank 1 posts only B's receive before the packets
  // come (A's at time 5000, after A arrived at 4154): A1's search at 3685 walks [rB] and finds
  // nothing (1 entry); A's arrival at 4154 walks [rB] (B not arrived) and A waits as unexpected
  // (1 entry). B1's search at 4154 walks [rB] (1). B arrives at 4623: 1 entry.
  // Rank 1 waits for B first: done_b = 4623 + recv + (1 + 1) m + X; then posts A's receive at
  // done_b, which walks the unexpected queue [A] (1 entry): done_a = done_b + recv + (1 + 1 + 1) m + X.
  constexpr Time recv = 2003 + 100 * 17;
  const auto out = ts_test::bytes(kSize);
  std::vector<std::byte> from_a(kSize), from_b(kSize);
  Time done = 0;
  run(demux_machine(true), [&](Proc& p) {
    if (p.rank() != 1) return p.send(1, 0, out);
    p.recv(2, 0, from_b);
    p.recv(0, 0, from_a);
    done = p.now();
  });
  EXPECT_EQ(from_a, out);
  EXPECT_EQ(from_b, out);
  const Time done_b = 4623 + recv + 2 * kMatch + kSwitch;
  EXPECT_EQ(done, done_b + recv + 3 * kMatch + kSwitch);
}

// The delta preset demultiplexes per packet; a lone 16 KB message (34 packets) two hops away still
// costs the contention-free latency of 2.4 and 2.5, read from the preset's parameters:
// C_send + L*s - T + (d+1)*t_hop + (L + n*H)*b + C_recv + L*r + 1*m, T the send's tail (2.19).
TEST(Demux, DeltaLoneMessageKeepsItsContentionFreeLatency) {
  const Machine m = parse_machine("delta:1x3");
  ASSERT_TRUE(m.costs.demux_per_packet);
  constexpr std::size_t size = 16384, packets = 34;  // ceil(16384 / 482)
  const auto out = ts_test::bytes(size);
  std::vector<std::byte> in(size);
  Time done = 0;
  run(m, [&](Proc& p) {
    if (p.rank() == 0) p.send(2, 0, out);
    if (p.rank() == 2) p.recv(0, 0, in), done = p.now();
  });
  EXPECT_EQ(in, out);
  const NodeCosts& c = m.costs;
  const auto L = static_cast<Time>(size);
  const Time wire = L + static_cast<Time>(packets) * m.net.packet_header;
  EXPECT_EQ(done, c.send_overhead + L * c.send_per_byte - c.send_tail + 3 * m.net.hop_time + wire * m.net.link_byte_time +
                      c.recv_overhead + L * c.recv_per_byte + c.match_per_entry);
}

TEST(Demux, MachineOptions) {
  EXPECT_FALSE(parse_machine("mesh:2x2").costs.demux_per_packet);
  EXPECT_EQ(parse_machine("mesh:2x2").costs.demux_switch, 0);
  EXPECT_TRUE(parse_machine("mesh:2x2,demux=packet").costs.demux_per_packet);
  // The delta preset demultiplexes per packet, a resumed packet paying 33.64 us, inside the window
  // section 4.1's all-to-one statements leave (about 20..34 us; machines.md).
  const Machine delta = parse_machine("delta:2x2");
  EXPECT_TRUE(delta.costs.demux_per_packet);
  EXPECT_EQ(delta.costs.demux_switch, nanoseconds(33'640));
  EXPECT_FALSE(parse_machine("delta:2x2,demux=message").costs.demux_per_packet);
  EXPECT_EQ(parse_machine("delta:2x2,demux=packet,demux_us=2.5").costs.demux_switch, microseconds(2) + nanoseconds(500));
  EXPECT_THROW(parse_machine("mesh:2x2,demux=on"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x2,demux_us=-1"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x2,demux_us=5000"), UsageError);  // above the per-unit cap of 1 ms
}

}  // namespace
