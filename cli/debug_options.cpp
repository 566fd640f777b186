#include "cli/debug_options.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/numeric_option.hpp"
#include "touchstone/error.hpp"
#include "touchstone/explore.hpp"

namespace touchstone::cli {

void add_debug_options(CLI::App* cmd, DebugOptions& d) {
  cmd->add_option("--trace", d.trace,
                  "write a Chrome Trace Event JSON file (open it in Perfetto); written up to the "
                  "failure when the run fails");
  cmd->add_option("--order-log", d.order_log, "write the plain-text per-VP message order log (also on failure)");
  cmd->add_option("--perturb", d.perturb, "seeded random host delays in VP threads; results must not change")
      ->check(number_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_flag("--races{report}", d.races,
                fmt::format("find message races at receives and probes with any_source or any_tag; with --explore "
                            "each is classified harmful (another match changes the outcome) or harmless; "
                            "--races=error explores (--explore N, else {} runs) and fails the run (exit 3) on a "
                            "harmful race; --races=error-all fails it (exit 2) on any race",
                            kClassifyingRuns))
      ->check(CLI::IsMember({"report", "error", "error-all"}));
  cmd->add_option("--explore", d.explore,
                  "re-run up to N times forcing other matches at racing wildcard receives; print every run whose "
                  "outcome (exit status, output, error, deadlock) differs, with the --schedule that replays it, "
                  "and whether each race is harmful or harmless")
      ->check(number_in(1, 1000000));
  cmd->add_option("--schedule", d.schedule, "replay forced matches RANK:CALL=SOURCE[,...] (from --explore)");
  cmd->add_flag("--explain", d.explain,
                "print the channels with the most blocked time and the longest waits, with the chain of worms "
                "in the way");
  cmd->add_flag("--internal", d.internal, "deadlock reports show the runtime's own messages (barrier, split)");
}

void apply_debug_options(const DebugOptions& d, RunOptions& o) {
  o.trace_file = d.trace;
  o.order_log_file = d.order_log;
  o.perturb = d.perturb;
  o.report_internal = d.internal;
  // --races=error is decided after exploring (debug_findings): the run itself only reports.
  o.races = d.races.empty() ? RaceCheck::off : d.races == "error-all" ? RaceCheck::error : RaceCheck::report;
  if (!d.schedule.empty()) o.schedule = parse_schedule(d.schedule);
  o.explain = d.explain;
}

int report_failure(const std::exception& e) {
  if (dynamic_cast<const RunUsageError*>(&e)) {  // a usage error found inside VP code
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  if (dynamic_cast<const RunError*>(&e)) {
    fmt::print(stderr, "error: the run failed:\n{}\n", e.what());
    return 2;
  }
  fmt::print(stderr, "error: {}\n", e.what());
  return 1;
}

Findings debug_findings(const DebugOptions& d, const Machine& m, const Program& program, const RunOptions& o,
                        const RunResult& r) {
  Findings f;
  if (!d.races.empty()) f.text += describe_races(r.races, o.describe_race);
  f.text += r.explanation;
  if (const int runs = exploring_runs(d); runs > 0) {
    const Exploration e = explore(m, program, o, runs);
    f.text += describe_exploration(e, runs);
    f.other_outcomes = other_outcomes(e);
  }
  return f;
}

int exploring_runs(const DebugOptions& d) {
  return d.explore > 0 ? d.explore : d.races == "error" ? kClassifyingRuns : 0;
}

bool other_outcomes(const Exploration& e) { return e.harmful() > 0 || !e.different.empty(); }

}  // namespace touchstone::cli
