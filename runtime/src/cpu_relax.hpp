// A spinning thread's pause, and the spin of a thread that waits briefly for another thread's
// store before it sleeps or yields its core.
#pragma once
#include <chrono>
#include <thread>

namespace touchstone::detail {

/// Lets the core's other hardware thread (and the memory system) go on while this one waits.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Pauses until `ready()` holds or `budget` has passed, whichever comes first; returns whether
/// ready() held. The budget is a time, not a number of pauses: a pause lasts from a few to over a
/// hundred nanoseconds, by processor. (The clock is read every 16 pauses.)
template <class Ready>
bool spin_until(Ready&& ready, std::chrono::nanoseconds budget) {
  const auto end = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= end) return ready();
  }
}

/// Returns once `ready()` holds: spins for `budget` (spin_until), then yields the core between
/// looks, for a wait whose other side may need this core to get done.
template <class Ready>
void spin_then_yield(Ready&& ready, std::chrono::nanoseconds budget) {
  if (spin_until(ready, budget)) return;
  while (!ready()) std::this_thread::yield();
}

/// How long the runtime's helper threads spin for their next work before they sleep, and the
/// runtime's threads wait for another's store before they yield their core. Short: a sweep runs
/// several emulations at once, each with helper threads on every core, so a spinning helper
/// mostly takes its core from the emulation beside it. With these rather than 80 us for the
/// copying thread and 40 for the others, the README's sweep (two emulations on two cores) took 9%
/// less wall time and 10% less CPU, and single emulations on two cores took as long
/// (docs/performance.md, "Spinning").
inline constexpr std::chrono::nanoseconds kCopierSpin{4000}, kHelperSpin{2000};

}  // namespace touchstone::detail
