#include "text.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::machines {

long long parse_int(const std::string& what, const std::string& text, long long lo, long long hi) {
  if (const auto x = number_in_range<long long>(text, lo, hi)) return *x;
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

Time parse_time(const std::string& what, const std::string& text, Time unit, Time max) {
  const auto read = number_from_text<double>(text);
  if (!read || *read < 0) throw UsageError(fmt::format("{}: expected a non-negative number, got '{}'", what, text));
  const double x = *read;
  const double ps = x * static_cast<double>(unit);
  if (ps > static_cast<double>(max))
    throw UsageError(fmt::format("{}: {} is more than the largest value allowed, {} ps (so that no cost of a valid "
                                 "machine can overflow virtual time)", what, text, max));
  const Time t = static_cast<Time>(std::llround(ps));
  if (t == 0 && x > 0)
    throw UsageError(fmt::format("{}: {} rounds to 0 ps (time is counted in whole picoseconds); write 0 if 0 is meant",
                                 what, text));
  return t;
}

std::string read_small_file(const std::string& what, const std::string& path) {
  return read_input_file(what, path, 1 << 20);
}

}  // namespace touchstone::machines

namespace touchstone {

std::string read_input_file(const std::string& what, const std::string& path, std::size_t max_bytes) {
  const std::uintmax_t kMaxBytes = max_bytes;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("cannot read {} '{}': {}", what, path,
                                 std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  if (std::filesystem::file_size(path, ec) > kMaxBytes)
    throw UsageError(fmt::format("{} '{}' is larger than {} bytes", what, path, kMaxBytes));
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw UsageError(fmt::format("cannot read {} '{}'", what, path));
  return text.str();
}

}  // namespace touchstone

namespace touchstone::machines {

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
    const auto v = number_in_range<long long>(part, 1, 1 << 20);
    if (!v) throw UsageError(fmt::format("machine '{}': dimensions must look like 16x16 or 8x8x8 (got '{}')", spec, text));
    dims.push_back(static_cast<int>(*v));
  }
  return dims;
}

}  // namespace touchstone::machines

namespace touchstone {

std::int64_t parse_eager_limit(const std::string& what, const std::string& text) {
  if (text == "off") return NetworkParams::kNoFlowControl;
  if (text == "unlimited") return std::numeric_limits<std::int64_t>::max();
  constexpr long long kMost = 1LL << 50;
  if (const auto x = number_in_range<long long>(text, 0, kMost)) return *x;
  throw UsageError(fmt::format("{}: expected BYTES in 0..{}, unlimited or off, got '{}'", what, kMost, text));
}

}  // namespace touchstone
