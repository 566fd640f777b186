#include "registry.hpp"

#include <fmt/format.h>

#include "harness.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
std::vector<Algorithm> build() {
  std::vector<Algorithm> c;
  add_alltoall_algorithms(c);
  add_selftest_algorithms(c);
  return c;
}
}  // namespace

const std::vector<Algorithm>& catalog() {
  static const std::vector<Algorithm> c = build();
  return c;
}

const Algorithm& find(const std::string& name) {
  for (const auto& a : catalog())
    if (a.name == name) return a;
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
