#include "scratch.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace touchstone::algorithms {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's and arm64's with 4 KiB base pages
// From this size up to a huge page, blocks share huge pages ("slabs"): each slab is cut into slots
// of one size, four sizes per power of two (a block is at most a quarter longer than asked).
// Below it, operator new's blocks are short enough that their 4 KiB faults are few.
constexpr std::size_t kSlabFrom = std::size_t{16} << 10;
constexpr std::size_t kMaxSlots = kHugePage / kSlabFrom;

// The slot a block of `bytes` (kSlabFrom <= bytes < kHugePage) takes, and the index of its size.
std::size_t slot_bytes(std::size_t bytes) {
  const std::size_t step = std::bit_floor(bytes) / 4;
  return (bytes + step - 1) / step * step;
}
std::size_t size_class(std::size_t slot) {
  const std::size_t octave = std::bit_floor(slot);
  return static_cast<std::size_t>(std::countr_zero(octave) - std::countr_zero(kSlabFrom)) * 4 + slot / (octave / 4) - 4;
}
constexpr std::size_t kSizeClasses = (std::countr_zero(kHugePage) - std::countr_zero(kSlabFrom)) * 4 + 1;

struct Slab {
  std::size_t slot = 0;
  std::uint32_t slots = 0, used = 0;
  std::array<std::uint64_t, kMaxSlots / 64> free{};  // bit i: slot i is free
};

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer checks the blocks of operator new for overruns, not mappings of our own.
constexpr bool kOwnMappingsByDefault = false;
#else
constexpr bool kOwnMappingsByDefault = true;
#endif
std::atomic<bool> own_mappings{kOwnMappingsByDefault};  // payload_blocks_from_operator_new

void* map_aligned(std::size_t length);

// The payload memory live (a small block's bytes, a slab's or a mapping's whole huge pages) and,
// while a PayloadMemoryReuse lives, the huge pages freed (mappings, emptied slabs), kept for the
// next allocations.
struct Mappings {
  std::mutex mu;
  int reuse_scopes = 0;
  std::unordered_map<void*, std::size_t> live;  // block -> its mapping's length
  std::multimap<std::size_t, void*> kept;       // length -> freed block
  std::size_t live_bytes = 0, kept_bytes = 0, peak_live_bytes = 0;
  std::unordered_map<std::byte*, Slab> slabs;             // huge page -> its slots
  std::array<std::set<std::byte*>, kSizeClasses> partial;  // per size: slabs with a free slot

  // `length` bytes in whole huge pages, resident if they can be: the head of the shortest kept
  // block that holds them (its tail kept apart; a mapping may be split at any page), else a fresh
  // mapping. Live from now on.
  std::byte* take_pages(std::size_t length) {
    if (auto it = kept.lower_bound(length); it != kept.end()) {
      const std::size_t got = it->first;
      auto* block = static_cast<std::byte*>(it->second);
      kept.erase(it);
      kept_bytes -= got;
      if (got > length) {
        kept.emplace(got - length, block + length);
        kept_bytes += got - length;
      }
      add_live(length);
      return block;
    }
    make_room(length);
    auto* block = static_cast<std::byte*>(map_aligned(length));
    add_live(length);
    return block;
  }
  // Pages no longer live: kept for the next allocations inside a PayloadMemoryReuse, else unmapped.
  void release_pages(std::byte* block, std::size_t length) {
    live_bytes -= length;
    if (reuse_scopes > 0) {
      kept.emplace(length, block);
      kept_bytes += length;
    } else {
      ::munmap(block, length);
    }
  }

  std::byte* take_slot(std::size_t bytes) {
    const std::size_t slot = slot_bytes(bytes);
    std::set<std::byte*>& open = partial[size_class(slot)];
    if (open.empty()) {
      std::byte* page = take_pages(kHugePage);
      Slab& fresh = slabs[page];
      fresh.slot = slot;
      fresh.slots = static_cast<std::uint32_t>(kHugePage / slot);
      for (std::uint32_t i = 0; i < fresh.slots; ++i) fresh.free[i / 64] |= std::uint64_t{1} << (i % 64);
      open.insert(page);
    }
    std::byte* page = *open.begin();  // the lowest: slabs fill one after another
    Slab& s = slabs.at(page);
    std::size_t word = 0;
    while (s.free[word] == 0) ++word;
    const auto i = word * 64 + static_cast<std::size_t>(std::countr_zero(s.free[word]));
    s.free[word] &= s.free[word] - 1;
    if (++s.used == s.slots) open.erase(page);
    return page + i * slot;
  }
  void give_slot(std::byte* block) {
    auto* page = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(block) / kHugePage * kHugePage);
    const auto it = slabs.find(page);
    Slab& s = it->second;
    const auto i = static_cast<std::size_t>(block - page) / s.slot;
    s.free[i / 64] |= std::uint64_t{1} << (i % 64);
    std::set<std::byte*>& open = partial[size_class(s.slot)];
    if (s.used-- == s.slots) open.insert(page);
    if (s.used > 0) return;
    open.erase(page);
    slabs.erase(it);
    release_pages(page, kHugePage);
  }

  // Gives back kept blocks, shortest first, until at most `limit` bytes are kept.
  void give_back_kept_beyond(std::size_t limit) {
    while (!kept.empty() && kept_bytes > limit) {
      const auto shortest = kept.begin();
      ::munmap(shortest->second, shortest->first);
      kept_bytes -= shortest->first;
      kept.erase(shortest);
    }
  }
  // Before `bytes` more become live: the payload memory held (live and kept) stays within the most
  // that was live at once.
  void make_room(std::size_t bytes) {
    const std::size_t held = live_bytes + bytes;
    give_back_kept_beyond(peak_live_bytes > held ? peak_live_bytes - held : 0);
  }
  void add_live(std::size_t bytes) {
    live_bytes += bytes;
    peak_live_bytes = std::max(peak_live_bytes, live_bytes);
  }
};
// Never destroyed: blocks may be freed by static destructors of other libraries.
Mappings& mappings() {
  static auto* m = new Mappings;
  return *m;
}

// A fresh mapping of `length` bytes (a kHugePage multiple) that starts on a huge-page boundary:
// mapped a huge page longer, then trimmed.
void* map_aligned(std::size_t length) {
  const std::size_t mapped = length + kHugePage;
  void* raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (at + kHugePage - 1) / kHugePage * kHugePage;
  const std::size_t head = start - at, tail = mapped - head - length;
  if (head) ::munmap(raw, head);
  if (tail) ::munmap(reinterpret_cast<void*>(start + length), tail);
  void* block = reinterpret_cast<void*>(start);
  ::madvise(block, length, MADV_HUGEPAGE);  // advice only: without transparent huge pages it fails, harmlessly
  return block;
}
}  // namespace

void* allocate_payload_bytes(std::size_t bytes) {
  if (!own_mappings.load(std::memory_order_relaxed)) return ::operator new(bytes);
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  if (bytes < kSlabFrom) {
    m.make_room(bytes);
    void* block = ::operator new(bytes);
    m.add_live(bytes);
    return block;
  }
  if (bytes < kHugePage) return m.take_slot(bytes);
  // Whole huge pages of their own, resident already if a kept block holds them (a run at 4 KiB
  // blocks after one at 16 KiB writes where that one wrote).
  const std::size_t length = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  std::byte* block = m.take_pages(length);
  m.live.emplace(block, length);
  return block;
}

void free_payload_bytes(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  if (!own_mappings.load(std::memory_order_relaxed)) return ::operator delete(block);
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  if (bytes < kSlabFrom) {
    m.live_bytes -= bytes;
    ::operator delete(block);
    return;
  }
  if (bytes < kHugePage) return m.give_slot(static_cast<std::byte*>(block));
  const auto it = m.live.find(block);
  const std::size_t length = it->second;
  m.live.erase(it);
  m.release_pages(static_cast<std::byte*>(block), length);
}

PayloadMemoryReuse::PayloadMemoryReuse() {
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  if (m.reuse_scopes++ == 0) m.peak_live_bytes = m.live_bytes;
}

PayloadMemoryReuse::~PayloadMemoryReuse() {
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  if (--m.reuse_scopes == 0) m.give_back_kept_beyond(0);
}

void PayloadMemoryReuse::keep_at_most(std::size_t bytes) {
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  m.give_back_kept_beyond(bytes);
}

void payload_blocks_from_operator_new(bool yes) { own_mappings.store(!yes && kOwnMappingsByDefault); }

std::size_t payload_bytes_kept() {
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  return m.kept_bytes;
}

}  // namespace touchstone::algorithms
