// The selftest family: small programs for demos and checks of the runtime itself.
#pragma once
#include <cstddef>

#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// Ranks 0 and p-1 exchange a message of `size` bytes back and forth `round_trips` times; with
/// `check` each checks the bytes it received (off for phantom payloads, which carry none).
void selftest_pingpong(Proc& p, std::size_t size, int round_trips, bool check = true);
/// Every rank passes `size` bytes to the next rank of a ring and receives from the previous one;
/// with `check` it checks them.
void selftest_ring(Proc& p, std::size_t size, bool check = true);
/// Every rank receives from the previous rank before it sends to the next: an application
/// deadlock, which the runtime must report instead of hanging.
void selftest_deadlock(Proc& p, std::size_t size);

}  // namespace touchstone::algorithms
