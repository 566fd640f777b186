// The cm5:P machine (paper 003, section 3): a 4-ary fat tree whose node-to-node bandwidth is
// 20 MB/s inside a cluster of 4, 10 MB/s inside 16 and 5 MB/s beyond; 16-byte payloads in 20-byte
// packets; 1.6 us to send and 1.7 us to receive a one-packet message, of which 1.0 us per packet
// (docs/model.md 2.14), each packet leaving as soon as the sending CPU has written it and read by
// the receiving CPU as it arrives (2.15). Times computed from the contention-free formulas: packet
// k's tail arrives at
//   T_0 = C_s + s_p + (d+1)*t_hop + 20*b,   T_k = T_(k-1) + max(20*b, s_p),
// the receive drains D = max(D, T_k) + r_p and ends at D + C_r.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

Time recv_done(const Machine& m, int src, int dst) {
  Time done = 0;
  run(m, [&](Proc& p) {
    std::array<std::byte, 32> buf{};
    if (p.rank() == src) p.send(dst, 0, buf);
    if (p.rank() == dst) {
      p.recv(src, 0, buf);
      done = p.now();
    }
  });
  return done;
}

TEST(Cm5, FatTreeLevels) {
  const Machine m = parse_machine("cm5:32");
  EXPECT_EQ(m.name, "cm5:32");
  EXPECT_EQ(m.nodes(), 32);
  EXPECT_EQ(m.topology->distance(0, 1), 2);   // inside a cluster of 4
  EXPECT_EQ(m.topology->distance(0, 5), 4);   // inside a cluster of 16
  EXPECT_EQ(m.topology->distance(0, 31), 6);  // beyond
  EXPECT_EQ(m.net.barrier, BarrierKind::hardware);
  // 32 bytes = 2 packets of 16 + 4 header bytes = 40 bytes on the wire; the CPUs pay 1.0 us for
  // each packet on top of 0.6 us (send) and 0.7 us (receive) per message.
  EXPECT_EQ(m.costs.send_overhead, nanoseconds(600));
  EXPECT_EQ(m.costs.recv_overhead, nanoseconds(700));
  EXPECT_TRUE(m.costs.recv_overlap);
  EXPECT_TRUE(m.costs.send_overlap);
  EXPECT_EQ(m.net.inj_ports, 2);  // docs/machines.md, "The CM-5"
  EXPECT_EQ(m.net.ej_ports, 2);
  auto expected = [](Time d, Time b) {
    const Time t0 = 600 + 1000 + (d + 1) * 100 + 20 * b, t1 = t0 + std::max<Time>(20 * b, 1000);
    return nanoseconds(std::max(t0 + 1000, t1) + 1000 + 700);
  };
  EXPECT_EQ(recv_done(m, 0, 1), expected(2, 50));    // 20 MB/s: 5.6 us (CPU and channel alike)
  EXPECT_EQ(recv_done(m, 0, 5), expected(4, 100));   // 10 MB/s: 7.8 us (link-bound)
  EXPECT_EQ(recv_done(m, 0, 31), expected(6, 200));  // 5 MB/s: 12.0 us (link-bound)
  EXPECT_EQ(expected(2, 50), nanoseconds(5600));
  EXPECT_EQ(expected(6, 200), nanoseconds(12000));
}

// The paper's statement itself: a single-packet active message costs 1.6 us to send and 1.7 us to
// receive, whatever its payload up to 16 bytes.
TEST(Cm5, SinglePacketCostsAreThePapers) {
  const Machine m = parse_machine("cm5:32");
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{16}}) {
    EXPECT_EQ(m.send_cost(0, bytes), nanoseconds(1600));
    EXPECT_EQ(m.recv_cost(0, bytes), nanoseconds(1700));
  }
  EXPECT_EQ(m.send_cost(0, 17), nanoseconds(2600));    // 0.6 + 2 x 1.0
  EXPECT_EQ(m.recv_cost(0, 160), nanoseconds(10700));  // 0.7 + 10 x 1.0
}

// Section 3's "a peak bandwidth of 20 megabytes per second ... can be achieved" inside a cluster
// of 4: a long message streams at the channels' 20 B per 1.0 us, the CPUs' 1.0 us per packet
// hidden behind it. 1600 bytes = 100 packets, 2000 wire bytes: the last packet's tail arrives at
// 600 + 1000 + 300 + 100 x 1000 ns, and the receive ends one packet's read and 700 ns later.
TEST(Cm5, ALongMessageStreamsAtThePeakBandwidth) {
  const Machine m = parse_machine("cm5:32");
  Time done = 0;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(1600);
    if (p.rank() == 0) p.send(1, 0, buf);
    if (p.rank() == 1) {
      p.recv(0, 0, buf);
      done = p.now();
    }
  });
  EXPECT_EQ(done, nanoseconds(600 + 1000 + 300 + 100 * 1000 + 1000 + 700));
}

TEST(Cm5, SizesAndErrors) {
  EXPECT_EQ(parse_machine("cm5").nodes(), 32);
  EXPECT_EQ(parse_machine("cm5:1024").nodes(), 1024);
  EXPECT_EQ(parse_machine("cm5:1024").topology->distance(0, 1023), 10);
  EXPECT_THROW(parse_machine("cm5:16"), UsageError);
  EXPECT_THROW(parse_machine("cm5:2048"), UsageError);
  EXPECT_THROW(parse_machine("cm5:x"), UsageError);
}

}  // namespace
