// Numbers written as text (options, machine specs, algorithm parameters, logs, CSV), read whole.
//
// One reader for all of them, so that every tool refuses the same texts: std::stoll and strtol
// skip leading white space and take a '+', std::stoull reads "-1" as 2^64 - 1, std::stod takes
// "nan" and hexadecimal floats; each of these once let a malformed value through as a number.
#pragma once
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace touchstone {

/// What the whole of a text is, read as a number of some type.
enum class NumberText {
  fits,          ///< a number of the type, and nothing else
  not_a_number,  ///< empty, something besides the number (a space, a '+', a unit), or "nan"
  out_of_range,  ///< a number the type cannot hold (for a real: infinite, or past its range)
};

/// Reads all of `text` as a T, with std::from_chars' grammar and nothing skipped: an integer is
/// digits (in `base`) with a leading '-' only for a signed T; a real is decimal, with an optional
/// '-', fraction and exponent ("-2.5e-3", ".5", "7"), and finite. Sets `value` only when the
/// answer is NumberText::fits.
template <class T>
NumberText read_number(std::string_view text, T& value, int base = 10) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  T v{};
  const char* end = text.data() + text.size();
  std::from_chars_result r{};
  if constexpr (std::is_floating_point_v<T>)
    r = std::from_chars(text.data(), end, v, std::chars_format::general);
  else
    r = std::from_chars(text.data(), end, v, base);
  if (text.empty() || r.ec == std::errc::invalid_argument || r.ptr != end) return NumberText::not_a_number;
  if (r.ec == std::errc::result_out_of_range) return NumberText::out_of_range;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return NumberText::not_a_number;
    if (std::isinf(v)) return NumberText::out_of_range;
  }
  value = v;
  return NumberText::fits;
}

/// The whole of `text` as a T (see read_number), or nothing.
template <class T>
std::optional<T> number_from_text(std::string_view text, int base = 10) {
  T v{};
  if (read_number(text, v, base) != NumberText::fits) return std::nullopt;
  return v;
}

/// The whole of `text` as a T in lo..hi, or nothing.
template <class T>
std::optional<T> number_in_range(std::string_view text, T lo, T hi, int base = 10) {
  const auto v = number_from_text<T>(text, base);
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return v;
}

}  // namespace touchstone
