// Running another program as a child process, its output kept in files: how `touchstone sweep`
// runs an MPI program and `mpirun --explore` runs each explored schedule.
#pragma once
#include <string>
#include <vector>

namespace touchstone::experiment {

/// How a child process ended.
struct ChildExit {
  int status = 0;           ///< its exit status, or 128 + the signal that killed it
  double peak_rss_mb = 0;   ///< its peak resident memory
};

/// Runs the program at `path` with arguments `args` (args[0] its name), its standard output and
/// error written to the files out_file and err_file, and waits for it to end. Error
/// "<cannot_start>: <reason>" when it cannot be started.
ChildExit run_child(const std::string& path, std::vector<std::string> args, const std::string& out_file,
                    const std::string& err_file, const std::string& cannot_start);

}  // namespace touchstone::experiment
