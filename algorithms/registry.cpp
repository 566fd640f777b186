#include "registry.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "families.hpp"
#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::algorithms {

namespace {

// Each family file registers its own entries and parameterised families, in catalog order; plug-ins
// add theirs after (load_plugin).
Catalog& the_catalog() {
  static Catalog c = [] {
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
  const auto x = number_from_text<double>(number);
  if (!x) throw UsageError(fmt::format("'{}': '{}' is not a number", name, number));
  if ((lo_closed ? *x < lo : *x <= lo) || *x >= hi) throw UsageError(fmt::format("'{}': {}", name, why));
  return *x;
}

void Catalog::merge(Catalog other, const std::string& origin) {
  const auto taken = [&](const std::string& what, const std::string& name) {
    return UsageError(fmt::format("{}: {} '{}' is already in the catalog; give it another name", origin, what, name));
  };
  std::set<std::string> names;
  for (const auto& a : entries_) names.insert(a.name);
  for (const auto& a : other.entries_) {
    std::string param;
    if (a.name.find('/') == std::string::npos)
      throw UsageError(
          fmt::format("{}: algorithm '{}' has no collective: names are \"collective/name\"", origin, a.name));
    if (!names.insert(a.name).second) throw taken("algorithm", a.name);
    if (family_of(a.name, &param)) throw taken("algorithm", a.name);
  }
  for (const auto& [prefix, make] : other.families_) {
    if (prefix.find('/') == std::string::npos || prefix.back() != '(')
      throw UsageError(fmt::format("{}: family '{}' must be \"collective/name(\"", origin, prefix));
    for (const auto& [mine, unused] : families_)
      if (mine == prefix) throw taken("family", prefix + "...)");
  }
  for (auto& a : other.entries_) entries_.push_back(std::move(a));
  for (auto& f : other.families_) families_.push_back(std::move(f));
}

std::vector<std::string> Catalog::family_prefixes() const {
  std::vector<std::string> out;
  for (const auto& f : families_) out.push_back(f.first);
  return out;
}

const std::deque<Algorithm>& catalog() { return the_catalog().entries(); }
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
  // "alltoall/all,alltoall/bruck" names a plug-in's algorithm twice: it runs once.
  const auto add = [&out](const Algorithm* a) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  for (const auto& item : items) {
    if (item.size() > 4 && item.substr(item.size() - 4) == "/all") {
      const std::string family = item.substr(0, item.size() - 3);  // keeps the slash
      bool any = false;
      for (const auto& a : catalog())
        if (a.name.rfind(family, 0) == 0) add(&a), any = true;
      if (!any) throw UsageError(fmt::format("no algorithms in family '{}'", item));
    } else if (!item.empty()) {
      add(&find(item));
    }
  }
  if (out.empty()) throw UsageError("no algorithms selected");
  return out;
}

void load_plugin(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw UsageError(fmt::format("--plugin '{}': no such file", path));
  // Absolute: dlopen would search the library path for a name without a slash.
  const std::string file = fs::canonical(path, ec).string();
  static std::mutex mu;
  static std::set<std::string> loaded;
  const std::lock_guard lock(mu);
  if (loaded.count(file)) return;
  // RTLD_LOCAL: each plug-in's own symbols stay its own; it reaches the runtime and the catalog
  // through libtouchstone.so and libtouchstone_algorithms.so, which it links, the same copies as
  // ours. Never closed: the catalog holds its functions.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw UsageError(fmt::format("--plugin '{}': cannot load it: {}", path, dlerror()));
  using Entry = void(Catalog&);
  auto* entry = reinterpret_cast<Entry*>(dlsym(handle, "touchstone_register_algorithms"));
  if (!entry)
    throw UsageError(
        fmt::format("--plugin '{}' is not a Touchstone plug-in: it defines no "
                    "extern \"C\" touchstone_register_algorithms (docs/extending.md)",
                    path));
  Catalog mine;
  entry(mine);
  if (mine.entries().empty() && mine.family_prefixes().empty())
    throw UsageError(fmt::format("--plugin '{}' registers no algorithms", path));
  the_catalog().merge(std::move(mine), fmt::format("--plugin '{}'", path));
  loaded.insert(file);
}

Args run_args(std::size_t size, int root, bool check, const std::string& traffic) {
  Args args{size, root, check};
  if (!traffic.empty()) {
    args.traffic = parse_traffic(traffic);
    if (!args.traffic.fixed()) args.traffic.t = static_cast<std::int64_t>(size);
  }
  return args;
}

std::vector<std::size_t> run_sizes(const std::string& traffic, const std::vector<const Algorithm*>& algs,
                                   const std::optional<std::vector<std::size_t>>& given, const std::string& flag) {
  if (traffic.empty()) {
    if (!given) throw UsageError(fmt::format("{} is required (see touchstone run --help)", flag));
    return *given;
  }
  for (const auto* a : algs)
    if (!a->name.starts_with("alltoallv/"))
      throw UsageError(
          fmt::format("--traffic is the communication matrix of alltoallv/ algorithms; {} takes none", a->name));
  const TrafficSpec spec = parse_traffic(traffic);
  if (!spec.fixed()) {
    if (!given)
      throw UsageError(
          fmt::format("--traffic {} gives no t: give the traffic per processor as t=BYTES or with {}", traffic, flag));
    return *given;
  }
  if (!spec.file.empty()) {
    if (given) throw UsageError(fmt::format("--traffic file= fixes every message; {} does not apply", flag));
    return {0};
  }
  const auto t = static_cast<std::size_t>(spec.t);
  if (given && *given != std::vector<std::size_t>{t})
    throw UsageError(
        fmt::format("{} and --traffic t={} disagree: the traffic per processor is the run's size; give it once "
                    "(leave t= out to take it from {})",
                    flag, t, flag));
  return {t};
}

}  // namespace touchstone::algorithms
