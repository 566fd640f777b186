// A spinning thread's pause: lets the core's other hardware thread (and the memory system) go on
// while it waits for another thread's store.
#pragma once

namespace touchstone::detail {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace touchstone::detail
