// A lock of one atomic flag, for state that one rank's code and, rarely, another thread touch:
// taking it uncontended costs a few instructions where a std::mutex costs a library call each way.
#pragma once

#include <atomic>
#include <thread>

namespace touchstone::mpi {

/// BasicLockable, for std::lock_guard and std::unique_lock. A waiter yields its core: the holder
/// keeps it for a few instructions.
class FlagLock {
 public:
  void lock() {
    while (taken_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void unlock() { taken_.clear(std::memory_order_release); }

 private:
  std::atomic_flag taken_;
};

}  // namespace touchstone::mpi
