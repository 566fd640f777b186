#include "scratch.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace touchstone::algorithms {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's and arm64's with 4 KiB base pages
// From this size a block may be the head of a kept mapping, in whole huge pages (resident memory,
// within the bound of the most that was live at once): up to 8 times what was asked.
constexpr std::size_t kReuseFrom = kHugePage / 8;

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer checks the blocks of operator new for overruns, not mappings of our own.
constexpr bool kOwnMappings = false;
#else
constexpr bool kOwnMappings = true;
#endif

// The payload memory live (every block's bytes; a block of 2 MiB or more is a mapping of whole
// huge pages) and, while a PayloadMemoryReuse lives, the freed blocks of 2 MiB or more, kept for
// the next allocations.
struct Mappings {
  std::mutex mu;
  int reuse_scopes = 0;
  std::unordered_map<void*, std::size_t> live;  // block -> its mapping's length
  std::multimap<std::size_t, void*> kept;       // length -> freed block
  std::size_t live_bytes = 0, kept_bytes = 0, peak_live_bytes = 0;

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
  if (!kOwnMappings) return ::operator new(bytes);
  Mappings& m = mappings();
  const std::size_t length = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  const std::lock_guard lk(m.mu);
  // The shortest kept block that holds the whole huge pages asked for, its tail kept apart: its
  // pages are resident already, which is the point (a run at 4 KiB blocks after one at 16 KiB
  // writes where that one wrote).
  if (bytes >= kReuseFrom) {
    if (auto it = m.kept.lower_bound(length); it != m.kept.end()) {
      const std::size_t got = it->first;
      auto* block = static_cast<std::byte*>(it->second);
      m.kept.erase(it);
      m.kept_bytes -= got;
      if (got > length) {  // a mapping may be split at any page: the tail is a block of its own
        m.kept.emplace(got - length, block + length);
        m.kept_bytes += got - length;
      }
      m.live.emplace(block, length);
      m.add_live(length);
      return block;
    }
  }
  const bool mapping = bytes >= kHugePage;
  m.make_room(mapping ? length : bytes);
  void* block = mapping ? map_aligned(length) : ::operator new(bytes);
  if (mapping) m.live.emplace(block, length);
  m.add_live(mapping ? length : bytes);
  return block;
}

void free_payload_bytes(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  if (!kOwnMappings) return ::operator delete(block);
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  const auto it = bytes >= kReuseFrom ? m.live.find(block) : m.live.end();
  if (it == m.live.end()) {  // operator new's
    m.live_bytes -= bytes;
    ::operator delete(block);
    return;
  }
  const std::size_t length = it->second;
  m.live.erase(it);
  m.live_bytes -= length;
  if (m.reuse_scopes > 0) {
    m.kept.emplace(length, block);
    m.kept_bytes += length;
  } else {
    ::munmap(block, length);
  }
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

std::size_t payload_bytes_kept() {
  Mappings& m = mappings();
  const std::lock_guard lk(m.mu);
  return m.kept_bytes;
}

}  // namespace touchstone::algorithms
