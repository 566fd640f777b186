// Running an MPI program on an emulated machine (docs/mpi.md): what `touchstone mpirun` does,
// exported by libtouchstone_mpi.so. The program is a loadable module holding `main` (built with
// touchstone-mpicc or touchstone_add_mpi_program); every VP runs its main as a fiber.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "touchstone/machines.hpp"
#include "touchstone/run.hpp"

namespace touchstone::mpi {

/// The regions a program marked with MPI_Pcontrol(1) ... MPI_Pcontrol(0) (docs/mpi.md, "Measuring a
/// region"): region k lasts from the first rank's start of its k-th region to the last rank's end
/// of it; `total` is the sum over the `count` regions.
struct MeasuredRegions {
  int count = 0;
  Time total = 0;
};

/// RunOptions for an MPI program: its main runs on its rank's VP stack, and C programs keep arrays
/// there, so 1 MiB rather than RunOptions' 128 KiB for the catalog's algorithms.
inline RunOptions program_run_options() {
  RunOptions o;
  o.stack_bytes = std::size_t{1} << 20;
  return o;
}

struct LaunchOptions {
  MachineSpec machine;                       ///< machine spec (touchstone list machines), built by launch
  int np = 0;                                ///< MPI processes: world ranks 0..np-1 (0: every VP)
  std::map<std::string, std::string> coll;   ///< collective -> algorithm ("alltoall" -> "1-lev-xor")
  /// Whose decision rules pick the algorithm of each call not named in `coll`: "mpich", "ompi",
  /// or "default"/"" (each collective's default algorithm).
  std::string coll_selector;
  RunOptions run = program_run_options();    ///< trace, order log, perturb, execution, seed, ...
  std::string program;                       ///< path of the program module
  std::vector<std::string> args;             ///< argv[1..]
  bool privatize = true;                     ///< one copy of the program's globals per rank
  /// Unload the program's copies when the run ends. false leaves them to the process's exit, which
  /// unloads them all at once: glibc's dlclose sorts every loaded object at each call, so unloading
  /// n copies one by one takes time in n^2 (about 75 s for 31,860 ranks). `touchstone mpirun`,
  /// whose process ends after the run, passes false.
  bool unload_program = true;
  bool tag_output = false;                   ///< prefix every stdout line with "[rank] "
  bool summary = false;                      ///< print makespan, messages and trace_hash to stderr
  /// --compute host:FACTOR: each rank's host CPU time between MPI calls, times this, is charged as
  /// computation in virtual time; 0 (the default): computation is free and runs are deterministic.
  double compute_factor = 0;
  /// Checking programs (docs/debugging.md): collectives compared across ranks and messages' type
  /// signatures against their receives (on unless `--no-check`); leaks at MPI_Finalize are errors
  /// rather than warnings with `--check`.
  bool check_consistency = true;
  bool leaks_are_errors = false;
  /// mpirun --check: every blocking collective synchronizes its members on entry, as any
  /// conforming MPI may (with run.eager_limit 0, every standard-mode send is synchronous too).
  bool synchronizing_collectives = false;
  /// Called after a run that completed, with its machine, result and the options it ran with, the
  /// interface's report hooks set (mpirun prints the races and the blocking explanation the
  /// debugging options asked for, in MPI's terms).
  std::function<void(const Machine&, const RunResult&, const RunOptions&)> on_result;
  /// Where to write how the run ended as one JSON object (exit_status, makespan_ps, messages,
  /// trace_hash, measured_regions, measured_ps, host_seconds; `error` when it failed), whatever
  /// the ending: what `touchstone sweep --program` reads. Empty: nowhere.
  std::string result_file;
};

/// Runs the program; returns the exit status mpirun would: 0, the first non-zero status a rank's
/// main returned, MPI_Abort's error code, or 1 (bad input) / 2 (the run failed) with a report on
/// stderr.
int launch(const LaunchOptions& options);

/// The collectives `--coll` accepts, each with its algorithms (the default first), for --help and
/// docs/mpi.md.
std::vector<std::pair<std::string, std::vector<std::string>>> collective_algorithms();

}  // namespace touchstone::mpi
