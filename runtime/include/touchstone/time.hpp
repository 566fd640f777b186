// Virtual time: an exact integer count of picoseconds (docs/model.md 1.2).
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

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

/// Virtual time as microseconds with all six decimals, exactly ("12.280000", "-0.000500"; no double
/// in between): how reports, traces, order logs and sweeps' CSV files print a time.
inline std::string exact_us(Time t) {
  const std::uint64_t a = t < 0 ? 0 - static_cast<std::uint64_t>(t) : static_cast<std::uint64_t>(t);
  const std::string fraction = std::to_string(a % 1'000'000);
  std::string text(t < 0 ? "-" : "");
  text += std::to_string(a / 1'000'000);
  text.append(1, '.').append(6 - fraction.size(), '0').append(fraction);
  return text;
}

/// A time written as microseconds with up to six decimals ("12.280000", "7"), as exact_us writes it, read back to exact
/// picoseconds (no double in between): nothing for any other text (a sign, a space, an exponent, a seventh decimal) or
/// a time past kNever.
inline std::optional<Time> time_from_us_text(std::string_view text) {
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    for (const char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (whole.empty() || fraction.size() > 6 || !digits(whole) || !digits(fraction)) return std::nullopt;
  std::uint64_t us = 0, ps = 0;
  if (std::from_chars(whole.data(), whole.data() + whole.size(), us).ec != std::errc{}) return std::nullopt;
  for (std::size_t i = 0; i < 6; ++i)
    ps = ps * 10 + (i < fraction.size() ? static_cast<std::uint64_t>(fraction[i] - '0') : 0);
  if (us > (static_cast<std::uint64_t>(kNever) - ps) / 1'000'000) return std::nullopt;
  return static_cast<Time>(us * 1'000'000 + ps);
}

}  // namespace touchstone
