// The subcommands of the touchstone command line (docs/cli.md), one file each: a subcommand adds
// its options to the program's CLI::App and returns how to run it once the command line is parsed.
// cli/main.cpp holds the table of them.
#pragma once
#include <functional>

#include <CLI/CLI.hpp>

namespace touchstone::cli {

struct Subcommand {
  CLI::App* app;
  std::function<int()> run;  ///< after parsing: runs the command, returns the exit status
};

Subcommand add_list(CLI::App& app);    ///< cli/list.cpp: `touchstone list machines|algorithms`
Subcommand add_run(CLI::App& app);     ///< cli/run.cpp: one algorithm on one machine
Subcommand add_sweep(CLI::App& app);   ///< cli/sweep.cpp: algorithms x sizes (x machine variants)
Subcommand add_plot(CLI::App& app);    ///< cli/plot.cpp: draws sweeps' CSVs
Subcommand add_table(CLI::App& app);   ///< cli/table.cpp: the winner table of saved sweeps' CSVs
Subcommand add_loads(CLI::App& app);   ///< cli/loads.cpp: link loads of permutation schedules
Subcommand add_mpirun(CLI::App& app);  ///< cli/mpirun.cpp: an MPI program on every VP
Subcommand add_diff(CLI::App& app);    ///< cli/diff.cpp: two order logs or two runs compared

/// mpirun spells the process count `-np P`, which CLI11 would read as `-n p`: before parsing, turns
/// mpirun's `-np` into `--np`, up to the program (the first argument naming an existing file).
void normalize_mpirun_args(int argc, char** argv);
/// `sweep -np P` (for --program) alike: turns `-np` into `--np`, except as the value of --args.
void normalize_sweep_args(int argc, char** argv);

}  // namespace touchstone::cli
