// A machine family: one prefix of the machine grammar ("mesh:", "delta", "hpam:"), the options it
// claims beyond the generic ones, and the function that builds its machines. Every family lives in
// its own file with its presets; catalog.cpp holds the table of them. Adding a family is one new
// file and one row of that table (docs/extending.md).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "touchstone/machine.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::machines {

/// The key=value options of one spec ("mesh:4x4,ports=all,buffer=4096" holds two). A family takes
/// the ones it claims; what is left is applied as generic options (options.hpp).
class SpecOptions {
 public:
  SpecOptions() = default;
  explicit SpecOptions(std::vector<std::pair<std::string, std::string>> kv) : kv_(std::move(kv)) {}
  /// The value of `key`, removed from the options (the last one if it is given twice).
  std::optional<std::string> take(const std::string& key);
  /// Every option not taken, in the order written.
  const std::vector<std::pair<std::string, std::string>>& rest() const { return kv_; }
  void add(std::string key, std::string value) { kv_.emplace_back(std::move(key), std::move(value)); }

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

/// Options a family claims, each {"key=VALUES", "help"}.
using Claims = std::vector<std::pair<const char*, const char*>>;

/// Builds a family's machine from the text after "kind:" (empty when there is none), taking its
/// claimed options out of `opts`. `spec` is the whole spec, for errors.
using MakeMachine = Machine (*)(const std::string& arg, SpecOptions& opts, const std::string& spec);

/// One open variant of a calibrated family (touchstone::OpenVariant).
struct OpenVariantRow {
  const char* options;
  const char* why;
  bool contradicted = false;
};
/// The open variants of a calibrated family (touchstone::open_variants).
using OpenVariants = std::vector<OpenVariantRow>;

/// One row of the catalog's table (catalog.cpp).
struct Family {
  const char* kind;     ///< the spec's head before ':' ("mesh"), or "" for JSON machine files
  const char* grammar;  ///< for `touchstone list machines`, e.g. "mesh:RxC[x...]"
  const char* summary;  ///< one line
  /// Options only this family understands: listed, and named in the error when another family's
  /// spec uses them.
  Claims claims;
  MakeMachine make;
  /// What the family's calibration leaves open (in the family's own file); none when null.
  const OpenVariants& (*open)() = nullptr;
  /// How far its rankings can be trusted, from measured times (in the family's own file); none
  /// when null.
  const RankingEvidence& (*evidence)() = nullptr;
};

// The families' make functions, one file each.
Machine mesh_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);       // grid.cpp
Machine torus_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);      // grid.cpp
Machine delta_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);      // delta.cpp
Machine cm5_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);        // cm5.cpp
Machine switch_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);     // switch_clusters.cpp
Machine switch2_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);    // switch_clusters.cpp
Machine irregular_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);  // switch_clusters.cpp
Machine switchnet_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);  // switch_clusters.cpp
Machine hpam_machine(const std::string& arg, SpecOptions& opts, const std::string& spec);       // hpam.cpp
Machine file_machine(const std::string& path, SpecOptions& opts, const std::string& spec);      // json_file.cpp

// The calibrated families' open variants, beside their presets.
const OpenVariants& delta_open();      // delta.cpp
const RankingEvidence& delta_evidence();  // delta.cpp
const OpenVariants& cm5_open();        // cm5.cpp
const OpenVariants& switch_open();     // switch_clusters.cpp: switch, switch2, switchnet (Table 2's costs)
const OpenVariants& irregular_open();  // switch_clusters.cpp

/// The options every switch family claims (placement, seed, ports), then `own`
/// (switch_clusters.cpp).
Claims switch_claims(Claims own = {});

/// The family of JSON machine files (catalog.cpp).
const Family& file_family();

/// A machine on `topology`, named after it, with every cost and network parameter at its default.
Machine machine_on(std::shared_ptr<const Topology> topology);

/// The generic wormhole machine of the 1990s on any topology (grid.cpp; docs/machines.md): the
/// defaults other families start from.
Machine generic_machine(std::shared_ptr<const Topology> topology);

/// A network whose channels (links, injection, ejection) all move a byte in `byte_time`, whose
/// header pays `hop` per channel, and whose packets carry `payload` data bytes behind `header`
/// bytes (grid.cpp): what every preset states about its network.
void set_channels(NetworkParams& net, Time hop, Time byte_time, int payload, int header);

}  // namespace touchstone::machines

namespace touchstone::machines {

/// True when a spec is the path of a JSON machine file ("m.json", not "switchnet:net.json").
bool is_json_file(const std::string& spec);
/// The key of a claim ("placement" of "placement=block|cyclic|random").
std::string claim_key(const char* claim);
/// True when `f` claims `key`.
bool claims(const Family& f, const std::string& key);
/// The family of a spec head's kind ("mesh"); UsageError naming the known ones.
const Family& find_family(const std::string& kind, const std::string& spec);
/// Builds a machine of family `f`: the family takes its options, the rest are generic options
/// (an option another family claims is refused naming that family).
Machine build(const Family& f, const std::string& arg, SpecOptions& opts, const std::string& spec);

}  // namespace touchstone::machines
