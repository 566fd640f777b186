// `touchstone mpirun` (docs/mpi.md): its options and its runner, registered by tools/cli.cpp.
#pragma once
#include <functional>

#include <CLI/CLI.hpp>

namespace touchstone::cli {

struct Subcommand {
  CLI::App* app;
  std::function<int()> run;  ///< after parsing: runs the command, returns the exit status
};

/// Adds the mpirun subcommand to `app`.
Subcommand add_mpirun(CLI::App& app);

/// mpirun spells the process count `-np P`, which CLI11 would read as `-n p`: before parsing, turns
/// mpirun's `-np` into `--np`, up to the program (the first argument naming an existing file).
void normalize_mpirun_args(int argc, char** argv);

}  // namespace touchstone::cli
