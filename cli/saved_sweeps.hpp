// Saved sweeps (sweep --format csv), read back by `touchstone table` and `touchstone plot`: the
// records of several CSVs put together, so that results of different days and tools line up.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "touchstone/experiment/experiment.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::cli {

/// The records of the CSV files, in the files' order. A column (algorithm or program) that an
/// earlier file already has on the same machine is renamed "COLUMN (FILE)": the same algorithm
/// measured twice shows as two columns, never as one run silently replacing the other.
std::vector<experiment::Record> read_saved_sweeps(const std::vector<std::string>& files);

/// The ranking evidence of a machine named in a CSV (its spec is its name); none when the name is a
/// file's, or no family's.
std::optional<RankingEvidence> ranking_evidence_of(const std::string& machine);

}  // namespace touchstone::cli
