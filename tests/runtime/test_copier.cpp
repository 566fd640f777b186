// The Copier (runtime/src/copier.hpp) on its own: whichever thread makes a copy (the copying
// thread, the thread that hands copies over, or any thread that waits for one), wait(k) returns only
// once copies 1..k are all in place, and every copy is made exactly once. Run under ThreadSanitizer
// too, where a wait that returned early would also be a data race on the bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "../../runtime/src/copier.hpp"

namespace touchstone::detail {
namespace {

constexpr std::size_t kBytes = Copier::kHandOverFrom;  // each copy is handed over

// `count` copies of kBytes, each from a source filled with its own pattern into a zeroed target.
struct Copies {
  explicit Copies(std::size_t count) : from(count * kBytes), to(count * kBytes, std::byte{0}) {
    for (std::size_t i = 0; i < from.size(); ++i) from[i] = static_cast<std::byte>((i * 131 + i / kBytes) % 251 + 1);
  }
  std::byte* target(std::size_t i) { return to.data() + i * kBytes; }
  const std::byte* target(std::size_t i) const { return to.data() + i * kBytes; }
  const std::byte* source(std::size_t i) const { return from.data() + i * kBytes; }
  // Copy i (from 0) holds its source's bytes.
  bool made(std::size_t i) const { return std::equal(target(i), target(i) + kBytes, source(i)); }
  std::vector<std::byte> from, to;
};

TEST(Copier, WaitReturnsOnlyOnceEveryCopyUpToItIsMade) {
  // More copies than the Copier has slots, so every slot is used several times over.
  constexpr std::size_t kCount = 5000;
  Copies c(kCount);
  Copier copier(true);
  std::mt19937 rng(7);
  std::vector<std::uint64_t> numbers;
  std::size_t checked = 0;  // copies 1..checked were seen made (a made copy stays made)
  for (std::size_t i = 0; i < kCount; ++i) {
    numbers.push_back(copier.copy(c.target(i), c.source(i), kBytes));
    ASSERT_EQ(numbers.back(), i + 1);
    if (rng() % 5 == 0) {
      const std::size_t upto = rng() % (i + 1);
      copier.wait(numbers[upto]);
      for (; checked <= upto; ++checked)
        ASSERT_TRUE(c.made(checked)) << "copy " << checked + 1 << " after wait(" << upto + 1 << ")";
    }
    // Now and then long enough for the copying thread to go to sleep between two copies.
    if (rng() % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  copier.wait_all();
  for (std::size_t j = 0; j < kCount; ++j) ASSERT_TRUE(c.made(j)) << "copy " << j + 1;
}

TEST(Copier, OtherThreadsWaitingMakeCopiesToo) {
  constexpr std::size_t kCount = 3000;
  Copies c(kCount);
  Copier copier(true);
  std::atomic<std::uint64_t> handed{0};
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < 3; ++w)
    waiters.emplace_back([&] {
      std::uint64_t checked = 0;
      while (!done.load(std::memory_order_acquire)) {
        const std::uint64_t k = handed.load(std::memory_order_acquire);
        copier.wait(k);
        for (; checked < k; ++checked)
          if (!c.made(checked)) wrong.fetch_add(1);
      }
    });
  for (std::size_t i = 0; i < kCount; ++i) {
    const std::uint64_t k = copier.copy(c.target(i), c.source(i), kBytes);
    handed.store(k, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  for (auto& t : waiters) t.join();
  copier.wait_all();
  EXPECT_EQ(wrong.load(), 0);
  for (std::size_t j = 0; j < kCount; ++j) ASSERT_TRUE(c.made(j)) << "copy " << j + 1;
}

TEST(Copier, SmallCopiesAndCopiesWithoutAThreadAreMadeAtOnce) {
  Copies c(2);
  Copier threaded(true), alone(false);
  EXPECT_EQ(threaded.copy(c.target(0), c.source(0), kBytes - 1), 0u);
  EXPECT_EQ(alone.copy(c.target(1), c.source(1), kBytes), 0u);
  EXPECT_TRUE(std::equal(c.target(0), c.target(0) + kBytes - 1, c.source(0)));
  EXPECT_TRUE(c.made(1));
}

}  // namespace
}  // namespace touchstone::detail
