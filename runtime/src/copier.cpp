#include "copier.hpp"

#include <cstring>
#include <limits>

#include "cpu_relax.hpp"

namespace touchstone::detail {

Copier::Copier(bool threaded) : threaded_(threaded) {
  if (threaded_) slots_ = std::make_unique<Slot[]>(kSlots);
}

Copier::~Copier() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);  // it stops once no copy is left to take
  bell_.fetch_add(1, std::memory_order_seq_cst);
  bell_.notify_one();
  thread_.join();
}

std::uint64_t Copier::copy(std::byte* to, const std::byte* from, std::size_t n) {
  if (!threaded_ || n < kHandOverFrom) {
    std::memcpy(to, from, n);
    return 0;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { serve(); });
  const std::uint64_t k = handed_ + 1;
  // Slot k held copy k - kSlots: it must be made before the slot is written again.
  if (k > kSlots) wait(k - kSlots);
  Slot& s = slot(k);
  s.to = to;
  s.from = from;
  s.n = n;
  published_.store(k, std::memory_order_release);
  handed_ = k;
  // Either the copying thread, about to sleep, sees the bell rung, or this sees it asleep (serve).
  // One wake-up per sleep: the copies handed over while it wakes need no system call of their own.
  bell_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_.exchange(false, std::memory_order_seq_cst)) bell_.notify_one();
  return k;
}

bool Copier::make_next(std::uint64_t upto) {
  std::uint64_t k = taken_.load(std::memory_order_relaxed);
  do {
    if (k >= upto || k >= published_.load(std::memory_order_acquire)) return false;
  } while (!taken_.compare_exchange_weak(k, k + 1, std::memory_order_acq_rel, std::memory_order_relaxed));
  Slot& s = slot(k + 1);
  std::memcpy(s.to, s.from, s.n);
  s.made.store(k + 1, std::memory_order_release);
  return true;
}

void Copier::advance() {
  std::uint64_t m = made_.load(std::memory_order_acquire);
  const std::uint64_t start = m;
  // A slot's number only grows: a later copy in the same slot means this one was made before it.
  while (m < taken_.load(std::memory_order_acquire) && slot(m + 1).made.load(std::memory_order_acquire) >= m + 1) ++m;
  if (m == start) return;
  std::uint64_t seen = start;
  while (seen < m && !made_.compare_exchange_weak(seen, m, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

void Copier::wait_for(std::uint64_t k) {
  // What no thread has taken, this one makes; what another is making ends within one copy's time.
  while (make_next(k)) {
  }
  spin_then_yield(
      [&] {
        advance();
        return made_.load(std::memory_order_acquire) >= k;
      },
      kCopierSpin);
}

void Copier::serve() {
  constexpr auto kAll = std::numeric_limits<std::uint64_t>::max();
  for (;;) {
    // Every copy counted in `rung` is published for this thread to see (the bell is rung after the
    // publication, and read with acquire before the look).
    std::uint32_t rung = 0;
    auto take = [&] {
      rung = bell_.load(std::memory_order_seq_cst);
      return make_next(kAll);
    };
    // Briefly: copies of a busy run follow each other within microseconds, and waking this thread
    // costs the handing thread a system call.
    if (spin_until(take, kCopierSpin)) {
      advance();
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    sleeping_.store(true, std::memory_order_seq_cst);
    if (bell_.load(std::memory_order_seq_cst) == rung) bell_.wait(rung, std::memory_order_seq_cst);
    sleeping_.store(false, std::memory_order_relaxed);
  }
}

}  // namespace touchstone::detail
