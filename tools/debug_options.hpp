// The debugging options of a run (docs/debugging.md), declared once so that every command that
// runs a program (`touchstone run`, `touchstone mpirun`) offers the same ones.
#pragma once
#include <cstdint>
#include <string>

#include "touchstone/run.hpp"

namespace CLI {
class App;
}

namespace touchstone::cli {

struct DebugOptions {
  std::string trace;      ///< --trace FILE
  std::string order_log;  ///< --order-log FILE
  std::uint64_t perturb = 0;
  std::string races;      ///< --races[=report|error]: "" when not asked
  bool internal = false;  ///< --internal: reports show the runtime's own messages
};

/// Adds --trace, --order-log, --perturb, --races[=error] and --internal to a command.
void add_debug_options(CLI::App* cmd, DebugOptions& d);
/// Copies them into the run's options.
void apply_debug_options(const DebugOptions& d, RunOptions& o);
/// What a successful run found that the user asked about (the races), as text; "" if nothing.
std::string debug_findings(const DebugOptions& d, const RunResult& r);

}  // namespace touchstone::cli
