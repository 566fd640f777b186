// A split run's process that meets the others through a relay (docs/parallel.md, "Several
// processes"): `touchstone-distributed mpirun ...` is one process of an Open MPI job and starts
// `touchstone mpirun --split-pipe R,W,K,N ...` as its child, which cannot call Open MPI itself (its
// programs' MPI_ functions are Touchstone's). Each swap goes to the relay on one pipe and comes
// back on the other.
#pragma once
#include <memory>
#include <string>

#include "touchstone/run.hpp"

namespace touchstone::cli {

/// "R,W,K,N": read the swaps' results from descriptor R, write this process's part to W, as process
/// K of N. UsageError on anything else.
std::shared_ptr<Partition> pipe_partition(const std::string& spec);

}  // namespace touchstone::cli
