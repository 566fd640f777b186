// `touchstone diff`: the first divergence per VP between two order logs or two runs (docs/debugging.md).
#pragma once
#include <string>

namespace touchstone::cli {

/// Compares two order logs' texts; `a_name`/`b_name` label them. Returns the report; `differ` is
/// set when any VP diverges. UsageError when a text is not an order log.
std::string diff_order_logs(const std::string& a, const std::string& b, const std::string& a_name,
                            const std::string& b_name, bool& differ);

/// `touchstone diff --run A --run B`: runs two command lines of this program (`run ...` or
/// `mpirun ...`; words split as a shell would, without expansions) with an order log each, and
/// reports how their outcomes (exit status, error), figures (`run`: every virtual field) and
/// per-VP message order differ. `self` is this program's path. UsageError for a bad spec.
std::string diff_runs(const std::string& a, const std::string& b, const std::string& self, bool& differ);

}  // namespace touchstone::cli
