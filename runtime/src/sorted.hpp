// Sorting what usually arrives sorted already.
#pragma once
#include <algorithm>

namespace touchstone::detail {

/// Sorts `v` unless it is in order already, which one pass tells: the members of an instant and
/// of a group mostly come in rank order, and introsort pays its n log n even then (on a
/// 65,536-VP ring, a sixth of the run's instructions went to sorting sorted ranks).
template <class Range>
void sort_unless_sorted(Range& v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
}

}  // namespace touchstone::detail
