// Exploring the other outcomes of message races (docs/debugging.md, "Exploring").
//
// explore() runs a program once as given, then again and again forcing alternative matches at
// its racing wildcard receives (RunOptions::schedule), depth-first over the choices in a fixed
// order, at most `max_runs` runs in all, whether the original run completed or failed. A child
// run keeps its parent's choices that were decided before the race it changes and drops the
// later ones, which the change may have made impossible. Outcomes are compared by what the
// program does: completed or failed, the failure's kind and text (virtual times and message
// numbers aside), the exit status and the output when the launcher captures them. The digest of
// the data each rank received is reported, but only as information: a program that sends
// uninitialized memory receives other bytes on identical runs.
//
// Each race (a wildcard receive or probe of some rank, by call number) is harmful when forcing
// one of its alternatives changed the outcome of the run it was forced in, harmless when every
// alternative forced ended as that run did, and not classified when the bound left some
// alternative unexplored. Each run is named by its choice vector, which --schedule (or
// RunOptions::schedule) replays exactly.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "touchstone/run.hpp"

namespace touchstone {

/// What exploring needs of one run: how it ended, what it did and its races.
struct RunOutcome {
  bool failed = false;
  std::string outcome;  ///< "completed" or the error's first line
  std::vector<std::uint64_t> received;  ///< RunResult::received (information only)
  std::vector<Race> races;              ///< every race, of a failed run up to its failure
  std::uint64_t trace_hash = 0;         ///< RunResult::trace_hash, or RunError::trace_hash of a failed run
  int exit_status = 0;                  ///< the launcher's exit status (0 when it has none)
  std::uint64_t output = 0;             ///< digest of what the program wrote (0: not captured)
};

struct ExploredRun {
  std::vector<ForcedMatch> schedule;  ///< the choices that make this run (empty: the original)
  bool failed = false;
  bool infeasible = false;            ///< the schedule could not be followed (not an outcome of the program)
  std::string outcome;                ///< "completed" or the error's first line
  int exit_status = 0;
  /// The outcome, with the exit status and output when they differ from the original's.
  std::string ending;
  std::vector<int> different_data;    ///< ranks that received other data than in the original (information)
  std::uint64_t trace_hash = 0;       ///< the run's trace hash (up to its failure); 0: not known
};

/// What exploring found about one race (a wildcard receive or probe, by rank and call number).
struct RaceVerdict {
  enum class Effect { not_classified, harmless, harmful };
  int rank = 0;
  std::uint64_t call = 0;
  bool probe = false;
  Effect effect = Effect::not_classified;
  int explored = 0;                  ///< runs that forced one of its alternatives
  int unexplored = 0;                ///< alternatives left when the bound was reached
  std::vector<ForcedMatch> example;  ///< harmful: the run that ended otherwise
  std::string outcome;               ///< harmful: how that run ended, against the run it was forced in
  bool in_original = false;          ///< the original run has this race
};

struct Exploration {
  ExploredRun original;
  int runs = 0;                        ///< runs made, the original included
  int infeasible = 0;                  ///< runs whose schedule could not be followed
  bool exhausted = false;              ///< every choice was explored within the bound
  std::vector<ExploredRun> different;  ///< runs whose outcome differs from the original, in run order
  std::vector<ExploredRun> other_data; ///< runs with the original's outcome that received other data
  std::vector<RaceVerdict> races;      ///< every race of every run, by (rank, call)
  int harmful() const;                 ///< races found harmful
};

/// Explores `program`'s races on `machine` within `max_runs` runs (>= 1). `options` is used for
/// every run, without its trace and order-log files, with race detection on.
Exploration explore(const Machine& machine, const Program& program, const RunOptions& options, int max_runs);

/// The same exploration over runs made by `attempt` (given the choices to force; race detection
/// on, no trace): for launchers that make each run in a fresh process, such as `mpirun --explore`.
/// `first` is the original run's schedule.
Exploration explore(const std::function<RunOutcome(const std::vector<ForcedMatch>&)>& attempt,
                    const std::vector<ForcedMatch>& first, int max_runs);

/// The report printed by --explore.
std::string describe_exploration(const Exploration& e, int max_runs);

/// True when a and b are the same outcome of a program: both completed or both failed the same
/// way (the error's text with its virtual times and message numbers left out), with the same exit
/// status and output.
bool same_outcome(const RunOutcome& a, const RunOutcome& b);

}  // namespace touchstone
