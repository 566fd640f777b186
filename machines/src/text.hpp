// The text parsers every machine family uses: integers, times and dimensions. One set, so that a
// number means the same and is refused with the same words wherever a spec or a file holds it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "touchstone/time.hpp"

namespace touchstone::machines {

// The caps on machine parameters (kMaxOverheadTime, kMaxPerUnitTime) are the runtime's, in
// touchstone/time.hpp: run() refuses the same machines, however they were made.

/// A decimal integer in lo..hi. `what` names the input in the error, e.g. "machine option 'ports'".
long long parse_int(const std::string& what, const std::string& text, long long lo, long long hi);

/// "A-B" or "A" (then A-A), each in lo..hi.
std::pair<long long, long long> parse_int_range(const std::string& what, const std::string& text, long long lo, long long hi);

/// A non-negative decimal number (integer or fraction) of `unit`s, rounded to whole picoseconds,
/// at most `max` ps. A positive value that rounds to 0 ps is refused (it would silently mean 0).
Time parse_time(const std::string& what, const std::string& text, Time unit, Time max = kMaxOverheadTime);

/// "16x16" or "8x8x8": extents of 1..2^20 each. `spec` is the whole machine spec, for the error.
std::vector<int> parse_dims(const std::string& text, const std::string& spec);

/// The whole of a small input file (machine files, switch network files): only a regular file of
/// at most 1 MiB is read (not /dev/zero or a FIFO, which would read forever). `what` names the
/// kind of file in the error, e.g. "machine file".
std::string read_small_file(const std::string& what, const std::string& path);

/// Splits on `sep`, keeping empty pieces ("4x" is {"4", ""}), so a trailing separator is caught.
std::vector<std::string> split(const std::string& text, char sep);

}  // namespace touchstone::machines
