#include "text.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::machines {

namespace {
// The whole of `text` as a decimal integer in lo..hi, or nothing.
std::optional<long long> integer_in(const std::string& text, long long lo, long long hi) {
  std::size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(text, &pos);
  } catch (...) {
    return std::nullopt;
  }
  if (text.empty() || pos != text.size() || x < lo || x > hi) return std::nullopt;
  return x;
}
}  // namespace

long long parse_int(const std::string& what, const std::string& text, long long lo, long long hi) {
  if (const auto x = integer_in(text, lo, hi)) return *x;
  throw UsageError(fmt::format("{}: expected an integer in {}..{}, got '{}'", what, lo, hi, text));
}

std::pair<long long, long long> parse_int_range(const std::string& what, const std::string& text, long long lo,
                                                long long hi) {
  const auto dash = text.find('-');
  if (dash == std::string::npos) {
    const long long x = parse_int(what, text, lo, hi);
    return {x, x};
  }
  return {parse_int(what, text.substr(0, dash), lo, hi), parse_int(what, text.substr(dash + 1), lo, hi)};
}

Time parse_time(const std::string& what, const std::string& text, Time unit) {
  std::size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(text, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != text.size() || !std::isfinite(x) || x < 0)
    throw UsageError(fmt::format("{}: expected a non-negative number, got '{}'", what, text));
  const double ps = x * static_cast<double>(unit);
  if (ps > 9e18) throw UsageError(fmt::format("{}: value {} is too large", what, text));
  return static_cast<Time>(std::llround(ps));
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts(1);
  for (char ch : text) {
    if (ch == sep) parts.emplace_back();
    else parts.back() += ch;
  }
  return parts;
}

std::vector<int> parse_dims(const std::string& text, const std::string& spec) {
  std::vector<int> dims;
  for (const std::string& part : split(text, 'x')) {
    const auto v = integer_in(part, 1, 1 << 20);
    if (!v) throw UsageError(fmt::format("machine '{}': dimensions must look like 16x16 or 8x8x8 (got '{}')", spec, text));
    dims.push_back(static_cast<int>(*v));
  }
  return dims;
}

}  // namespace touchstone::machines
