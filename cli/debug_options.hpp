// The debugging options of a run (docs/debugging.md), declared once so that every command that
// runs a program (`touchstone run`, `touchstone mpirun`) offers the same ones.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include "touchstone/run.hpp"

namespace CLI {
class App;
}

namespace touchstone {
struct Exploration;
}

namespace touchstone::cli {

struct DebugOptions {
  std::string trace;      ///< --trace FILE
  std::string order_log;  ///< --order-log FILE
  std::uint64_t perturb = 0;
  std::string races;      ///< --races[=report|error|error-all]: "" when not asked
  bool internal = false;  ///< --internal: reports show the runtime's own messages
  int explore = 0;        ///< --explore N: runs to explore the races' other outcomes in (0: none)
  std::string schedule;   ///< --schedule CHOICES: forced matches to replay
  bool explain = false;   ///< --explain: top blocked channels and longest blocking chains
};

/// What the user asked to learn besides the run's figures.
struct Findings {
  std::string text;             ///< races (--races) and exploration (--explore) reports
  bool other_outcomes = false;  ///< a race is harmful: an explored run ended otherwise (exit 3)
};

/// Runs --races=error explores when --explore does not say: enough for the alternatives of a few
/// races and the races they lead to.
inline constexpr int kClassifyingRuns = 20;
/// The runs to explore: --explore N, else kClassifyingRuns for --races=error, else 0.
int exploring_runs(const DebugOptions& d);
/// A harmful race or an explored run that ended otherwise: the command exits with status 3.
bool other_outcomes(const Exploration& e);

/// Prints the error that ended a command the way the CLI does (docs/cli.md, "Exit codes") and
/// returns its exit code: 2 when the run failed (RunError), 1 for anything else.
int report_failure(const std::exception& e);

/// Adds --trace, --order-log, --perturb, --races[=error] and --internal to a command.
void add_debug_options(CLI::App* cmd, DebugOptions& d);
/// Copies them into the run's options.
void apply_debug_options(const DebugOptions& d, RunOptions& o);
/// After a successful run `r` of `program` with options `o`: its races, and the exploration of
/// their other outcomes (which runs the program again).
Findings debug_findings(const DebugOptions& d, const Machine& m, const Program& program, const RunOptions& o,
                        const RunResult& r);

}  // namespace touchstone::cli
