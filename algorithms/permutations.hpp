// Permutation schedules (paper 000, section 5.1): the p(p - 1) messages of an all-to-all
// partitioned into (partial) permutations, each routed in turn. Written once here and used by
// 1-lev-lin, 1-lev-xor and 1-lev-bal, by the max_load / sum_load figures and by the CLI.
//
//   const Schedule s = balanced_schedule({16, 16});   // 256 permutations of a 16 x 16 mesh
//   const Loads l = schedule_loads(s, *machine.topology);  // l.max_load == 4
//   alltoall_by_schedule(p, g, s, send, recv, L);      // on every processor of g
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "touchstone/proc.hpp"
#include "touchstone/topology.hpp"

namespace touchstone::algorithms {

/// A list of (partial) permutations of the ranks 0..p-1 of a group.
struct Schedule {
  int p = 0;
  /// to[k][i]: the rank that i sends to in permutation k; -1 when i sends nothing, i itself when
  /// i keeps its own block (a "stay": no message, but it makes the 1-D balanced permutations
  /// factors of the 2-D cross product).
  std::vector<std::vector<int>> to;
  /// from[k][j]: the rank that sends to j in permutation k, or -1; filled by add_inverse (empty
  /// until then, and then alltoall_by_schedule searches `to`).
  std::vector<std::vector<int>> from;
  std::size_t size() const { return to.size(); }
};

/// Fills s.from from s.to.
void add_inverse(Schedule& s);

/// Linear permutations: in permutation i (1 <= i <= p-1), P_j sends to P_((i+j) mod p). The paper
/// prints "mod (p-1)", which is not a permutation (P_0 and P_(p-1) would both send to P_i); we read
/// it as mod p.
Schedule linear_schedule(int p);

/// Exclusive-or permutations: in permutation i (1 <= i < 2^ceil(log p)), P_j sends to P_(i xor j);
/// for p not a power of two the partners >= p are skipped.
Schedule xor_schedule(int p);

/// Balanced permutations of a k-processor linear array (D. S. Scott's method as given in paper
/// 000, section 5.1): k permutations (k + 1 when k = 4i + 1), every ordered pair (i, j) including
/// i == j exactly once, so that they can be crossed into mesh schedules.
Schedule balanced_schedule(int k);

/// Balanced permutations of a mesh with these extents (row-major ranks): the cross product
/// Pi_i x Pi'_j of the balanced permutations of each dimension. Permutations without any message
/// are dropped.
Schedule balanced_schedule(const std::vector<int>& dims);

/// Empty when `s` holds every ordered pair (i, j), i != j, exactly once and each permutation is a
/// partial permutation; else the first defect found. With `stays_once`, every i -> i must also
/// appear exactly once (the property the cross product needs).
std::string check_partition(const Schedule& s, bool stays_once = false);

/// Link loads (paper 000, section 5.1): the load of a directed link in a permutation is the number
/// of its messages routed over it (by the topology's own route, XY on meshes; per link channel);
/// load(Pi) is the largest over the links, max_load the largest load(Pi), sum_load their sum.
struct Loads {
  std::vector<int> per_permutation;
  int max_load = 0;
  long long sum_load = 0;
};

/// The loads of `s` when group rank i sits on node world_ranks[i] (identity when empty).
Loads schedule_loads(const Schedule& s, const Topology& topology, std::span<const int> world_ranks = {});

/// One schedule per (kind, shape) for the whole process: every processor of a run reads the same
/// copy instead of building its own. kind is "linear", "xor" or "balanced".
const Schedule& shared_schedule(const std::string& kind, const std::vector<int>& shape);

/// Runs a schedule as an all-to-all over g (paper 000, section 5.1): for each permutation in turn,
/// every processor posts the receive from the processor that sends to it, sends its block to its
/// partner, and waits for both before moving to the next permutation. send and recv hold
/// g.size() blocks of `size` bytes, in group rank order.
void alltoall_by_schedule(Proc& p, const Group& g, const Schedule& s, std::span<const std::byte> send,
                          std::span<std::byte> recv, std::size_t size);

}  // namespace touchstone::algorithms
