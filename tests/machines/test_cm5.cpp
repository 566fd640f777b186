// The cm5:P machine (paper 003, section 3): a 4-ary fat tree whose node-to-node bandwidth is
// 20 MB/s inside a cluster of 4, 10 MB/s inside 16 and 5 MB/s beyond; 16-byte payloads in 20-byte
// packets; 1.6 us to send and 1.7 us to receive a one-packet message, charged per packet
// (docs/model.md 2.14), the receiving CPU polling each packet as it arrives (2.15). Times computed
// from the contention-free formulas: packet k's tail arrives at
//   T_k = n*s_p + (d+1)*t_hop + (k+1)*20*b,   and the receive ends at D + 0, D = max(D, T_k) + r_p.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

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
  // 32 bytes = 2 packets of 16 + 4 header bytes = 40 bytes on the wire; the CPUs pay each packet,
  // the receiver reads packet 0 while packet 1 is on its way.
  EXPECT_EQ(m.costs.send_overhead + m.costs.recv_overhead, 0);
  EXPECT_TRUE(m.costs.recv_overlap);
  EXPECT_FALSE(m.costs.send_overlap);  // docs/machines.md, "The CM-5"
  auto expected = [](Time d, Time b) {
    const Time t0 = 2 * 1600 + (d + 1) * 100 + 20 * b, t1 = t0 + 20 * b;
    return nanoseconds(std::max(t0 + 1700, t1) + 1700);
  };
  EXPECT_EQ(recv_done(m, 0, 1), expected(2, 50));    // 20 MB/s: 7.9 us (receive-bound)
  EXPECT_EQ(recv_done(m, 0, 5), expected(4, 100));   // 10 MB/s: 9.4 us
  EXPECT_EQ(recv_done(m, 0, 31), expected(6, 200));  // 5 MB/s: 13.6 us (link-bound)
  EXPECT_EQ(expected(2, 50), nanoseconds(7900));
  EXPECT_EQ(expected(6, 200), nanoseconds(13600));
}

// The paper's statement itself: a single-packet active message costs 1.6 us to send and 1.7 us to
// receive, whatever its payload up to 16 bytes.
TEST(Cm5, SinglePacketCostsAreThePapers) {
  const Machine m = parse_machine("cm5:32");
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{16}}) {
    EXPECT_EQ(m.send_cost(0, bytes), nanoseconds(1600));
    EXPECT_EQ(m.recv_cost(0, bytes), nanoseconds(1700));
  }
  EXPECT_EQ(m.send_cost(0, 17), nanoseconds(3200));
  EXPECT_EQ(m.recv_cost(0, 160), nanoseconds(17000));
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
