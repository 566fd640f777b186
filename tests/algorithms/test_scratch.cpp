// Payload memory (algorithms/scratch.hpp): blocks of 2 MiB or more are mappings of their own,
// aligned to a huge page, blocks from 16 KiB up share huge pages cut into slots; inside a
// PayloadMemoryReuse freed huge pages are handed to the next allocations, never more mapped than
// the most that was live at once; outside, they are unmapped.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <array>
#include <utility>
#include <vector>
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
    // From 16 KiB up a request takes a slot of a huge page: a kept one (1 MiB, two slots to it).
    void* mib = allocate_payload_bytes(kMiB);
    EXPECT_TRUE(mib == first || mib == static_cast<std::byte*>(first) + 2 * kMiB);
    EXPECT_EQ(payload_bytes_kept(), 2 * kMiB);
    free_payload_bytes(mib, kMiB);
    EXPECT_EQ(payload_bytes_kept(), 4 * kMiB);
    // Below 16 KiB: operator new's, and it takes the room of a kept block (the two halves stay
    // two blocks; 4 MiB were live at most).
    void* small = allocate_payload_bytes(8 * 1024);
    EXPECT_NE(small, first);
    EXPECT_EQ(payload_bytes_kept(), 2 * kMiB);
    free_payload_bytes(small, 8 * 1024);
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
  void* small = allocate_payload_bytes(8 * 1024);  // operator new's: 8 MiB + 8 KiB > 8 MiB
  EXPECT_EQ(payload_bytes_kept(), 6 * kMiB);
  free_payload_bytes(small, 8 * 1024);
  EXPECT_EQ(payload_bytes_kept(), 6 * kMiB);
}

std::uintptr_t huge_page_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) / (2 * kMiB); }

TEST(PayloadMemory, BlocksFromSixteenKiBShareHugePagesInSlotsOfFourSizesPerPowerOfTwo) {
  if (!kOwnMappings) GTEST_SKIP() << "AddressSanitizer: every block comes from operator new";
  // 17 KiB takes a slot of 20 (16, 20, 24, 28, 32 KiB, ...): the slots of one huge page follow
  // each other 20 KiB apart, from its start, and 102 of them fit in it.
  std::array<void*, 103> slots{};
  for (std::size_t i = 0; i < 102; ++i) slots[i] = allocate_payload_bytes(17 * 1024);
  const auto* page = static_cast<std::byte*>(slots[0]);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(page) % (2 * kMiB), 0u);
  for (std::size_t i = 1; i < 102; ++i) EXPECT_EQ(static_cast<std::byte*>(slots[i]), page + i * 20 * 1024) << i;
  // A freed slot is the next one taken (the lowest free one), in any size of its class.
  free_payload_bytes(slots[40], 17 * 1024);
  free_payload_bytes(slots[7], 20 * 1024);
  EXPECT_EQ(allocate_payload_bytes(18 * 1024), slots[7]);
  EXPECT_EQ(allocate_payload_bytes(19 * 1024), slots[40]);
  slots[102] = allocate_payload_bytes(17 * 1024);  // the page is full: a second one
  EXPECT_NE(huge_page_of(slots[102]), huge_page_of(page));
  // Another size takes pages of its own; a block just under a huge page takes one whole.
  void* other = allocate_payload_bytes(256 * 1024);
  EXPECT_NE(huge_page_of(other), huge_page_of(page));
  EXPECT_NE(huge_page_of(other), huge_page_of(slots[102]));
  void* whole = allocate_payload_bytes(2 * kMiB - 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(whole) % (2 * kMiB), 0u);
  free_payload_bytes(whole, 2 * kMiB - 1);
  free_payload_bytes(other, 256 * 1024);
  for (void* b : slots) free_payload_bytes(b, 17 * 1024);
  EXPECT_FALSE(mapped(const_cast<std::byte*>(page)));  // outside a reuse scope an empty page is unmapped
  EXPECT_EQ(payload_bytes_kept(), 0u);
}

TEST(PayloadMemory, SlotsOfEverySizeHoldWhatIsWrittenAndAnEmptyPageIsKeptInAReuseScope) {
  const PayloadMemoryReuse reuse;
  // Every size class from 16 KiB to 2 MiB, three blocks each, live at once: each holds its own
  // bytes to the last one (no two blocks overlap).
  std::vector<std::pair<unsigned char*, std::size_t>> blocks;
  for (std::size_t bytes = 16 * 1024; bytes < 2 * kMiB; bytes += bytes / 4)
    for (std::size_t extra : {std::size_t{0}, std::size_t{1}, bytes / 8})
      blocks.emplace_back(static_cast<unsigned char*>(allocate_payload_bytes(bytes + extra)), bytes + extra);
  for (std::size_t i = 0; i < blocks.size(); ++i) std::memset(blocks[i].first, static_cast<int>(i + 1), blocks[i].second);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto [p, n] = blocks[i];
    EXPECT_EQ(p[0], static_cast<unsigned char>(i + 1)) << n;
    EXPECT_EQ(p[n / 2], static_cast<unsigned char>(i + 1)) << n;
    EXPECT_EQ(p[n - 1], static_cast<unsigned char>(i + 1)) << n;
  }
  for (const auto& [p, n] : blocks) free_payload_bytes(p, n);
  if (!kOwnMappings) return;
  // Every page emptied is kept, whole huge pages, for the next blocks.
  EXPECT_GT(payload_bytes_kept(), 0u);
  EXPECT_EQ(payload_bytes_kept() % (2 * kMiB), 0u);
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
