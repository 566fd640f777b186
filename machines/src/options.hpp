// The generic machine options: cost and network parameters any machine may set
// ("mesh:4x4,hop_ns=20", or "params" of a JSON machine file). One table serves both, so a key
// means the same thing wherever it is written.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "touchstone/machine.hpp"

namespace touchstone::machines {

/// Sets one option; UsageError for an unknown key (listing the known ones) or a bad value.
void apply_option(Machine& m, const std::string& key, const std::string& value);

/// {key, help} of every generic option, in table order.
std::vector<std::pair<std::string, std::string>> generic_options();

}  // namespace touchstone::machines
