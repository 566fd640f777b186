// Per-packet CPU costs (docs/model.md 2.14): a send costs C_send + L*s + n*s_p and a receive
// C_recv + L*r + n*r_p, n = max(1, ceil(L / payload)). Expected times are computed here from the
// formula, on the prime machine of tests/support/model.hpp plus distinct prime per-packet costs.
#include <gtest/gtest.h>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr Time kSendPerPacket = 101, kRecvPerPacket = 211;

Machine packet_machine(const std::string& spec) {
  Machine m = ts_test::prime_machine(spec);
  m.costs.send_per_packet = kSendPerPacket;
  m.costs.recv_per_packet = kRecvPerPacket;
  return m;
}

struct Timing {
  Time sender_after = -1, receiver_after = -1;
  Status st;
};

Timing one_message(const Machine& m, std::size_t size) {
  Timing t;
  const auto out = ts_test::bytes(size);
  std::vector<std::byte> in(size);
  run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      p.send(1, 5, out);
      t.sender_after = p.now();
    } else {
      t.st = p.recv(0, 5, in);
      t.receiver_after = p.now();
    }
  });
  EXPECT_EQ(in, out);
  return t;
}

// 0 bytes (one header-only packet), 1 packet, exactly 2 packets, 3 packets (the last partial).
TEST(PacketCosts, SendAndReceiveChargeEveryPacket) {
  const Machine m = packet_machine("mesh:1x2");
  const Model x{m};
  for (std::size_t size : {std::size_t{0}, std::size_t{40}, std::size_t{128}, std::size_t{150}}) {
    SCOPED_TRACE(size);
    const Time n = size <= 64 ? 1 : size <= 128 ? 2 : 3;
    const Time send = m.costs.send_overhead + static_cast<Time>(size) * m.costs.send_per_byte + n * kSendPerPacket;
    const Time recv = m.costs.recv_overhead + static_cast<Time>(size) * m.costs.recv_per_byte + n * kRecvPerPacket;
    const Time wire = static_cast<Time>(size) + n * m.net.packet_header;
    const Time arrival = send + 2 * m.net.hop_time + wire * x.b(1);
    const Timing got = one_message(m, size);
    EXPECT_EQ(got.st.arrival, arrival);
    EXPECT_EQ(got.sender_after, arrival - 2 * m.net.hop_time);
    EXPECT_EQ(got.receiver_after, arrival + recv);
  }
}

// Without per-packet costs nothing changes: the same message on the plain prime machine.
TEST(PacketCosts, ZeroByDefaultLeavesTheOldFormula) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  EXPECT_EQ(m.costs.send_per_packet, 0);
  EXPECT_EQ(m.costs.recv_per_packet, 0);
  const Model x{m};
  const Timing got = one_message(m, 150);
  EXPECT_EQ(got.receiver_after,
            m.costs.send_overhead + 150 * m.costs.send_per_byte + 2 * m.net.hop_time + (150 + 3 * 31) * x.b(1) +
                m.costs.recv_overhead + 150 * m.costs.recv_per_byte);
}

// Active-message handlers pay the per-packet receive cost of the request and the per-packet send
// cost of the reply (docs/model.md 7). A 2-packet request (100 B, no arguments) to a neighbour on
// the prime mesh, a handler that replies with 1 word (8 B, one packet).
TEST(PacketCosts, ActiveMessageHandlersPayPerPacket) {
  const Machine m = packet_machine("mesh:1x2");
  const Model x{m};
  const std::size_t req = 100, rep = 8;
  const Time arrive = x.arrival_cf(x.handed(0, req), 1, req);
  const Time reply_handed = arrive + x.recv_cost(req) + x.send_cost(rep);
  const Time reply_arrives = x.arrival_cf(reply_handed, 1, rep);
  AmReply got;
  Time done = -1;
  run(m, [&](Proc& p) {
    p.am_register(1, [](AmContext& c) {
      const std::array<std::int64_t, 1> r{static_cast<std::int64_t>(c.payload().size())};
      c.reply(r);
    });
    p.barrier();
    if (p.rank() != 0) return;
    const Time start = p.now();
    std::vector<std::byte> payload(req);
    AmFuture f = p.am_request(1, 1, {}, payload);
    got = p.am_wait(f);
    done = p.now() - start;
  });
  ASSERT_EQ(got.args.size(), 1u);
  EXPECT_EQ(got.args[0], 100);
  EXPECT_EQ(done, reply_arrives + x.recv_cost(rep));
}

TEST(PacketCosts, MachineOptions) {
  const Machine m = parse_machine("mesh:2x2,send_us_per_packet=1.6,recv_us_per_packet=1.7");
  EXPECT_EQ(m.costs.send_per_packet, nanoseconds(1600));
  EXPECT_EQ(m.costs.recv_per_packet, nanoseconds(1700));
  EXPECT_EQ(m.send_cost(0, 33), m.costs.send_overhead + 33 * m.costs.send_per_byte + 1 * nanoseconds(1600));
  EXPECT_EQ(m.recv_cost(0, 1025), m.costs.recv_overhead + 1025 * m.costs.recv_per_byte + 2 * nanoseconds(1700));
  EXPECT_THROW(parse_machine("mesh:2x2,send_us_per_packet=-1"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x2,recv_us_per_packet=x"), UsageError);
}

}  // namespace
