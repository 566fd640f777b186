// Payload copies made beside the event loop (docs/parallel.md, "Copies made when the match is
// known"). Once the receive a message will match is known before the message arrives, its bytes can
// go into the receive buffer at any moment up to the arrival: the engine hands the copy over here
// and goes on, and it waits for the copy only where something reads what it writes or frees what it
// reads (the arrival, the send's completion, the message's release, the VPs' next turns). With a
// copying thread the copies run on another host core, one after another in the order they were
// handed over, so that "every copy up to number k is made" is one counter; without one (one host
// core, or copies too small to be worth handing over) a copy is made at once and has no number.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

#include <boost/lockfree/spsc_queue.hpp>

namespace touchstone::detail {

class Copier {
 public:
  /// Copies of this many bytes or more go to the copying thread; smaller ones cost less than the
  /// hand-over (about a cache line's transfer each way).
  static constexpr std::size_t kHandOverFrom = 4096;

  /// `threaded`: copy on a thread of its own (started at the first copy handed over).
  explicit Copier(bool threaded) : threaded_(threaded) {}
  ~Copier();
  Copier(const Copier&) = delete;
  Copier& operator=(const Copier&) = delete;

  /// Copies n bytes from `from` to `to`: at once (returns 0), or on the copying thread (returns the
  /// copy's number, from 1, for wait). Only one thread at a time hands copies over.
  std::uint64_t copy(std::byte* to, const std::byte* from, std::size_t n);
  /// Returns once copy number k and every one before it have been made (at once for 0). Any thread.
  void wait(std::uint64_t k) {
    if (k > made_.load(std::memory_order_acquire)) [[unlikely]]
      wait_for(k);
  }
  /// Every copy handed over so far has been made.
  void wait_all() { wait(handed_); }

 private:
  struct Job {
    std::byte* to;
    const std::byte* from;
    std::size_t n;
  };
  void wait_for(std::uint64_t k) const;
  void serve();

  const bool threaded_;
  std::uint64_t handed_ = 0;              // copies handed over (only the handing thread writes)
  std::atomic<std::uint64_t> made_{0};    // of those, made (only the copying thread writes)
  std::atomic<bool> sleeping_{false};     // the copying thread waits on bell_ for work
  std::atomic<std::uint32_t> bell_{0};
  std::atomic<bool> stop_{false};
  boost::lockfree::spsc_queue<Job, boost::lockfree::capacity<1024>> jobs_;
  std::thread thread_;
};

}  // namespace touchstone::detail
