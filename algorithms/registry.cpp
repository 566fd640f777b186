#include "registry.hpp"

#include <cstdlib>
#include <deque>
#include <mutex>

#include <fmt/format.h>

#include "allgather.hpp"
#include "cccube.hpp"
#include "harness.hpp"
#include "hpam.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
std::vector<Algorithm> build() {
  std::vector<Algorithm> c;
  add_alltoall_algorithms(c);
  add_cc_cube_algorithms(c);  // after paper 000's eight
  add_scatter_algorithms(c);
  add_gather_algorithms(c);
  add_selftest_algorithms(c);
  add_alltoallv_algorithms(c);
  add_allgather_algorithms(c);
  add_hpam_algorithms(c);
  return c;
}
// A real number in (lo, hi) or [lo, hi), for a family's parameter; UsageError otherwise.
double parse_fraction(const std::string& name, const std::string& number, bool lo_closed, double lo,
                      double hi, const char* why) {
  char* end = nullptr;
  const double x = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size())
    throw UsageError(fmt::format("'{}': '{}' is not a number", name, number));
  if ((lo_closed ? x < lo : x <= lo) || x >= hi) throw UsageError(fmt::format("'{}': {}", name, why));
  return x;
}

// Families with a parameter in parentheses: "scatter/logp-lev-rec(0.6)" is paper 000's
// logp-lev-rec(gamma). `make` gets the text between the parentheses and throws UsageError naming
// the constraint when it is not allowed. Each spelling is built on first use and kept, so
// references stay valid.
const Algorithm* parameterized(const std::string& name) {
  struct Family {
    const char* prefix;
    Algorithm (*make)(const std::string& name, const std::string& param);
  };
  static const Family families[] = {
      {"scatter/logp-lev-rec(",
       [](const std::string& name, const std::string& param) {
         return scatter_logp_lev_rec_entry(
             parse_fraction(name, param, true, 0.5, 1.0, "gamma must satisfy 0.5 <= gamma < 1 (paper 000, section 3.1)"));
       }},
      {"gather/logp-lev-rec(",
       [](const std::string& name, const std::string& param) {
         return gather_logp_lev_rec_entry(
             parse_fraction(name, param, false, 0.0, 1.0, "gamma must satisfy 0 < gamma < 1 (paper 000, section 4)"));
       }},
      {"bcast/hybrid(", [](const std::string& name, const std::string& param) { return bcast_hybrid_entry(parse_submesh(name, param)); }},
      {"scatter/hybrid(", [](const std::string& name, const std::string& param) { return scatter_hybrid_entry(parse_submesh(name, param)); }},
      {"bcast/multicast(", [](const std::string& name, const std::string& param) { return bcast_multicast_entry(parse_submesh(name, param)); }},
      {"scatter/multicast(", [](const std::string& name, const std::string& param) { return scatter_multicast_entry(parse_submesh(name, param)); }},
      {"scatter/multicast-level2(",
       [](const std::string& name, const std::string& param) { return scatter_level2_multicast_entry(parse_submesh(name, param)); }},
      {"scatter/hybrid-level2(",
       [](const std::string& name, const std::string& param) { return scatter_level2_hybrid_entry(parse_submesh(name, param)); }},
      {"scatter/hybrid-both(",
       [](const std::string& name, const std::string& param) { return scatter_both_hybrid_entry(parse_submesh(name, param)); }},
      {"scatter/multicast-both(",
       [](const std::string& name, const std::string& param) { return scatter_both_multicast_entry(parse_submesh(name, param)); }},
      {"scatter/hybrid-both-qs(",
       [](const std::string& name, const std::string& param) { return scatter_both_hybrid_entry(parse_submesh(name, param), true); }},
      {"scatter/multicast-both-qs(",
       [](const std::string& name, const std::string& param) { return scatter_both_multicast_entry(parse_submesh(name, param), true); }},
      {"gather/hybrid-level2(",
       [](const std::string& name, const std::string& param) { return gather_level2_hybrid_entry(parse_submesh(name, param)); }},
      {"gather/hybrid(", [](const std::string& name, const std::string& param) { return gather_hybrid_entry(parse_submesh(name, param)); }},
      {"alltoall/pipelined-cc-cube(",
       [](const std::string& name, const std::string& param) {
         char* end = nullptr;
         const long q = param.empty() ? 0 : std::strtol(param.c_str(), &end, 10);
         if (param.empty() || end != param.c_str() + param.size() || q < 1 || q > (1 << 24))
           throw UsageError(fmt::format("'{}': the pipelining degree must be a positive integer (paper 002, section 3)", name));
         return pipelined_cc_cube_entry(static_cast<int>(q));
       }},
  };
  for (const auto& f : families) {
    const std::string prefix = f.prefix;
    if (name.rfind(prefix, 0) != 0 || name.back() != ')') continue;
    const std::string param = name.substr(prefix.size(), name.size() - prefix.size() - 1);
    static std::mutex mu;
    static std::deque<std::pair<std::string, Algorithm>> made;
    const std::lock_guard lock(mu);
    for (const auto& [n, a] : made)
      if (n == name) return &a;
    Algorithm a = f.make(name, param);
    a.name = name;  // the spelling the user asked for
    return &made.emplace_back(name, std::move(a)).second;
  }
  return nullptr;
}
}  // namespace

const std::vector<Algorithm>& catalog() {
  static const std::vector<Algorithm> c = build();
  return c;
}

const Algorithm& find(const std::string& name) {
  for (const auto& a : catalog())
    if (a.name == name) return a;
  if (const Algorithm* a = parameterized(name)) return *a;
  std::string known;
  for (const auto& a : catalog()) known += "\n  " + a.name;
  throw UsageError(fmt::format("unknown algorithm '{}'; known algorithms:{}", name, known));
}

std::vector<const Algorithm*> select(const std::string& list) {
  // Names hold commas ("alltoall/2-lev-c,r"), but every name holds a slash: a piece without one
  // continues the name before it.
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    std::string piece = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!items.empty() && !piece.empty() && piece.find('/') == std::string::npos) items.back() += "," + piece;
    else items.push_back(std::move(piece));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<const Algorithm*> out;
  for (const auto& item : items) {
    if (item.size() > 4 && item.substr(item.size() - 4) == "/all") {
      const std::string family = item.substr(0, item.size() - 3);  // keeps the slash
      std::size_t before = out.size();
      for (const auto& a : catalog())
        if (a.name.rfind(family, 0) == 0) out.push_back(&a);
      if (out.size() == before) throw UsageError(fmt::format("no algorithms in family '{}'", item));
    } else if (!item.empty()) {
      out.push_back(&find(item));
    }
  }
  if (out.empty()) throw UsageError("no algorithms selected");
  return out;
}

}  // namespace touchstone::algorithms
