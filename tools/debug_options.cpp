#include "tools/debug_options.hpp"

#include <CLI/CLI.hpp>

namespace touchstone::cli {

void add_debug_options(CLI::App* cmd, DebugOptions& d) {
  cmd->add_option("--trace", d.trace, "write a Chrome Trace Event JSON file (open it in Perfetto); written up to the "
                                      "failure when the run fails");
  cmd->add_option("--order-log", d.order_log, "write the plain-text per-VP message order log (also on failure)");
  cmd->add_option("--perturb", d.perturb, "seeded random host delays in VP threads; results must not change");
  cmd->add_flag("--races{report}", d.races,
                "find message races at receives and probes with any_source or any_tag; --races=error makes any "
                "race a failed run")
      ->check(CLI::IsMember({"report", "error"}));
  cmd->add_flag("--internal", d.internal, "deadlock reports show the runtime's own messages (barrier, split)");
}

void apply_debug_options(const DebugOptions& d, RunOptions& o) {
  o.trace_file = d.trace;
  o.order_log_file = d.order_log;
  o.perturb = d.perturb;
  o.report_internal = d.internal;
  o.races = d.races.empty() ? RaceCheck::off : d.races == "error" ? RaceCheck::error : RaceCheck::report;
}

std::string debug_findings(const DebugOptions& d, const RunResult& r) {
  if (d.races.empty()) return {};
  return describe_races(r.races);
}

}  // namespace touchstone::cli
