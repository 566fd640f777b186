// Virtual time: an exact integer count of picoseconds (docs/model.md 1.2).
#pragma once
#include <cstdint>
#include <limits>

namespace touchstone {

/// Virtual time and durations, in picoseconds. 2^63 ps is about 106 days of virtual time.
using Time = std::int64_t;

inline constexpr Time kNever = std::numeric_limits<Time>::max();

constexpr Time picoseconds(std::int64_t v) { return v; }
constexpr Time nanoseconds(std::int64_t v) { return v * 1'000; }
constexpr Time microseconds(std::int64_t v) { return v * 1'000'000; }
constexpr Time milliseconds(std::int64_t v) { return v * 1'000'000'000; }

/// Virtual time in (fractional) microseconds, for printing only.
constexpr double to_us(Time t) { return static_cast<double>(t) / 1e6; }

}  // namespace touchstone
