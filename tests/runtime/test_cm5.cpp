// The cm5:P machine (paper 003, section 3): a 4-ary fat tree whose node-to-node bandwidth is
// 20 MB/s inside a cluster of 4, 10 MB/s inside 16 and 5 MB/s beyond; 16-byte payloads in 20-byte
// packets; 1.6 us to send and 1.7 us to receive a one-packet message. Times computed from the
// contention-free formula of docs/model.md 2.3:
//   arrival = C_send + (d+1)*t_hop + (size + packets*header)*b,  done = arrival + C_recv.
#include <gtest/gtest.h>

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
  // 32 bytes = 2 packets of 16 + 4 header bytes = 40 bytes on the wire.
  EXPECT_EQ(recv_done(m, 0, 1), nanoseconds(1600 + 3 * 100 + 40 * 50 + 1700));    // 20 MB/s
  EXPECT_EQ(recv_done(m, 0, 5), nanoseconds(1600 + 5 * 100 + 40 * 100 + 1700));   // 10 MB/s
  EXPECT_EQ(recv_done(m, 0, 31), nanoseconds(1600 + 7 * 100 + 40 * 200 + 1700));  // 5 MB/s
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
