// A saved sweep's CSV (records_csv, `touchstone sweep --format csv`) read back, for `touchstone table`
// and `touchstone plot`: a file the user names, so anything in it is checked, and nothing is read as
// some other number (tests/fuzz/fuzz_records.cpp).
#include <csv.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/time.hpp"

namespace touchstone::experiment {

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  csv_parser parser;
  csv_init(&parser, 0);
  auto field = [](void* text, std::size_t n, void* out) {
    auto& fields = *static_cast<std::vector<std::string>*>(out);
    fields.push_back(n ? std::string(static_cast<const char*>(text), n) : std::string());
  };
  csv_parse(&parser, line.data(), line.size(), field, nullptr, &fields);
  csv_fini(&parser, field, nullptr, &fields);
  csv_free(&parser);
  return fields;
}

namespace {

// A whole field of a sweep's CSV as a T (touchstone::read_number), a real also not negative:
// std::stoull would read "-1" as 2^64 - 1 and std::stod "nan". std::invalid_argument otherwise.
template <class T>
T field(const std::string& text, int base = 10) {
  const auto v = number_from_text<T>(text, base);
  if (!v || *v < T{}) throw std::invalid_argument(text);
  return *v;
}

}  // namespace

std::vector<Record> parse_records_csv(const std::string& csv_text, const std::string& source) {
  std::istringstream in(csv_text);
  std::string line;
  if (!std::getline(in, line)) throw UsageError(fmt::format("{}: empty, not a sweep's CSV", source));
  const auto header = csv_fields(line);
  // machine, algorithm, size and makespan_us are needed; the other fields are read when present
  // (a CSV of another tool may have only these four).
  auto column = [&](const std::string& name, bool required) -> std::optional<std::size_t> {
    const auto at = std::find(header.begin(), header.end(), name);
    if (at != header.end()) return static_cast<std::size_t>(at - header.begin());
    if (required)
      throw UsageError(fmt::format("{}: no column '{}' in its first line: not a CSV of touchstone sweep --format csv",
                                   source, name));
    return std::nullopt;
  };
  const std::size_t machine = *column("machine", true), algorithm = *column("algorithm", true),
                    size = *column("size", true), makespan = *column("makespan_us", true);
  const auto vps = column("vps", false), messages = column("messages", false), hash = column("trace_hash", false),
             host = column("host_seconds", false), rss = column("peak_rss_mb", false);
  std::vector<Record> out;
  for (int number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto f = csv_fields(line);
    try {
      if (f.size() != header.size()) throw std::invalid_argument("field count");
      Record r;
      r.machine = f[machine];
      r.algorithm = f[algorithm];
      r.size = field<std::size_t>(f[size]);
      if (vps) r.vps = field<int>(f[*vps]);
      // Microseconds with up to 6 decimals: picoseconds exactly, read without going through a double.
      const auto makespan_ps = time_from_us_text(f[makespan]);
      if (!makespan_ps) throw std::invalid_argument("makespan");
      r.result.makespan = *makespan_ps;
      if (messages) r.result.stats.messages = field<std::uint64_t>(f[*messages]);
      if (hash) r.result.trace_hash = field<std::uint64_t>(f[*hash], 16);
      if (host) r.result.host_seconds = field<double>(f[*host]);
      if (rss) r.peak_rss_mb = field<double>(f[*rss]);
      out.push_back(std::move(r));
    } catch (const std::exception&) {
      throw UsageError(
          fmt::format("{}, line {}: not a record of touchstone sweep --format csv: {}", source, number, line));
    }
  }
  return out;
}

}  // namespace touchstone::experiment
