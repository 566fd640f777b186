// The CM-5's data network (paper 003, section 3): a 4-ary fat tree.
#pragma once
#include <memory>

#include "touchstone/topology.hpp"

namespace touchstone {

/// A 4-ary fat tree over `nodes` leaves (any count >= 2; the CM-5 came with 32 to 1024). A route
/// climbs to the lowest subtree holding both ends and comes back down. Every node owns one up
/// channel and one down channel at every level, so a subtree of 4^l nodes has 4^l channels to its
/// parent: the tree gets fatter towards the root and never contends by itself; contention is at
/// the nodes' injection and ejection ports. Channels at level 0 (node to its cluster of 4) carry
/// 20 MB/s, level 1 (cluster of 4 to cluster of 16) 10 MB/s, higher levels 5 MB/s, so the
/// bandwidth between two nodes is 20 MB/s inside a cluster of 4, 10 MB/s inside 16 and 5 MB/s
/// beyond, as section 3 states.
std::shared_ptr<const Topology> make_fat_tree(int nodes);

}  // namespace touchstone
