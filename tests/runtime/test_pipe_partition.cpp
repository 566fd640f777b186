// Both ends of the pipe protocol between `touchstone mpirun --split-pipe` and its relay
// (touchstone/pipe_partition.hpp): a child's PipePartition on one thread, the relay's end on another,
// which answers each swap as Open MPI's exchange of two processes would.
#include <unistd.h>

#include <cstddef>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "touchstone/error.hpp"
#include "touchstone/pipe_partition.hpp"

namespace touchstone {
namespace {

std::vector<std::byte> bytes(std::size_t n, unsigned first) {
  std::vector<std::byte> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((first + i * 7) & 0xff);
  return b;
}

// Two pipes: the child reads answers from `to_child[0]` and writes to `from_child[1]`.
struct Pipes {
  int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
  Pipes() {
    EXPECT_EQ(::pipe(to_child), 0);
    EXPECT_EQ(::pipe(from_child), 0);
  }
  ~Pipes() {
    close_relay_end();
    ::close(from_child[0]);
  }
  // The relay's answering end: closed when the relay stops, however it stops, so that a child
  // waiting for an answer sees the relay gone instead of waiting for ever.
  void close_relay_end() {
    if (to_child[1] >= 0) ::close(to_child[1]);
    to_child[1] = -1;
  }
};

TEST(PipePartition, CarriesEachSwapBothWaysWhateverItsSize) {
  Pipes p;
  // Process 1 of 2. Its parts: an empty one, a small one, and one larger than a pipe's buffer (64
  // KiB), which takes several writes on both sides.
  const std::vector<std::size_t> sizes{0, 40, 300'000};
  std::thread relay([&] {
    struct Stop {
      Pipes& p;
      ~Stop() { p.close_relay_end(); }
    } stop{p};
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const auto part = relay_take_part(p.from_child[0], 2);
      ASSERT_TRUE(part.has_value());
      EXPECT_FALSE(part->all_to_all);
      EXPECT_EQ(part->bytes, bytes(sizes[k], static_cast<unsigned>(k)));
      // Process 0's part, then this one's: what MpiPartition::all_gather gives both.
      std::vector<std::byte> all = bytes(3 * sizes[k] + 1, 100);
      all.insert(all.end(), part->bytes.begin(), part->bytes.end());
      EXPECT_TRUE(relay_answer(p.to_child[1], &all));
    }
    // An all-to-all: the sizes of the child's parts for each process, of each process's for it.
    const auto part = relay_take_part(p.from_child[0], 2);
    ASSERT_TRUE(part.has_value());
    EXPECT_TRUE(part->all_to_all);
    EXPECT_EQ(part->to, (std::vector<std::size_t>{70'000, 5}));
    EXPECT_EQ(part->from, (std::vector<std::size_t>{9, 0}));
    EXPECT_EQ(part->bytes, bytes(70'005, 3));
    const std::vector<std::byte> for_it = bytes(9, 200);
    EXPECT_TRUE(relay_answer(p.to_child[1], &for_it));
    // Then another process ended before its next swap.
    ASSERT_TRUE(relay_take_part(p.from_child[0], 2).has_value());
    EXPECT_TRUE(relay_answer(p.to_child[1], nullptr));
    // The child has gone: it closed its end.
    EXPECT_FALSE(relay_take_part(p.from_child[0], 2).has_value());
  });
  {
    PipePartition child(p.to_child[0], p.from_child[1], 1, 2);
    EXPECT_EQ(child.index(), 1);
    EXPECT_EQ(child.count(), 2);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::vector<std::byte> mine = bytes(sizes[k], static_cast<unsigned>(k));
      std::vector<std::byte> expected = bytes(3 * sizes[k] + 1, 100);
      expected.insert(expected.end(), mine.begin(), mine.end());
      EXPECT_EQ(child.all_gather(mine), expected);
    }
    const std::vector<std::size_t> to{70'000, 5}, from{9, 0};
    EXPECT_EQ(child.all_to_all(bytes(70'005, 3), to, from), bytes(9, 200));
    try {
      child.all_gather(bytes(8, 0));
      ADD_FAILURE() << "the swap went on after another process ended";
    } catch (const RunError& e) {
      EXPECT_STREQ(e.what(), "another process of the split run ended before this one (its report says why)");
    }
  }  // closes both of the child's ends
  relay.join();
}

TEST(PipePartition, AGoneRelayIsARunError) {
  Pipes p;
  p.close_relay_end();  // the relay has gone before answering
  std::thread relay([&] { EXPECT_TRUE(relay_take_part(p.from_child[0], 2).has_value()); });
  PipePartition child(p.to_child[0], p.from_child[1], 0, 2);
  try {
    child.all_gather(bytes(16, 1));
    ADD_FAILURE() << "no error without a relay";
  } catch (const RunError& e) {
    EXPECT_STREQ(e.what(), "the split run's relay (touchstone-distributed) has gone");
  }
  relay.join();
}

}  // namespace
}  // namespace touchstone
