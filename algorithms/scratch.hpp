// Host memory for payloads: the harnesses' send and receive buffers and the algorithms' scratch
// (combined messages, staging buffers). Payload memory is most of what a run with real payloads
// touches (an all-to-all on mesh:16x16 at 16 KiB blocks: 2 GiB of buffers), and faulting it in one
// 4 KiB page at a time, zeroed by the kernel, was most of such a run's host time. So payload memory
// comes in huge pages, advised to the kernel as such (madvise MADV_HUGEPAGE, which Debian's default
// transparent-huge-page mode, "madvise", honours): one fault per 2 MiB. A block of 2 MiB or more is
// a mapping of its own, in whole huge pages, aligned to one; a block from 16 KiB up to 2 MiB is a
// slot of a huge page cut into slots of one size (four sizes per power of two, so a slot is at most
// a quarter longer than the block). While a PayloadMemoryReuse lives (the experiment harness holds
// one for each batch of runs), freed huge pages are kept for the next runs' blocks, as long as the
// payload memory held, live and kept, stays within the most that was live at once. Smaller blocks
// come from operator new (and all of them under AddressSanitizer, which checks those for overruns).
// Without transparent huge pages the advice is ignored and the pages are ordinary ones.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace touchstone::algorithms {

/// `bytes` uninitialized bytes as above; std::bad_alloc when the host has none left.
void* allocate_payload_bytes(std::size_t bytes);
/// Gives back a block of allocate_payload_bytes(bytes).
void free_payload_bytes(void* block, std::size_t bytes) noexcept;

/// While one lives, freed payload huge pages (a block of 2 MiB or more, a slab whose slots are all
/// free) are kept for reuse instead of unmapped; when the last one ends, the kept ones are
/// unmapped. For a series of runs in one process.
class PayloadMemoryReuse {
 public:
  PayloadMemoryReuse();
  ~PayloadMemoryReuse();
  PayloadMemoryReuse(const PayloadMemoryReuse&) = delete;
  PayloadMemoryReuse& operator=(const PayloadMemoryReuse&) = delete;
  /// Gives back the shortest kept blocks until at most `bytes` are kept: for a caller that budgets
  /// its runs' memory, before a run starts, the room its budget leaves beside the runs in progress
  /// (the experiment harness). A run's own frees only turn live blocks into kept ones.
  static void keep_at_most(std::size_t bytes);
};
/// Bytes of freed payload blocks kept for reuse now.
std::size_t payload_bytes_kept();
/// Every payload block from operator new from now on (false: huge pages, as above, the default),
/// for a process that accounts or checks every allocation through operator new: the footprint
/// tests' counting allocator, which also overwrites freed blocks to catch a send buffer freed too
/// early. Set it before the first payload block is allocated.
void payload_blocks_from_operator_new(bool yes);

/// The allocator of payload memory. New elements are default-initialized: bytes are left as they
/// were, not zeroed (each is written, by a copy or a receive, before it is read; zeroing them was
/// a pass over memory as long as the copies themselves).
template <class T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_payload_bytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_payload_bytes(p, n * sizeof(T)); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const ScratchAllocator<U>&) const noexcept {
    return true;
  }
};

/// Payload bytes: a harness buffer, or an algorithm's combined message or staging buffer.
using ScratchBytes = std::vector<std::byte, ScratchAllocator<std::byte>>;

}  // namespace touchstone::algorithms
