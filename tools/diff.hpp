// `touchstone diff A B`: the first divergence per VP between two order logs (docs/debugging.md).
#pragma once
#include <string>

namespace touchstone::cli {

/// Compares two order logs' texts; `a_name`/`b_name` label them. Returns the report; `differ` is
/// set when any VP diverges. UsageError when a text is not an order log.
std::string diff_order_logs(const std::string& a, const std::string& b, const std::string& a_name,
                            const std::string& b_name, bool& differ);

}  // namespace touchstone::cli
