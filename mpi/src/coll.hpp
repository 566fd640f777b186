// What the collectives (coll.cpp) offer the launcher. Internal.
#pragma once
#include <map>
#include <string>

namespace touchstone::mpi {

/// Checks a --coll selection: every collective known, every algorithm one of its own.
/// Throws UsageError naming the bad entry.
void check_selection(const std::map<std::string, std::string>& coll);

}  // namespace touchstone::mpi
