// An accounting allocator for the memory tests: this executable replaces the global operator new
// and delete (every form) with versions that count the bytes live and the most ever live, so a
// test measures what a run allocates exactly and deterministically, without host timing or RSS.
// Stacks of fibers (mapped by Boost.Context, not allocated) are not counted.
#pragma once
#include <cstddef>

namespace touchstone::memtest {

/// Bytes allocated with operator new and not yet deleted.
std::size_t live_bytes();
/// Starts a measurement: the peak becomes the bytes live now.
void reset_peak();
/// The most bytes live since reset_peak().
std::size_t peak_bytes();

}  // namespace touchstone::memtest
