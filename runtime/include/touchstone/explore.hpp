// Exploring the other outcomes of message races (docs/debugging.md, "Exploring").
//
// explore() runs a program once as given, then again and again forcing alternative matches at
// its racing wildcard receives (RunOptions::schedule), depth-first over the choices in a fixed
// order, at most `max_runs` runs in all, and reports every run whose outcome differs from the
// first: it failed (deadlock, exception or failed check in VP code, unreceived messages) or ended
// with other data received. Each such run is named by its choice vector, which --schedule (or
// RunOptions::schedule) replays exactly.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "touchstone/run.hpp"

namespace touchstone {

struct ExploredRun {
  std::vector<ForcedMatch> schedule;  ///< the choices that make this run (empty: the original)
  bool failed = false;
  std::string outcome;                ///< "completed" or the error's first line
  std::vector<int> different_data;    ///< ranks that received other data than in the original
  std::uint64_t trace_hash = 0;       ///< the run's trace hash (up to its failure); 0: not known
};

struct Exploration {
  ExploredRun original;
  int runs = 0;                        ///< runs made, the original included
  bool exhausted = false;              ///< every choice was explored within the bound
  std::vector<ExploredRun> different;  ///< runs whose outcome differs from the original, in run order
};

/// Explores `program`'s races on `machine` within `max_runs` runs (>= 1). `options` is used for
/// every run, without its trace and order-log files, with race detection on.
Exploration explore(const Machine& machine, const Program& program, const RunOptions& options, int max_runs);

/// What exploring needs of one run: whether it failed and how (the error's first line), and, for
/// a completed run, what each rank received (RunResult::received) and its races.
struct RunOutcome {
  bool failed = false;
  std::string outcome;  ///< "completed" or the error's first line
  std::vector<std::uint64_t> received;
  std::vector<Race> races;
  std::uint64_t trace_hash = 0;  ///< RunResult::trace_hash, or RunError::trace_hash of a failed run
};

/// The same exploration over runs made by `attempt` (given the choices to force; race detection
/// on, no trace): for launchers that make each run in a fresh process, such as `mpirun --explore`.
/// `first` is the original run's schedule.
Exploration explore(const std::function<RunOutcome(const std::vector<ForcedMatch>&)>& attempt,
                    const std::vector<ForcedMatch>& first, int max_runs);

/// The report printed by --explore.
std::string describe_exploration(const Exploration& e, int max_runs);

}  // namespace touchstone
