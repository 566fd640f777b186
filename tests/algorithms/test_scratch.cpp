// Payload memory (algorithms/scratch.hpp): blocks of 2 MiB or more are mappings of their own,
// aligned to a huge page; inside a PayloadMemoryReuse freed ones are handed to the next
// allocations, never more mapped than the most that was live at once; outside, they are unmapped.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "algorithms/scratch.hpp"

using namespace touchstone::algorithms;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// True while `block` is mapped (msync answers ENOMEM for an address range with no mapping).
bool mapped(void* block) { return ::msync(block, 4096, MS_ASYNC) == 0 || errno != ENOMEM; }

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kOwnMappings = false;
#else
constexpr bool kOwnMappings = true;
#endif

TEST(PayloadMemory, EveryBlockHoldsWhatIsWrittenAndSmallOnesAreNeverKept) {
  const PayloadMemoryReuse reuse;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4096 + 7}, 2 * kMiB - 1, 2 * kMiB, 3 * kMiB + 5}) {
    auto* p = static_cast<unsigned char*>(allocate_payload_bytes(bytes));
    std::memset(p, 0xa5, bytes);
    EXPECT_EQ(p[0], 0xa5);
    EXPECT_EQ(p[bytes - 1], 0xa5);
    free_payload_bytes(p, bytes);
  }
  // The 2 MiB block was kept, then given back to map the 4 MiB one (3 MiB + 5 in whole huge pages)
  // under the most that was live at once; that one is kept.
  EXPECT_EQ(payload_bytes_kept(), kOwnMappings ? 4 * kMiB : 0);
}

TEST(PayloadMemory, LargeBlocksStartOnAHugePageAndAreUnmappedOutsideAReuseScope) {
  if (!kOwnMappings) GTEST_SKIP() << "AddressSanitizer: every block comes from operator new";
  void* p = allocate_payload_bytes(4 * kMiB);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (2 * kMiB), 0u);
  ASSERT_TRUE(mapped(p));
  free_payload_bytes(p, 4 * kMiB);
  EXPECT_FALSE(mapped(p));
  EXPECT_EQ(payload_bytes_kept(), 0u);
}

TEST(PayloadMemory, AReuseScopeHandsFreedBlocksToTheNextAllocationsAndUnmapsThemAtItsEnd) {
  if (!kOwnMappings) GTEST_SKIP() << "AddressSanitizer: every block comes from operator new";
  void* first = nullptr;
  {
    const PayloadMemoryReuse reuse;
    first = allocate_payload_bytes(4 * kMiB);
    free_payload_bytes(first, 4 * kMiB);
    EXPECT_EQ(payload_bytes_kept(), 4 * kMiB);
    EXPECT_TRUE(mapped(first));
    // 3 MiB takes a mapping of 4 (whole huge pages): the kept block.
    void* again = allocate_payload_bytes(3 * kMiB);
    EXPECT_EQ(again, first);
    EXPECT_EQ(payload_bytes_kept(), 0u);
    free_payload_bytes(again, 3 * kMiB);
    // A longer kept block is split: the head is taken, the tail stays kept; an inner scope's end
    // releases nothing.
    {
      const PayloadMemoryReuse nested;
      void* half = allocate_payload_bytes(2 * kMiB);
      EXPECT_EQ(half, first);
      EXPECT_EQ(payload_bytes_kept(), 2 * kMiB);
      void* other_half = allocate_payload_bytes(2 * kMiB);
      EXPECT_EQ(other_half, static_cast<std::byte*>(first) + 2 * kMiB);
      EXPECT_EQ(payload_bytes_kept(), 0u);
      free_payload_bytes(half, 2 * kMiB);
      free_payload_bytes(other_half, 2 * kMiB);
    }
    EXPECT_EQ(payload_bytes_kept(), 4 * kMiB);
    // From 256 KiB up a request takes whole huge pages of a kept block (1 MiB: 2 MiB).
    void* mib = allocate_payload_bytes(kMiB);
    EXPECT_TRUE(mib == first || mib == static_cast<std::byte*>(first) + 2 * kMiB);
    EXPECT_EQ(payload_bytes_kept(), 2 * kMiB);
    free_payload_bytes(mib, kMiB);
    EXPECT_EQ(payload_bytes_kept(), 4 * kMiB);
    // Below 256 KiB: operator new's, and it takes the room of a kept block (the two halves stay
    // two blocks; 4 MiB were live at most).
    void* small = allocate_payload_bytes(128 * 1024);
    EXPECT_NE(small, first);
    EXPECT_EQ(payload_bytes_kept(), 2 * kMiB);
    free_payload_bytes(small, 128 * 1024);
    first = allocate_payload_bytes(4 * kMiB);
    free_payload_bytes(first, 4 * kMiB);
    EXPECT_EQ(payload_bytes_kept(), 4 * kMiB);
  }
  EXPECT_EQ(payload_bytes_kept(), 0u);
  EXPECT_FALSE(mapped(first));
}

// Four blocks of 2 MiB live at once, then freed into the scope: 8 MiB kept, 8 MiB the most live.
std::array<void*, 4> four_kept_blocks() {
  std::array<void*, 4> blocks{};
  for (auto& b : blocks) b = allocate_payload_bytes(2 * kMiB);
  for (auto& b : blocks) free_payload_bytes(b, 2 * kMiB);
  return blocks;
}

TEST(PayloadMemory, AReuseScopeNeverMapsMoreThanTheMostThatWasLiveAtOnce) {
  if (!kOwnMappings) GTEST_SKIP() << "AddressSanitizer: every block comes from operator new";
  const PayloadMemoryReuse reuse;
  const auto blocks = four_kept_blocks();
  EXPECT_EQ(payload_bytes_kept(), 8 * kMiB);
  // 6 MiB: no kept block is long enough, so kept ones go, shortest first, until the new mapping
  // fits under the 8 MiB that were live: one of the four stays.
  void* big = allocate_payload_bytes(6 * kMiB);
  EXPECT_EQ(payload_bytes_kept(), 2 * kMiB);
  const auto* lo = static_cast<std::byte*>(big);
  int kept_mapped = 0;  // the blocks given back may lie inside the new mapping
  for (void* b : blocks) kept_mapped += mapped(b) && !(static_cast<std::byte*>(b) >= lo && static_cast<std::byte*>(b) < lo + 6 * kMiB);
  EXPECT_EQ(kept_mapped, 1);
  free_payload_bytes(big, 6 * kMiB);
  EXPECT_EQ(payload_bytes_kept(), 8 * kMiB);
}

TEST(PayloadMemory, SmallBlocksTakeTheRoomOfKeptOnes) {
  if (!kOwnMappings) GTEST_SKIP() << "AddressSanitizer: every block comes from operator new";
  const PayloadMemoryReuse reuse;
  four_kept_blocks();
  void* small = allocate_payload_bytes(128 * 1024);  // operator new's: 8 MiB + 128 KiB > 8 MiB
  EXPECT_EQ(payload_bytes_kept(), 6 * kMiB);
  free_payload_bytes(small, 128 * 1024);
  EXPECT_EQ(payload_bytes_kept(), 6 * kMiB);
}

TEST(PayloadMemory, ScratchBytesOfSeveralMiBStartOnAHugePage) {
  ScratchBytes bytes(5 * kMiB);
  bytes.back() = std::byte{7};
  EXPECT_EQ(bytes.back(), std::byte{7});
  if (kOwnMappings) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes.data()) % (2 * kMiB), 0u);
  }
}

}  // namespace
