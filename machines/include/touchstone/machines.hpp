// The machine catalog (docs/machines.md): presets of the five papers' machines, generic meshes and
// tori, switch clusters, HPAM, and JSON machine files, all from one spec grammar.
//
//   Machine m = parse_machine("delta:16x16");
//   Machine t = parse_machine("torus:8x8,deadlock=none,hop_ns=20");
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "touchstone/machine.hpp"

namespace touchstone {

/// Parses "mesh:16x16", "torus:8x8x8,deadlock=none", "mesh:4x4,ports=all,buffer=4096", or the
/// path of a JSON machine file. Throws touchstone::UsageError naming the bad part.
Machine parse_machine(const std::string& spec);

/// One line per family with its grammar, then the options families claim and the generic options,
/// for `touchstone list machines`.
std::vector<std::pair<std::string, std::string>> machine_presets();

}  // namespace touchstone
