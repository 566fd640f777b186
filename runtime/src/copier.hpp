// Payload copies made beside the event loop (docs/parallel.md, "Copies made when the match is
// known"). Once the receive a message will match is known before the message arrives, its bytes can
// go into the receive buffer at any moment up to the arrival: the engine hands the copy over here
// and goes on, and it waits for the copy only where something reads what it writes or frees what it
// reads (the arrival, the send's completion, the message's release, the VPs' next turns). With a
// copying thread the copies handed over are numbered, from 1; without one (one host core, or copies
// too small to be worth handing over) a copy is made at once and has no number.
//
// A thread that waits for copy k makes every copy up to k that no thread has taken yet itself, and
// waits only for those another thread is making at that moment: it never waits for a copying thread
// that has to wake first (a wake-up costs the waker a system call and the sleeper tens of
// microseconds on a virtual host, several copies' worth).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

namespace touchstone::detail {

class Copier {
 public:
  /// Copies of this many bytes or more go to the copying thread; smaller ones cost less than the
  /// hand-over (about a cache line's transfer each way).
  static constexpr std::size_t kHandOverFrom = 4096;

  /// `threaded`: copy on a thread of its own (started at the first copy handed over).
  explicit Copier(bool threaded);
  ~Copier();
  Copier(const Copier&) = delete;
  Copier& operator=(const Copier&) = delete;

  /// Copies n bytes from `from` to `to`: at once (returns 0), or handed over (returns the copy's
  /// number, for wait). Only one thread at a time hands copies over.
  std::uint64_t copy(std::byte* to, const std::byte* from, std::size_t n);
  /// Returns once copy number k and every one before it have been made (at once for 0). Any thread.
  void wait(std::uint64_t k) {
    if (k > made_.load(std::memory_order_acquire)) [[unlikely]]
      wait_for(k);
  }
  /// Every copy handed over so far has been made.
  void wait_all() { wait(handed_); }

 private:
  /// Copies handed over and not yet known to be made; the handing thread makes one itself when all
  /// slots are taken.
  static constexpr std::uint64_t kSlots = 1024;
  struct Slot {
    std::byte* to = nullptr;
    const std::byte* from = nullptr;
    std::size_t n = 0;
    /// The number of the last copy made from this slot (slot k % kSlots holds copy k).
    std::atomic<std::uint64_t> made{0};
  };
  Slot& slot(std::uint64_t k) { return slots_[k % kSlots]; }
  /// Takes the next copy no thread has taken, if it is numbered `upto` or less, and makes it.
  bool make_next(std::uint64_t upto);
  /// Moves made_ past every copy made in a row.
  void advance();
  void wait_for(std::uint64_t k);
  void serve();

  const bool threaded_;
  std::unique_ptr<Slot[]> slots_;
  std::uint64_t handed_ = 0;                 // copies handed over (only the handing thread writes)
  std::atomic<std::uint64_t> published_{0};  // copies 1..published_ are in their slots
  std::atomic<std::uint64_t> taken_{0};      // copies 1..taken_ are made or being made
  std::atomic<std::uint64_t> made_{0};       // copies 1..made_ are all made
  std::atomic<bool> sleeping_{false};        // the copying thread waits on bell_ for work
  std::atomic<std::uint32_t> bell_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace touchstone::detail
