#include "registry.hpp"

#include <cstdlib>
#include <deque>
#include <mutex>

#include <fmt/format.h>

#include "families.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {

// Each family file registers its own entries and parameterised families, in catalog order.
const Catalog& the_catalog() {
  static const Catalog c = [] {
    Catalog c;
    add_alltoall_algorithms(c);
    add_cc_cube_algorithms(c);  // after paper 000's eight
    add_scatter_algorithms(c);
    add_gather_algorithms(c);
    add_selftest_algorithms(c);
    add_alltoallv_algorithms(c);
    add_allgather_algorithms(c);
    add_hpam_algorithms(c);
    add_bcast_algorithms(c);  // after paper 001's broadcasts
    add_reduce_algorithms(c);
    add_allreduce_algorithms(c);
    add_reduce_scatter_algorithms(c);
    add_scan_algorithms(c);
    add_barrier_algorithms(c);
    return c;
  }();
  return c;
}

// A parameterised name ("scatter/logp-lev-rec(0.6)") built on first use and kept, so references
// stay valid.
const Algorithm* parameterized(const std::string& name) {
  std::string param;
  const Catalog::Make* make = the_catalog().family_of(name, &param);
  if (!make) return nullptr;
  static std::mutex mu;
  static std::deque<std::pair<std::string, Algorithm>> made;
  const std::lock_guard lock(mu);
  for (const auto& [n, a] : made)
    if (n == name) return &a;
  Algorithm a = (*make)(name, param);
  a.name = name;  // the spelling the user asked for
  return &made.emplace_back(name, std::move(a)).second;
}

}  // namespace

const Catalog::Make* Catalog::family_of(const std::string& name, std::string* param) const {
  for (const auto& [prefix, make] : families_) {
    if (name.rfind(prefix, 0) != 0 || name.back() != ')') continue;
    *param = name.substr(prefix.size(), name.size() - prefix.size() - 1);
    return &make;
  }
  return nullptr;
}

double parse_real_param(const std::string& name, const std::string& number, bool lo_closed, double lo, double hi,
                        const char* why) {
  char* end = nullptr;
  const double x = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size())
    throw UsageError(fmt::format("'{}': '{}' is not a number", name, number));
  if ((lo_closed ? x < lo : x <= lo) || x >= hi) throw UsageError(fmt::format("'{}': {}", name, why));
  return x;
}

std::vector<std::string> Catalog::family_prefixes() const {
  std::vector<std::string> out;
  for (const auto& f : families_) out.push_back(f.first);
  return out;
}

const std::vector<Algorithm>& catalog() { return the_catalog().entries(); }
std::vector<std::string> family_prefixes() { return the_catalog().family_prefixes(); }

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
