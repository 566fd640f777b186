// With t_hop == 0 a message's tail arrives at the moment its sender's port frees: the receiver
// may take (and the runtime free) the message before the port-free event runs. The port-free
// event must not read the message (it carries the node and port instead). Times from the
// contention-free formula (docs/model.md 2.3) with the generic mesh costs: C_send = C_recv = 10 us,
// 10 ns per byte on either CPU, 40 ns per byte on the wire, 32 header bytes per packet.
#include <gtest/gtest.h>

#include <array>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

TEST(ZeroHopTime, PortFreesAfterTheMessageWasReceived) {
  const Machine m = parse_machine("mesh:1x2,hop_ns=0");
  ASSERT_EQ(m.net.hop_time, 0);
  Status s1, s2;
  bool ok = true;
  run(m, [&](Proc& p) {
    std::array<std::byte, 100> a{}, b{};
    if (p.rank() == 0) {
      a.fill(std::byte{1});
      b.fill(std::byte{2});
      Request r1 = p.isend(1, 0, a), r2 = p.isend(1, 0, b);
      p.wait(r1);
      p.wait(r2);
    } else {
      s1 = p.recv(0, 0, a);
      s2 = p.recv(0, 0, b);
      ok = a[99] == std::byte{1} && b[0] == std::byte{2};
    }
  });
  EXPECT_TRUE(ok);
  // First: handed at 10 + 100*0.01 = 11 us, streams (100 + 32) * 40 ns = 5.28 us.
  EXPECT_EQ(s1.arrival, nanoseconds(16'280));
  // Second: handed at 22 us (after the first's 11 us of CPU), the port is free since 16.28 us.
  EXPECT_EQ(s2.arrival, nanoseconds(27'280));
}

}  // namespace
