// The machine catalog: the table of families and the spec grammar "KIND[:ARG][,key=value...]".
#include <algorithm>

#include <fmt/format.h>

#include "family.hpp"
#include "options.hpp"
#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::machines {
namespace {

// One row per family, in the order `touchstone list machines` shows them.
const Family* const kFamilies[] = {
    &mesh_family,      &torus_family,    &delta_family, &cm5_family,  &switch_family, &switch2_family,
    &irregular_family, &switchnet_family, &hpam_family, &json_file_family,
};

// A claim without '=' is a bare flag ("multicast").
bool is_flag(const std::string& key) {
  for (const Family* f : kFamilies)
    for (const auto& [claim, help] : f->claims)
      if (key == claim) return true;
  return false;
}

}  // namespace

bool is_json_file(const std::string& spec) {
  return spec.size() > 5 && spec.substr(spec.size() - 5) == ".json" && spec.rfind("switchnet:", 0) != 0;
}

std::optional<std::string> SpecOptions::take(const std::string& key) {
  std::optional<std::string> value;
  for (auto it = kv_.begin(); it != kv_.end();) {
    if (it->first == key) {
      value = it->second;
      it = kv_.erase(it);
    } else {
      ++it;
    }
  }
  return value;
}

std::string claim_key(const char* claim) {
  const std::string c = claim;
  return c.substr(0, c.find('='));
}

bool claims(const Family& f, const std::string& key) {
  for (const auto& [claim, help] : f.claims)
    if (claim_key(claim) == key) return true;
  return false;
}

const Family& find_family(const std::string& kind, const std::string& spec) {
  for (const Family* f : kFamilies)
    if (*f->kind && kind == f->kind) return *f;
  std::string known;
  for (const Family* f : kFamilies) known += std::string(known.empty() ? "" : ", ") + (*f->kind ? f->grammar : "FILE.json");
  throw UsageError(fmt::format("unknown machine '{}'; known: {} (touchstone list machines)", spec, known));
}

Machine build(const Family& f, const std::string& arg, SpecOptions& opts, const std::string& spec) {
  Machine m = f.make(arg, opts, spec);
  for (const auto& [key, value] : opts.rest()) {
    for (const Family* other : kFamilies)
      if (other != &f && claims(*other, key))
        throw UsageError(fmt::format("machine '{}': option '{}' belongs to {} machines ({}), not to {}", spec, key,
                                     other->kind, other->grammar, f.grammar));
    apply_option(m, key, value);
  }
  return m;
}

}  // namespace touchstone::machines

namespace touchstone {

Machine parse_machine(const std::string& spec) {
  using namespace machines;
  if (is_json_file(spec)) {
    SpecOptions none;
    return json_file_family.make(spec, none, spec);
  }
  const auto parts = split(spec, ',');
  if (parts[0].empty()) throw UsageError("empty machine spec; try mesh:16x16");
  const auto colon = parts[0].find(':');
  const std::string kind = parts[0].substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : parts[0].substr(colon + 1);
  const Family& family = find_family(kind, spec);
  SpecOptions opts;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos && is_flag(parts[i])) {
      opts.add(parts[i], "on");  // a bare flag: "hpam:4x4/16x16,Q=8,multicast"
      continue;
    }
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("machine '{}': option '{}' must look like key=value", spec, parts[i]));
    opts.add(parts[i].substr(0, eq), parts[i].substr(eq + 1));
  }
  Machine m = build(family, arg, opts, spec);
  if (parts.size() > 1) m.name = spec;
  return m;
}

std::vector<std::pair<std::string, std::string>> machine_presets() {
  using namespace machines;
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::pair<const char*, const char*>> listed;  // shared claims (the switch families') once
  for (const Family* f : kFamilies) {
    out.emplace_back(f->grammar, f->summary);
    for (const auto& c : f->claims)
      if (std::find(listed.begin(), listed.end(), c) == listed.end()) {
        listed.push_back(c);
        out.emplace_back(fmt::format("  ,{}", c.first), c.second);
      }
  }
  out.emplace_back("(every machine)", "the generic options, after the family's own:");
  for (const auto& [key, help] : generic_options()) out.emplace_back(fmt::format("  ,{}=", key), help);
  return out;
}

}  // namespace touchstone
