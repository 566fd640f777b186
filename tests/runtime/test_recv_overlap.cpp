// Receive overlap (docs/model.md 2.15): with recv_overlap the receiver drains packet k (work
// w_k = r_p + payload_k * r) once it has arrived (tail T_k) and the CPU is free:
//   D = fold over packets of max(D, T_k) + w_k,   done = max(clock + sum w_k, D) + C_recv + e*m
// against, without overlap, done = max(clock, T_last) + C_recv + sum w_k + e*m. Expected times are
// computed here from the contention-free packet tails T_k = h + (d+1)*t_hop + (B_0+..+B_k)*b.
#include <gtest/gtest.h>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr std::size_t kSize = 150;  // 3 packets of 64, 64, 22 bytes on the prime machine

Machine overlap_machine(Time recv_per_byte, Time recv_per_packet) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.recv_per_byte = recv_per_byte;
  m.costs.recv_per_packet = recv_per_packet;
  m.costs.recv_overlap = true;
  return m;
}

// Tails of the packets of a message handed at h to a neighbour, contention-free.
std::vector<Time> tails(const Model& x, Time h, std::size_t size) {
  std::vector<Time> t;
  Time wire = 0;
  for (std::size_t k = 0; k < x.packets(size); ++k) {
    wire += x.wire(size, k);
    t.push_back(h + 2 * x.hop() + wire * x.b(1));
  }
  return t;
}

Time packet_work(const Machine& m, std::size_t size, std::size_t k) {
  const std::size_t first = k * static_cast<std::size_t>(m.net.packet_payload);
  const auto payload = static_cast<Time>(std::min<std::size_t>(m.net.packet_payload, size - first));
  return m.costs.recv_per_packet + payload * m.costs.recv_per_byte;
}

// The receiver posts its receive at `recv_at` (after computing until then).
Time receive_done(const Machine& m, Time recv_at) {
  Time done = -1;
  const auto out = ts_test::bytes(kSize);
  std::vector<std::byte> in(kSize);
  run(m, [&](Proc& p) {
    if (p.rank() == 0) p.send(1, 0, out);
    if (p.rank() == 1) {
      p.compute(recv_at);
      p.recv(0, 0, in);
      done = p.now();
    }
  });
  EXPECT_EQ(in, out);
  return done;
}

// Receive-bound (w_k > B_k * b): the CPU drains from the first packet's arrival on, so the whole
// body costs T_0 + sum w_k, not T_last + sum w_k.
TEST(RecvOverlap, ReceiveBoundMessageDrainsFromTheFirstPacket) {
  const Machine m = overlap_machine(17, 211);
  const Model x{m};
  const auto t = tails(x, x.handed(0, kSize), kSize);
  ASSERT_GT(packet_work(m, kSize, 1), x.wire(kSize, 2) * x.b(1));  // the CPU is the bottleneck
  const Time body = x.recv_cost(kSize) - m.costs.recv_overhead;
  EXPECT_EQ(receive_done(m, 0), t[0] + body + m.costs.recv_overhead);
  // Without overlap: the sum.
  Machine off = m;
  off.costs.recv_overlap = false;
  EXPECT_EQ(receive_done(off, 0), t[2] + x.recv_cost(kSize));
  EXPECT_EQ(t[2] - t[0], (x.wire(kSize, 1) + x.wire(kSize, 2)) * x.b(1));
}

// Link-bound (w_k < B_k * b): only the last packet's work is left after the arrival.
TEST(RecvOverlap, LinkBoundMessageLeavesOnlyTheLastPacketsWork) {
  const Machine m = overlap_machine(2, 11);
  const Model x{m};
  const auto t = tails(x, x.handed(0, kSize), kSize);
  for (std::size_t k = 0; k < 3; ++k) ASSERT_LT(packet_work(m, kSize, k), x.wire(kSize, k) * x.b(1));
  EXPECT_EQ(receive_done(m, 0), t[2] + packet_work(m, kSize, 2) + m.costs.recv_overhead);
}

// The receiver arrives between the first and the last packet: packets already in wait for the CPU,
// later ones are drained as they come. Expected value from the pipeline itself, and checked
// against the closed form max(clock + sum w, D).
TEST(RecvOverlap, LateReceiverDrainsWhatIsThereThenKeepsUp) {
  const Machine m = overlap_machine(17, 211);
  const Model x{m};
  const auto t = tails(x, x.handed(0, kSize), kSize);
  for (Time clock : {t[0] + 5, t[1] + 700, t[2] + 1, t[2] + 100'000}) {
    SCOPED_TRACE(clock);
    Time cpu = clock;
    for (std::size_t k = 0; k < 3; ++k) cpu = std::max(cpu, t[k]) + packet_work(m, kSize, k);
    EXPECT_EQ(receive_done(m, clock), cpu + m.costs.recv_overhead);
  }
  // A receiver that comes after the whole message pays exactly what it pays without overlap.
  Machine off = m;
  off.costs.recv_overlap = false;
  EXPECT_EQ(receive_done(m, t[2] + 100'000), receive_done(off, t[2] + 100'000));
}

// An active-message handler that runs on the receiver while it waits holds its CPU, so
// the drain cannot use that time. Rank 2's one-way request (8 B) arrives at s_r and its handler
// runs from s_r for C_recv + 8*r + H; rank 0's 3-packet message arrives entirely inside the
// handler, so the fold D := max(D, T_k) + w_k starts from the handler's end E, not from the start
// of the wait: done = E + sum w_k + C_recv. (The engine used the start of the wait, which put the
// receive's end before its start, T_2 + w_2 + C_recv < E: the clock ran backwards.)
TEST(RecvOverlap, HandlerDuringTheWaitHoldsTheCpuBeforeTheDrain) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.costs.recv_per_byte = 2;
  m.costs.recv_per_packet = 11;
  m.costs.recv_overlap = true;
  ASSERT_EQ(m.costs.match_per_entry, 0);
  const Model x{m};
  constexpr Time kHandler = 50'000;
  // The request: 1 argument word, 1 packet, 1 hop from rank 2 to rank 1, sent at 0.
  const Time s_r = x.arrival_cf(x.handed(0, 8), 1, 8);
  const Time handler_end = s_r + x.recv_cost(8) + kHandler;
  // Rank 0 sends once the request is in (no contention for rank 1's ejection channel).
  const auto t = tails(x, x.handed(s_r, kSize), kSize);
  ASSERT_LT(t[2] + packet_work(m, kSize, 2) + m.costs.recv_overhead, handler_end);  // all inside the handler
  const Time body = x.recv_cost(kSize) - m.costs.recv_overhead;
  const Time expected = handler_end + body + m.costs.recv_overhead;
  Time done = -1, handled_until = -1;
  const auto out = ts_test::bytes(kSize);
  std::vector<std::byte> in(kSize);
  run(m, [&](Proc& p) {
    if (p.rank() == 1) {
      p.am_register(5, [&](AmContext& c) {
        c.compute(kHandler);
        handled_until = c.now();
      });
      p.recv(0, 0, in);
      done = p.now();
    }
    if (p.rank() == 2) {
      const std::int64_t arg[] = {7};
      p.am_send(1, 5, arg);
    }
    if (p.rank() == 0) {
      p.compute(s_r);
      p.send(1, 0, out);
    }
  });
  EXPECT_EQ(in, out);
  EXPECT_EQ(handled_until, handler_end);
  EXPECT_EQ(done, expected);
}

// A one-packet message gains nothing: its work starts when it has arrived, either way.
TEST(RecvOverlap, OnePacketMessageIsUnchanged) {
  Machine m = overlap_machine(17, 211);
  const Model x{m};
  Time on = -1, off_t = -1;
  for (bool overlap : {true, false}) {
    m.costs.recv_overlap = overlap;
    Time done = -1;
    const auto out = ts_test::bytes(50);
    std::vector<std::byte> in(50);
    run(m, [&](Proc& p) {
      if (p.rank() == 0) p.send(1, 0, out);
      else {
        p.recv(0, 0, in);
        done = p.now();
      }
    });
    (overlap ? on : off_t) = done;
  }
  EXPECT_EQ(on, x.arrival_cf(x.handed(0, 50), 1, 50) + x.recv_cost(50));
  EXPECT_EQ(on, off_t);
}

// On the delta preset (its values calibrated to paper 000; read from the machine here): a
// node of a chain receives a 10-packet message and forwards it. The link is the bottleneck per
// packet (512 B * b > 482 B * r), so the receive ends one packet's work after the arrival.
TEST(RecvOverlap, DeltaChainForwardingPaysTheLinkNotLinkPlusReceive) {
  const Machine m = parse_machine("delta:1x3,recv_overlap=on");
  const Model x{m};
  const std::size_t size = 4820;  // 10 full packets
  ASSERT_EQ(x.packets(size), 10u);
  const Time w = m.costs.recv_per_packet + 482 * m.costs.recv_per_byte;
  ASSERT_LT(w, x.wire(size, 0) * x.b(1));
  const Time a1 = x.arrival_cf(x.handed(0, size), 1, size);
  // Each receive is posted before its message arrives and is the only one: 1 entry examined (2.5).
  const Time match = m.costs.match_per_entry;
  const Time r1 = a1 + w + m.costs.recv_overhead + match;  // node 1 has the message
  const Time a2 = x.arrival_cf(x.handed(r1, size), 1, size);
  const Time r2 = a2 + w + m.costs.recv_overhead + match;
  Time got1 = -1, got2 = -1;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(size);
    if (p.rank() == 0) p.send(1, 0, buf);
    if (p.rank() == 1) {
      p.recv(0, 0, buf);
      got1 = p.now();
      p.send(2, 0, buf);
    }
    if (p.rank() == 2) {
      p.recv(1, 0, buf);
      got2 = p.now();
    }
  });
  EXPECT_EQ(got1, r1);
  EXPECT_EQ(got2, r2);
  // Without overlap each hop pays the whole receive after the arrival: 9 packets' work more.
  const Machine off = parse_machine("delta:1x3");
  EXPECT_FALSE(off.costs.recv_overlap);
  Time off2 = -1;
  run(off, [&](Proc& p) {
    std::vector<std::byte> buf(size);
    if (p.rank() == 0) p.send(1, 0, buf);
    if (p.rank() == 1) {
      p.recv(0, 0, buf);
      p.send(2, 0, buf);
    }
    if (p.rank() == 2) {
      p.recv(1, 0, buf);
      off2 = p.now();
    }
  });
  EXPECT_EQ(off2, r2 + 2 * 9 * w);
}

// Send overlap: packet k may start once the CPU has written it, ready_k = c + C_send +
// (k+1)*s_p + min(L, (k+1)*P)*s; it starts at S_k = max(S_{k-1} + B_{k-1}*b, ready_k), and the
// message arrives at S_last + B_last*b + (d+1)*t_hop. A blocking send returns when the last packet
// has left, S_last + B_last*b.
void expect_send_overlap(Time send_per_byte) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.send_per_byte = send_per_byte;
  m.costs.send_per_packet = 101;
  m.costs.send_overlap = true;
  const Model x{m};
  Time start = 0, prev_leaves = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const auto bytes = static_cast<Time>(std::min<std::size_t>(kSize, (k + 1) * 64));
    const Time ready = m.costs.send_overhead + static_cast<Time>(k + 1) * 101 + bytes * send_per_byte;
    start = k == 0 ? ready : std::max(prev_leaves, ready);
    prev_leaves = start + x.wire(kSize, k) * x.b(1);
  }
  Time sender_after = -1;
  Status st;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(kSize);
    if (p.rank() == 0) {
      p.send(1, 0, buf);
      sender_after = p.now();
    } else {
      st = p.recv(0, 0, buf);
    }
  });
  EXPECT_EQ(sender_after, prev_leaves);
  EXPECT_EQ(st.arrival, prev_leaves + 2 * x.hop());
  // Never later than without overlap, and strictly earlier for a multi-packet message.
  EXPECT_LT(st.arrival, x.arrival_cf(x.handed(0, kSize), 1, kSize));
}

TEST(SendOverlap, CpuBoundPacketsLeaveAsTheCpuWritesThem) {
  expect_send_overlap(13);  // 101 + 64*13 = 933 > 95*7: each packet waits for the CPU
}

TEST(SendOverlap, LinkBoundPacketsLeaveBackToBack) {
  expect_send_overlap(2);  // 101 + 64*2 = 229 < 95*7: only the first packet waits for the CPU
}

TEST(RecvOverlap, MachineOption) {
  EXPECT_FALSE(parse_machine("mesh:2x2").costs.recv_overlap);
  EXPECT_TRUE(parse_machine("mesh:2x2,recv_overlap=on").costs.recv_overlap);
  EXPECT_FALSE(parse_machine("delta:2x2,recv_overlap=off").costs.recv_overlap);
  EXPECT_TRUE(parse_machine("delta:2x2,recv_overlap=on").costs.recv_overlap);
  EXPECT_THROW(parse_machine("mesh:2x2,recv_overlap=yes"), UsageError);
  EXPECT_FALSE(parse_machine("mesh:2x2").costs.send_overlap);
  EXPECT_TRUE(parse_machine("delta:2x2,send_overlap=on").costs.send_overlap);
  EXPECT_THROW(parse_machine("mesh:2x2,send_overlap=1"), UsageError);
}

}  // namespace
