// A split run's process that meets the others through a relay (docs/parallel.md, "Several
// processes"): `touchstone-distributed mpirun ...` is one process of an Open MPI job and starts
// `touchstone mpirun --split-pipe R,W,K,N ...` as its child (touchstone/pipe_partition.hpp).
#pragma once
#include <memory>
#include <string>

#include "touchstone/run.hpp"

namespace touchstone::cli {

/// "R,W,K,N": read the swaps' results from descriptor R, write this process's part to W, as process
/// K of N. UsageError on anything else.
std::shared_ptr<Partition> pipe_partition(const std::string& spec);

}  // namespace touchstone::cli
