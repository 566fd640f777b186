// n-dimensional meshes and tori with dimension-order routing (docs/machines.md).
#pragma once
#include <memory>
#include <vector>

#include "touchstone/topology.hpp"

namespace touchstone {

/// A mesh with the given extent per dimension, e.g. {16, 32} for 16 rows by 32 columns.
std::shared_ptr<const Topology> make_mesh(std::vector<int> dims);

/// How a torus avoids wormhole deadlock on its rings.
enum class TorusDeadlockRule {
  dateline,  ///< two virtual channels per link; a route moves to vc1 when it crosses the wrap link
  none,      ///< one channel per link: cyclic waits are possible and are reported as deadlock
};

/// A torus (every dimension wraps around) with the given extents.
std::shared_ptr<const Topology> make_torus(std::vector<int> dims, TorusDeadlockRule rule);

}  // namespace touchstone
