#include "memory/counting_allocator.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {
std::atomic<std::size_t> g_live{0}, g_peak{0};

// Every block carries its size in a header of 16 bytes (the default new alignment); over-aligned
// blocks carry it in the last 16 bytes before the pointer, after `align` bytes of room.
constexpr std::size_t kHeader = 16;

void count(std::size_t n) {
  const std::size_t now = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  std::size_t old = g_peak.load(std::memory_order_relaxed);
  while (now > old && !g_peak.compare_exchange_weak(old, now, std::memory_order_relaxed)) {
  }
}

void* allocate(std::size_t n, std::size_t align) {
  const std::size_t room = align > kHeader ? align : kHeader;
  void* raw = align > kHeader ? std::aligned_alloc(align, (room + n + align - 1) / align * align) : std::malloc(room + n);
  if (!raw) return nullptr;
  char* p = static_cast<char*>(raw) + room;
  *reinterpret_cast<std::size_t*>(p - kHeader) = n;
  count(n);
  return p;
}

void release(void* ptr, std::size_t align) {
  if (!ptr) return;
  char* p = static_cast<char*>(ptr);
  const std::size_t n = *reinterpret_cast<std::size_t*>(p - kHeader);
  g_live.fetch_sub(n, std::memory_order_relaxed);
  // Freed bytes are overwritten, so a message that still read a freed send buffer (docs/model.md
  // 1.5: a send buffer must live until its send completes) delivers garbage, which the harnesses'
  // checks of every received byte report.
  std::memset(p, 0xdb, n);
  std::free(p - (align > kHeader ? align : kHeader));
}

void* allocate_or_throw(std::size_t n, std::size_t align) {
  if (void* p = allocate(n, align)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace touchstone::memtest {
std::size_t live_bytes() { return g_live.load(std::memory_order_relaxed); }
void reset_peak() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }
std::size_t peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
}  // namespace touchstone::memtest

void* operator new(std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { release(p, 0); }
void operator delete[](void* p) noexcept { release(p, 0); }
void operator delete(void* p, std::size_t) noexcept { release(p, 0); }
void operator delete[](void* p, std::size_t) noexcept { release(p, 0); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p, 0); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p, 0); }
void operator delete(void* p, std::align_val_t a) noexcept { release(p, static_cast<std::size_t>(a)); }
void operator delete[](void* p, std::align_val_t a) noexcept { release(p, static_cast<std::size_t>(a)); }
void operator delete(void* p, std::size_t, std::align_val_t a) noexcept { release(p, static_cast<std::size_t>(a)); }
void operator delete[](void* p, std::size_t, std::align_val_t a) noexcept { release(p, static_cast<std::size_t>(a)); }
void operator delete(void* p, std::align_val_t a, const std::nothrow_t&) noexcept { release(p, static_cast<std::size_t>(a)); }
void operator delete[](void* p, std::align_val_t a, const std::nothrow_t&) noexcept { release(p, static_cast<std::size_t>(a)); }
