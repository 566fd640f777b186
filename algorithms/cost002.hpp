// Paper 002, section 2: analytic costs of the complete exchange algorithms compared in
// bench/paper002.cpp, in the paper's circuit-switched model. A message of N bytes over d hops costs
//   t_s + d t_p + N t_e
// with the mapping of docs/model.md 2.5: t_s = C_send + C_recv + t_hop + n H b (n packets),
// t_p = t_hop, t_e = b + s + r. Conflicts are charged by serialization: k messages that share a
// link take k times their transfer time N t_e (wormhole: the blocked worms have paid their start-up
// already). These are models, not fits: the emulated time is printed beside them.
#pragma once
#include <cstddef>
#include <string>

#include "touchstone/machine.hpp"
#include "permutations.hpp"

namespace touchstone::algorithms {

/// The paper's three parameters for `machine` and a message of `bytes` (t_s depends on the packet
/// count through the per-packet header), in picoseconds.
struct CircuitParams {
  Time t_s = 0, t_p = 0;
  double t_e = 0;  ///< per byte
};
CircuitParams circuit_params(const Machine& machine, std::size_t bytes);
/// t_s + hops t_p + bytes t_e, rounded to the picosecond.
Time message_cost(const Machine& machine, std::size_t bytes, int hops);

/// pipelined-cc-cube(degree) with blocks of L bytes on the whole machine under embedding_for:
///   degree 1 (cc-cube): iteration i runs R_i conflict-free rounds (R_i = congestion) chained by
///     0-byte tokens: R_i (t_s + delta_i t_p + 2^(d-1) L t_e) + (R_i - 1) token(1 hop), plus one
///     token between iterations i - 1 and i when R_(i-1) > 1 (over the longest such hop count);
///   degree Q > 1: d + Q - 1 steps; in a step the |A| active iterations send pieces of N bytes
///     at once: C_send + N s, then max((|A| - 1)(C_send + N s), W), then (max delta_i + 1) t_hop
///     and |A| (C_recv + N r), where W = max(ceil(|A| / ports), max R_i) (N + n H) b is the wire
///     time of the busiest injection channel or link.
Time cc_cube_cost(const Machine& machine, std::size_t L, int degree);

/// A permutation schedule run one permutation after another (paper 000's 1-lev-xor: p - 1 exchanges
/// with P_(me xor j); 1-lev-lin: p - 1 shifts to P_(me + j), MPI's "pairwise" all-to-all): each
/// permutation j costs t_s + D_j t_p + c_j L t_e with D_j its longest route and c_j its link load.
Time schedule_cost(const Machine& machine, std::size_t L, const Schedule& schedule);

/// 1-lev-dir: p - 1 sends at once. The larger of the node's CPU for p - 1 sends and p - 1 receives,
/// (p - 1)(C_send + C_recv + L (s + r)), and the first send's CPU + the busiest resource's wire
/// time (the injection channels or the most loaded link) + (D + 1) t_hop + the last receive.
Time direct_cost(const Machine& machine, std::size_t L);

/// The cost of a catalog algorithm by name (cc-cube, pipelined-cc-cube(Q), 1-lev-xor, 1-lev-lin,
/// 1-lev-dir); UsageError for algorithms without a model here.
Time alltoall_cost(const std::string& algorithm, const Machine& machine, std::size_t L);

}  // namespace touchstone::algorithms
