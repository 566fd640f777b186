// The host-time watchdog of a run (docs/model.md, "Host time"): a host thread beside the engine that
// ends a run whose VPs stop making progress in host time (RunOptions::wall_limit_s), and a run
// interrupted by SIGINT or SIGTERM (RunOptions::stop_on_signals), and draws the progress line.
//
// The engine counts its progress (a VP entering it, an event handled) and says which VP holds the
// baton. A VP that spins in its own code never enters the engine again, so it cannot be unwound:
// the watchdog then takes the VP's stack from its host thread (a signal whose handler records the
// return addresses), symbolizes it, writes the evidence up to that point through the engine, lets
// the tool flush (RunOptions::before_hard_exit) and ends the process. A signal that arrives while
// the engine can still react ends the run the ordinary way instead (Engine::interrupted).
#pragma once
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "touchstone/run.hpp"

namespace touchstone::detail {

/// What the engine shares with its watchdog; written by the baton holder, read by the watchdog.
struct Progress {
  std::atomic<std::uint64_t> steps{0};    ///< VP entries into the engine and events handled
  std::atomic<int> running{-1};           ///< the VP holding the baton, or -1 (the event loop)
  std::atomic<std::int64_t> now_ps{0};    ///< virtual time reached, published now and then
  std::atomic<std::uint64_t> messages{0};
};

/// Written by the watchdog's SIGINT/SIGTERM handler; read through Watchdog::pending_signal.
extern std::atomic<int> watchdog_pending_signal;

class Watchdog {
 public:
  struct Hooks {
    /// The host thread the VP's code runs on.
    std::function<pthread_t(int rank)> thread_of;
    /// Writes the trace and order log up to now (the run is stopped); returns the note to print.
    std::function<std::string()> write_evidence;
  };
  Watchdog(const RunOptions& options, Progress& progress, Hooks hooks);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// The signal (SIGINT, SIGTERM) that asked the run to stop, or 0; the engine polls it. Inline:
  /// it is polled once per event and per call into the engine.
  static int pending_signal() { return watchdog_pending_signal.load(std::memory_order_relaxed); }

 private:
  void loop();
  [[noreturn]] void hard_stop(const std::string& why, int exit_status);
  std::string stack_of(int rank);

  const RunOptions& opts_;
  Progress& progress_;
  Hooks hooks_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool progress_line_shown_ = false;
  std::thread thread_;
};

}  // namespace touchstone::detail
