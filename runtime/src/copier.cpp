#include "copier.hpp"

#include <cstring>

#include "cpu_relax.hpp"

namespace touchstone::detail {

Copier::~Copier() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);  // it stops once the queue is empty
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
  while (!jobs_.push(Job{to, from, n})) cpu_relax();  // full: the copying thread is behind
  // Either the copying thread, about to sleep, sees the bell rung, or this sees it asleep (serve).
  bell_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) bell_.notify_one();
  return ++handed_;
}

void Copier::wait_for(std::uint64_t k) const {
  // The copying thread may need this core.
  spin_then_yield([&] { return made_.load(std::memory_order_acquire) >= k; }, kCopierSpin);
}

void Copier::serve() {
  for (;;) {
    Job job{};
    // Every job counted in `rung` is in the queue for this thread to see (the bell is rung after
    // the push, and read with acquire before the pop).
    std::uint32_t rung = 0;
    auto take = [&] {
      rung = bell_.load(std::memory_order_seq_cst);
      return jobs_.pop(job);
    };
    // Briefly: copies of a busy run follow each other within microseconds, and waking this thread
    // costs the handing thread a system call.
    while (!spin_until(take, kCopierSpin)) {
      if (stop_.load(std::memory_order_acquire)) return;
      sleeping_.store(true, std::memory_order_seq_cst);
      if (bell_.load(std::memory_order_seq_cst) == rung) bell_.wait(rung, std::memory_order_seq_cst);
      sleeping_.store(false, std::memory_order_relaxed);
    }
    std::memcpy(job.to, job.from, job.n);
    made_.store(made_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
}

}  // namespace touchstone::detail
