// Virtual time: an exact integer count of picoseconds (docs/model.md 1.2).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace touchstone {

/// Virtual time and durations, in picoseconds. 2^63 ps is about 106 days of virtual time.
using Time = std::int64_t;

inline constexpr Time kNever = std::numeric_limits<Time>::max();

/// The largest costs a machine may have, so that no run of a valid machine can overflow a 64-bit
/// count of picoseconds (run() refuses others; the argument is in runtime/src/checked_time.hpp): a
/// per-message, per-hop or barrier time at most 1000 s; a per-byte, per-packet or per-entry time at
/// most 1 ms, which times the 2^30 + 2^20 bytes of the largest packet stays below 1.1e18 ps.
inline constexpr Time kMaxOverheadTime = 1'000'000'000'000'000;  // 1000 s
inline constexpr Time kMaxPerUnitTime = 1'000'000'000;           // 1 ms
/// The largest virtual time limit a run may have: 10^6 s (about 11.6 days), 1e18 ps.
inline constexpr Time kMaxTimeLimit = 1'000'000'000'000'000'000;

constexpr Time picoseconds(std::int64_t v) { return v; }
constexpr Time nanoseconds(std::int64_t v) { return v * 1'000; }
constexpr Time microseconds(std::int64_t v) { return v * 1'000'000; }
constexpr Time milliseconds(std::int64_t v) { return v * 1'000'000'000; }

/// Virtual time in (fractional) microseconds, for printing only.
constexpr double to_us(Time t) { return static_cast<double>(t) / 1e6; }
/// Virtual time in (fractional) seconds, for printing and for options given in seconds.
constexpr double to_seconds(Time t) { return static_cast<double>(t) / 1e12; }

/// A virtual time limit given in seconds (`--time-limit`), in whole picoseconds: nothing unless it
/// lies in 1 ps .. kMaxTimeLimit (NaN does not).
inline std::optional<Time> time_limit_from_seconds(double seconds) {
  if (!(seconds >= to_seconds(1) && seconds <= to_seconds(kMaxTimeLimit))) return std::nullopt;
  return std::llround(seconds * 1e12);
}

}  // namespace touchstone
