// The options `touchstone run` and `touchstone sweep` share (docs/cli.md, "Common options of run and
// sweep"), declared once, and what they make of them: the run's options, the algorithm's arguments
// and the sizes to run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/run.hpp"

namespace CLI {
class App;
}

namespace touchstone::cli {

/// --host-cores of run, sweep and mpirun (RunOptions::host_cores).
inline constexpr const char* kHostCoresHelp =
    "host cores one emulation may use (default: all the process may use); fibers: the VPs' first turns run ahead "
    "in parallel, and the programs an instant lets go on run at once; --execution threads: pins the VP threads to N "
    "cores; results are identical";
/// --parallel-programs-from-us of run and mpirun (RunOptions::parallel_programs_from_us).
inline constexpr const char* kParallelProgramsHelp =
    "with fibers on several host cores: the programs an instant lets go on run at once while a program's host time "
    "between runtime calls averages at least US microseconds (0: always); results are identical";

/// The machine of every command that runs one when --machine is not given (run, sweep, loads, mpirun).
inline constexpr const char* kDefaultMachine = "mesh:4x4";

struct CommonOptions {
  std::string machine = kDefaultMachine;  ///< as given: MachineSpec::parse reads it once
  int root = 0;
  std::uint64_t seed = 1;
  std::string format = "table";
  bool phantom = false;
  double time_limit_s = 3600;
  std::size_t stack_kb = 0;  ///< --stack-kb; 0: not given (RunOptions' default; an MPI program's in sweep)
  std::string execution = "fibers";
  int host_cores = -1;  ///< --host-cores; -1: not given (available_host_cores())
  double parallel_programs_from_us = RunOptions{}.parallel_programs_from_us;  ///< --parallel-programs-from-us
  std::string traffic;      ///< paper 003: the communication matrix of alltoallv/ algorithms
  std::string eager_limit;  ///< overrides the machine's eager_limit (docs/model.md 2.16)
  /// --plugin: shared objects whose algorithms join the catalog (docs/extending.md)
  std::vector<std::string> plugins;
};

/// Adds --machine SPEC (default kDefaultMachine) to `cmd`, bound to `spec`.
void add_machine_option(CLI::App* cmd, std::string& spec);

/// Adds --plugin PATH (repeatable) to `cmd`, bound to `paths`: run, sweep and mpirun take it.
void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths);

/// Loads the plug-ins --plugin gave (algorithms::load_plugin), before any algorithm is looked up.
void load_plugins(const std::vector<std::string>& paths);

/// Adds --machine, --plugin, --root, --traffic, --seed, --format, --phantom, --time-limit, --execution,
/// --host-cores, --eager-limit and --stack-kb to `cmd`.
void add_common_options(CLI::App* cmd, CommonOptions& c);

/// The run's options they give.
RunOptions run_options(const CommonOptions& c);

/// The algorithm's arguments at message size `size`. The message size of an alltoallv/ run is its
/// traffic per processor t (docs/algorithms.md): a --traffic without t= takes it from the size, so
/// `sweep --sizes` sweeps the traffic.
algorithms::Args algorithm_args(const CommonOptions& c, std::size_t size);

/// The sizes a run or sweep runs: `given` (from `flag`) checked against --traffic. A --traffic that
/// fixes the matrix (t= or file=) fixes the size too: every size of a sweep would run the same
/// matrix under a different label, so a size that disagrees is refused rather than printed.
std::vector<std::size_t> run_sizes(const CommonOptions& c, const std::vector<const algorithms::Algorithm*>& algs,
                                   const std::optional<std::vector<std::size_t>>& given, const std::string& flag);

}  // namespace touchstone::cli
