// The notes that parts of the MPI layer give the other processes of a split run at each window's
// end (RunOptions::window_notes; docs/parallel.md, "Several processes"), each part's apart.
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "touchstone/run.hpp"

namespace touchstone::mpi {

/// Adds a part's notes beside those `ro` already carries: at each window's end `give` returns this
/// process's bytes, and `take` gets each other process's (its index and bytes, maybe none), after
/// the parts added before it got theirs.
void add_window_notes(RunOptions& ro, std::function<std::vector<std::byte>()> give,
                      std::function<void(int process, std::span<const std::byte> notes)> take);

}  // namespace touchstone::mpi
