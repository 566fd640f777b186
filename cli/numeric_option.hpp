// One rule for every numeric command-line option: the whole argument is a plain decimal
// number within the option's range. Nothing is wrapped (`--seed -1` used to become 2^64 - 1),
// rounded away or ignored (`--memory-mb nan`), and the error names the option and its range.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/time.hpp"

namespace touchstone::cli {

/// A CLI11 validator (runs on the text, before CLI11 converts it): a decimal T in lo..hi. Integers
/// take digits with an optional '-' (for signed T); reals also a fraction and an exponent, finite.
template <class T>
CLI::Validator number_in(T lo, T hi) {
  static_assert(std::is_arithmetic_v<T>);
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        T v{};
        const NumberText read = read_number(text, v);
        if (read == NumberText::not_a_number)
          return fmt::format("'{}' is not a {}", text,
                             std::is_integral_v<T> ? "whole decimal number" : "decimal number");
        if (read == NumberText::out_of_range || v < lo || v > hi)
          return fmt::format("{} is outside {}..{}", text, lo, hi);
        return {};
      },
      fmt::format("{} in {}..{}", std::is_integral_v<T> ? "INT" : "NUMBER", lo, hi));
}

/// --time-limit: virtual seconds, from 1 ps to 10^6 s (touchstone::kMaxTimeLimit; beyond it the
/// limit could not protect virtual time from overflow, and 1e7 s used to wrap to a negative limit).
inline CLI::Validator time_limit_seconds() { return number_in(to_seconds(1), to_seconds(kMaxTimeLimit)); }
/// Seconds to whole picoseconds (in range after time_limit_seconds).
inline Time time_limit_ps(double seconds) {
  if (const auto limit = time_limit_from_seconds(seconds)) return *limit;
  throw UsageError(
      fmt::format("--time-limit: {} is outside {}..{} s", seconds, to_seconds(1), to_seconds(kMaxTimeLimit)));
}

/// --eager-limit (docs/model.md 2.16), as the machine option eager_limit= reads it; empty: the
/// machine's own.
inline std::optional<std::int64_t> eager_limit_bytes(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return parse_eager_limit("--eager-limit", text);
}

}  // namespace touchstone::cli
