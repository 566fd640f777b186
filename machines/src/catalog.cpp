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

// One row per family, in the order `touchstone list machines` shows them: its kind, grammar,
// summary, the options it claims and the function that builds it (in the family's own file).
const std::vector<Family>& families() {
  static const std::vector<Family> table = {
      {"mesh", "mesh:RxC[x...]", "n-dimensional mesh, dimension-order (XY) routing, generic 1990s wormhole parameters",
       {}, mesh_machine},
      {"torus", "torus:AxB[x...]", "n-dimensional torus, dimension-order routing, generic parameters",
       {{"deadlock=dateline|none", "torus rings: two virtual channels with a dateline (default), or one channel, "
                                   "cyclic waits reported as deadlock"}},
       torus_machine},
      {"delta", "delta[:RxC]", "the Intel Touchstone Delta (16x32, paper 000) or an RxC sub-mesh of it, fitted to Figure 9",
       {}, delta_machine, delta_open, delta_evidence},
      {"cm5", "cm5[:P]", "the CM-5 (paper 003): a 4-ary fat tree of P = 32..1024 nodes (default 32), 20/10/5 MB/s by level",
       {}, cm5_machine, cm5_open},
      {"switch", "switch:P", "P nodes on one crossbar switch (paper 004; 32 ports unless P > 32)", switch_claims(),
       switch_machine, switch_open},
      {"switch2", "switch2:N1+N2", "two 32-port switches with N1 and N2 nodes, one interconnecting link (paper 004, section 4)",
       switch_claims(), switch2_machine, switch_open},
      {"irregular", "irregular:switches=S,nodes=A-B,links=C-D,parallel=E,seed=N[,total=P]",
       "seeded irregular switch network with paper 004's generator constraints and its stated 5 us start-up (section 5.3)",
       switch_claims({{"nodes=A-B", "nodes per switch"},
                      {"links=C-D", "inter-switch links per switch"},
                      {"parallel=E", "most links between two switches"},
                      {"total=P", "nodes in all"}}),
       irregular_machine, irregular_open},
      {"switchnet", "switchnet:NET.json",
       "a switch network from a file: {\"ports\": 32, \"nodes\": [16, 16], \"links\": [[0, 1]]}", switch_claims(),
       switchnet_machine, switch_open},
      {"hpam", "hpam:R1xC1/R2xC2[/...][,Q=q][,multicast]",
       "HPAM levels of meshes, eq. 1 links and eq. 2 routing, Table 1 costs with ratio Q, optional inter-level "
       "multicast hardware (paper 001)",
       {{"Q=q", "cost ratio between successive levels (Table 1; default 8)"},
        {"multicast", "inter-level replication hardware (section 3.1), a bare flag"}},
       hpam_machine},
      // Claims no options: a file names a spec of any family under "topology", and its "params"
      // are the generic options.
      {"", "FILE.json", "a machine file: {\"topology\": \"mesh:4x4\", \"name\": ..., \"params\": {option: value}}", {},
       file_machine},
  };
  return table;
}

// A claim without '=' is a bare flag ("multicast").
bool is_flag(const std::string& key) {
  for (const Family& f : families())
    for (const auto& [claim, help] : f.claims)
      if (key == claim) return true;
  return false;
}

// One option as written: key=value, or a bare flag. `spec` is the whole spec, for the error.
MachineOption parse_option(const std::string& text, const std::string& spec) {
  const auto eq = text.find('=');
  if (eq == std::string::npos && is_flag(text)) return {text, std::nullopt};  // "hpam:4x4/16x16,Q=8,multicast"
  if (eq == std::string::npos || eq == 0)
    throw UsageError(fmt::format("machine '{}': option '{}' must look like key=value", spec, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

// A text ending in ".json" is a machine file's path unless it starts with a family's kind
// ("switchnet:net.json" is a spec), so that a spec's text never reads as a file.
bool is_json_file(const std::string& spec) {
  if (spec.size() <= 5 || spec.substr(spec.size() - 5) != ".json") return false;
  const std::string kind = spec.substr(0, spec.find_first_of(":,"));
  for (const Family& f : families())
    if (*f.kind && kind == f.kind) return false;
  return true;
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

const Family& file_family() { return families().back(); }

const Family& find_family(const std::string& kind, const std::string& spec) {
  for (const Family& f : families())
    if (*f.kind && kind == f.kind) return f;
  std::string known;
  for (const Family& f : families()) known += std::string(known.empty() ? "" : ", ") + (*f.kind ? f.grammar : "FILE.json");
  throw UsageError(fmt::format("unknown machine '{}'; known: {} (touchstone list machines)", spec, known));
}

Machine build(const Family& f, const std::string& arg, SpecOptions& opts, const std::string& spec) {
  Machine m = f.make(arg, opts, spec);
  for (const auto& [key, value] : opts.rest()) {
    for (const Family& other : families())
      if (&other != &f && claims(other, key))
        throw UsageError(fmt::format("machine '{}': option '{}' belongs to {} machines ({}), not to {}", spec, key,
                                     other.kind, other.grammar, f.grammar));
    apply_option(m, key, value);
  }
  return m;
}

}  // namespace touchstone::machines

namespace touchstone {

bool is_machine_file(const std::string& spec) { return machines::is_json_file(spec); }

std::vector<OpenVariant> open_variants(const MachineSpec& spec) {
  using namespace machines;
  if (spec.is_file()) return {};
  const Family& family = find_family(spec.family, spec.text());
  std::vector<OpenVariant> out;
  if (family.open)
    for (const auto& v : family.open()) out.push_back({v.options, v.why, v.contradicted});
  return out;
}

std::vector<OpenVariant> open_variants(const std::string& spec) { return open_variants(MachineSpec::parse(spec)); }

std::string RankingEvidence::statement() const {
  return fmt::format("on {}, the preset puts {} pairs of algorithms less than {:.0f}% apart, and the machine ran {} of them "
                     "in the other order ({} of the {} pairs further apart; `{}`)",
                     measured_on, close_pairs, 100 * decisive_lead, close_reordered, far_reordered, far_pairs, counted_by);
}

std::optional<RankingEvidence> ranking_evidence(const MachineSpec& spec) {
  using namespace machines;
  if (spec.is_file()) return std::nullopt;
  const Family& family = find_family(spec.family, spec.text());
  if (!family.evidence) return std::nullopt;
  return family.evidence();
}

std::optional<RankingEvidence> ranking_evidence(const std::string& spec) {
  return ranking_evidence(MachineSpec::parse(spec));
}

MachineSpec MachineSpec::parse(const std::string& text) {
  using namespace machines;
  MachineSpec spec;
  if (is_json_file(text)) {
    spec.argument = text;
    return spec;
  }
  const auto parts = split(text, ',');
  if (parts[0].empty()) throw UsageError("empty machine spec; try mesh:16x16");
  const auto colon = parts[0].find(':');
  spec.family = parts[0].substr(0, colon);
  spec.argument = colon == std::string::npos ? "" : parts[0].substr(colon + 1);
  find_family(spec.family, text);  // a known family, or the error naming the known ones
  for (std::size_t i = 1; i < parts.size(); ++i) spec.options.push_back(parse_option(parts[i], text));
  return spec;
}

std::string MachineSpec::text() const {
  if (is_file()) return argument;
  std::string out = argument.empty() ? family : family + ":" + argument;
  for (const auto& [key, value] : options) out += value ? fmt::format(",{}={}", key, *value) : "," + key;
  return out;
}

void MachineSpec::add_options(const std::string& text) {
  if (is_file())
    throw UsageError(fmt::format("machine file '{}' takes its options in its \"params\"; put a variant in a file of its own",
                                 argument));
  const std::string whole = this->text() + "," + text;  // the spec they make, for the error
  for (const auto& part : machines::split(text, ',')) options.push_back(machines::parse_option(part, whole));
}

Machine build_machine(const MachineSpec& spec) {
  using namespace machines;
  if (spec.is_file()) {
    if (!spec.options.empty())
      throw UsageError(fmt::format("machine file '{}' takes its options in its \"params\", not in the spec", spec.argument));
    SpecOptions none;
    return file_machine(spec.argument, none, spec.argument);
  }
  const std::string text = spec.text();
  const Family& family = find_family(spec.family, text);
  SpecOptions opts;
  for (const auto& [key, value] : spec.options) opts.add(key, value.value_or("on"));
  Machine m = build(family, spec.argument, opts, text);
  if (!spec.options.empty()) m.name = text;
  return m;
}

Machine parse_machine(const std::string& spec) { return build_machine(MachineSpec::parse(spec)); }

std::vector<std::pair<std::string, std::string>> machine_presets() {
  using namespace machines;
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::pair<const char*, const char*>> listed;  // shared claims (the switch families') once
  for (const Family& f : families()) {
    out.emplace_back(f.grammar, f.open ? fmt::format("{}; sweep --vary open tries the {} settings its calibration leaves open",
                                                     f.summary, f.open().size())
                                       : std::string(f.summary));
    for (const auto& c : f.claims)
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
