#include "registry.hpp"

#include <cstdlib>
#include <deque>
#include <mutex>

#include <fmt/format.h>

#include "harness.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
std::vector<Algorithm> build() {
  std::vector<Algorithm> c;
  add_alltoall_algorithms(c);
  add_scatter_algorithms(c);
  add_gather_algorithms(c);
  add_selftest_algorithms(c);
  return c;
}
// "scatter/logp-lev-rec(0.6)" and "gather/logp-lev-rec(0.3)": paper 000's logp-lev-rec(gamma)
// for any gamma the paper allows. Built on first use and kept, so references stay valid.
const Algorithm* parameterized(const std::string& name) {
  struct Family {
    const char* prefix;
    Algorithm (*make)(double);
    bool (*allowed)(double);
    const char* range;
  };
  static const Family families[] = {
      {"scatter/logp-lev-rec(", scatter_logp_lev_rec_entry, [](double g) { return g >= 0.5 && g < 1.0; },
       "0.5 <= gamma < 1 (paper 000, section 3.1)"},
      {"gather/logp-lev-rec(", gather_logp_lev_rec_entry, [](double g) { return g > 0.0 && g < 1.0; },
       "0 < gamma < 1 (paper 000, section 4)"},
  };
  for (const auto& f : families) {
    const std::string prefix = f.prefix;
    if (name.rfind(prefix, 0) != 0 || name.back() != ')') continue;
    const std::string number = name.substr(prefix.size(), name.size() - prefix.size() - 1);
    char* end = nullptr;
    const double gamma = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size())
      throw UsageError(fmt::format("'{}': gamma '{}' is not a number", name, number));
    if (!f.allowed(gamma)) throw UsageError(fmt::format("'{}': gamma must satisfy {}", name, f.range));
    static std::mutex mu;
    static std::deque<std::pair<std::string, Algorithm>> made;
    const std::lock_guard lock(mu);
    for (const auto& [n, a] : made)
      if (n == name) return &a;
    Algorithm a = f.make(gamma);
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
  std::vector<const Algorithm*> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.size() > 4 && item.substr(item.size() - 4) == "/all") {
      const std::string family = item.substr(0, item.size() - 3);  // keeps the slash
      std::size_t before = out.size();
      for (const auto& a : catalog())
        if (a.name.rfind(family, 0) == 0) out.push_back(&a);
      if (out.size() == before) throw UsageError(fmt::format("no algorithms in family '{}'", item));
    } else if (!item.empty()) {
      out.push_back(&find(item));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw UsageError("no algorithms selected");
  return out;
}

}  // namespace touchstone::algorithms
