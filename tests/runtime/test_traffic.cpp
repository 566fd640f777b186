// A rank's messages so far (Proc::traffic): its program's and its tasks' sends and completed
// receives, each counted once with its payload bytes, the same on any number of host cores.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

#include "support/model.hpp"

using namespace touchstone;

namespace {

// Rank 0 sends 10 and 30 bytes to rank 1, and its task 5 bytes to rank 2's task, which rank 2
// waits for; every rank reads its traffic after its last call.
std::array<Traffic, 3> traffic_of_a_run(int host_cores) {
  std::array<Traffic, 3> seen{};
  RunOptions o;
  o.host_cores = host_cores;
  o.parallel_programs_from_us = 0;  // every instant's programs at once when more than one core
  run(
      ts_test::prime_machine("mesh:1x3"),
      [&](Proc& p) {
        std::vector<std::byte> buf(30);
        const Group w = p.world();
        if (p.rank() == 0) {
          Request task = p.spawn(w, [&](const Group& g) { p.send(2, 0, std::span(buf).first(5), g); });
          p.send(1, 1, std::span(buf).first(10));
          p.send(1, 2, std::span(buf).first(30));
          p.wait(task);
        } else if (p.rank() == 1) {
          p.recv(0, 1, buf);
          p.recv(0, 2, buf);
        } else {
          Request task = p.spawn(w, [&](const Group& g) { p.recv(0, 0, buf, g); });
          p.wait(task);
        }
        seen[static_cast<std::size_t>(p.rank())] = p.traffic();
      },
      o);
  return seen;
}

void expect_traffic(const Traffic& t, std::uint64_t sent, std::uint64_t sent_bytes, std::uint64_t received,
                    std::uint64_t received_bytes) {
  EXPECT_EQ(t.messages_sent, sent);
  EXPECT_EQ(t.bytes_sent, sent_bytes);
  EXPECT_EQ(t.messages_received, received);
  EXPECT_EQ(t.bytes_received, received_bytes);
}

TEST(Traffic, CountsEachRanksMessagesAndBytesItsTasksIncluded) {
  for (const int cores : {1, 2}) {
    SCOPED_TRACE(cores);
    const std::array<Traffic, 3> t = traffic_of_a_run(cores);
    expect_traffic(t[0], 3, 45, 0, 0);
    expect_traffic(t[1], 0, 0, 2, 40);
    expect_traffic(t[2], 0, 0, 1, 5);
  }
}

}  // namespace
