// The machine catalog (docs/machines.md): presets of the five papers' machines, generic meshes and
// tori, switch clusters, HPAM, and JSON machine files, all from one spec grammar.
//
//   Machine m = parse_machine("delta:16x16");
//   MachineSpec s = MachineSpec::parse("torus:8x8,deadlock=none");  // parsed once, edited as a value
//   s.options.push_back({"hop_ns", "20"});
//   Machine t = build_machine(s);  // named "torus:8x8,deadlock=none,hop_ns=20", its s.text()
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "touchstone/machine.hpp"

namespace touchstone {

/// One option of a machine spec: key=value, or a bare flag a family claims ("multicast").
struct MachineOption {
  std::string key;
  std::optional<std::string> value;  ///< none for a bare flag
  bool operator==(const MachineOption&) const = default;
};

/// A machine spec as a value: "KIND[:ARG][,key=value...]" ("mesh:16x16", "delta",
/// "hpam:4x4/16x16,Q=8,multicast") or the path of a JSON machine file. Parsed once from its text;
/// a variant is the value with options added (a later option overrides an earlier one). Its text
/// form round-trips: MachineSpec::parse(s.text()) == s.
struct MachineSpec {
  std::string family;                  ///< "mesh", "delta", ...; empty for a machine file
  std::string argument;                ///< after "KIND:" ("16x16"), or the machine file's path
  std::vector<MachineOption> options;  ///< in the order written

  /// Parses the grammar: a known family, options key=value or a family's bare flag. Reads no file
  /// and checks no value (build_machine does). UsageError naming the bad part.
  static MachineSpec parse(const std::string& text);
  /// The spec as written: parse(text()) == *this.
  std::string text() const;
  bool is_file() const { return family.empty(); }
  /// Appends options written as "key=value[,key=value...]" (sweep --vary); UsageError naming the
  /// spec they make when one is malformed, or when this is a machine file (its options are its
  /// "params").
  void add_options(const std::string& text);
  bool operator==(const MachineSpec&) const = default;
};

/// Builds the machine of a spec: the family takes its options, the rest are generic options
/// (docs/machines.md); a machine file is read here. A spec with options names the machine by its
/// text. UsageError naming the bad part.
Machine build_machine(const MachineSpec& spec);

/// build_machine(MachineSpec::parse(spec)): "mesh:16x16", "torus:8x8x8,deadlock=none",
/// "mesh:4x4,ports=all,buffer=4096", or the path of a JSON machine file.
Machine parse_machine(const std::string& spec);

/// An eager limit as the machine option `eager_limit=` and the `--eager-limit` of every command
/// write it (docs/model.md 2.16): BYTES in 0..2^50, "unlimited" (only a full `buffer=` sends by
/// rendezvous) or "off" (NetworkParams::kNoFlowControl). UsageError naming `what` otherwise.
std::int64_t parse_eager_limit(const std::string& what, const std::string& text);

/// True when `spec` is the path of a JSON machine file ("m.json"), not a spec of a family.
bool is_machine_file(const std::string& spec);

/// A setting of a preset's parameters that its paper's evidence does not rule out: `options` to add
/// to the spec ("send_us=117,recv_us=116.64"), and `why` (the range it ends, where it comes from).
/// docs/machines.md, "Where every preset parameter comes from", gives the evidence for each.
struct OpenVariant {
  std::string options;
  std::string why;
  /// Not the end of an open range but a value the paper states and its own data contradict, so the
  /// preset follows the data (docs/machines.md). A sweep (`--vary open`) still shows what it would
  /// change; a claims ledger notes the claims it would flip without calling them undecided
  /// (claims::Ledger::annotate): between two statements that cannot both hold, the preset has chosen.
  bool contradicted = false;
};

/// The open variants of `spec`'s family: the ends of the ranges its calibration leaves open, one
/// parameter (or one relation between parameters) at a time, and the stated values its paper's data
/// contradict (OpenVariant::contradicted). Empty for the families that are not fitted to a paper
/// (mesh, torus, hpam, machine files).
std::vector<OpenVariant> open_variants(const MachineSpec& spec);
/// open_variants(MachineSpec::parse(spec)): UsageError for a spec of no family.
std::vector<OpenVariant> open_variants(const std::string& spec);

/// How far a calibrated preset's rankings can be trusted, judged against its paper's measured
/// times: of the pairs of algorithms (at one setting) the preset puts less than `decisive_lead`
/// apart (0.10 = 10%), how many the real machine ran in the other order, and of the pairs further
/// apart. The counts are a measurement of the preset as declared, taken by `counted_by`.
struct RankingEvidence {
  double decisive_lead = 0;
  int close_pairs = 0, close_reordered = 0;  ///< pairs less than decisive_lead apart in ours
  int far_pairs = 0, far_reordered = 0;      ///< the others
  std::string measured_on;                   ///< "the Delta's measured Figure 9 (...)"
  std::string counted_by;                    ///< the command that counts them, "paper000 fig9"
  /// One sentence with the counts, for the note under a sweep's table.
  std::string statement() const;
};

/// The ranking evidence of `spec`'s family; none for the families with no measured times to judge
/// them by (mesh, torus, hpam, machine files, and presets whose papers give plots only).
std::optional<RankingEvidence> ranking_evidence(const MachineSpec& spec);
/// ranking_evidence(MachineSpec::parse(spec)): UsageError for a spec of no family.
std::optional<RankingEvidence> ranking_evidence(const std::string& spec);

/// One line per family with its grammar, then the options families claim and the generic options,
/// for `touchstone list machines`.
std::vector<std::pair<std::string, std::string>> machine_presets();

/// The whole of an input file (machine files, switch network files, traffic files): only a regular
/// file of at most `max_bytes` is read, not /dev/zero or a FIFO, which would read forever.
/// UsageError naming `what` (e.g. "traffic file") and the path otherwise.
std::string read_input_file(const std::string& what, const std::string& path, std::size_t max_bytes);

}  // namespace touchstone
