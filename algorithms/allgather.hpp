// All-to-all broadcast (MPI All-Gather) on switch-based clusters (paper 004): LR (Fig. 3), SB
// (Fig. 4), combining (Fig. 5), RO-ring and SO-ring (sections 4.2, 5.1), LS2 (Fig. 7) and LS
// (section 5.2, Fig. 10), and the LogP formulas of section 3.2.
#pragma once
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "registry.hpp"

namespace touchstone::algorithms {

/// The link schedule shared by LS2 and LS (sections 4.3, 5.2). A switch with n local nodes sends
/// its t-th remote message from local index remote_sender(t) and receives its t-th remote message
/// at local index remote_receiver(t). LS2 keeps the slot order in every stage (Fig. 8); LS reverses
/// it, and the direction of the local all-to-all, in every other stage (Fig. 9), so the first node
/// to receive in one stage is the first to forward in the next.
struct LinkSchedule {
  int n = 1;             ///< local nodes
  bool reflect = false;  ///< LS (true) or LS2 (false)
  /// +1: send locally to index i-d and receive from i+d (d = 1..n-1); -1: the other way.
  int direction(int stage) const { return reflect && stage % 2 ? -1 : 1; }
  int remote_sender(int t) const {
    const int j = t % n;
    return direction(t / n) > 0 ? j : n - 1 - j;
  }
  int remote_receiver(int t) const {
    const int j = t % n;
    return direction(t / n) > 0 ? n - 1 - j : j;
  }
};

/// One switch's communication pattern as in Figs. 8 and 9: per step and local node (1-based
/// indices), the receive and send entries: "3" a local node, "S2"/"D1" (LS) or "R7" (LS2) a remote
/// node, "-" nothing. n_src, n_dst: nodes on the remote source and destination switches; P all nodes.
struct PatternStep {
  std::vector<std::string> recv, send;
};
std::vector<PatternStep> link_schedule_pattern(int n_local, int n_src, int n_dst, int P, bool reflect);

/// Section 3.2: t_SB = 2o + L + (P-3) g_s + g with Table 1's g and g_s, and
/// t_combine = ceil(log2 P) 2o + (P-1) L. Times in any one unit.
double t_sb(int P, double L, double o);
double t_combine(int P, double L, double o);

// The all-gathers of the MPI libraries (MPICH, Open MPI), on any group of any size; buf holds
// g.size() blocks of `size` bytes, the own one in place. alpha is a message's start-up, beta its
// time per byte, n = p * size the bytes every rank ends with.

/// Recursive doubling (Thakur, Rabenseifner, Gropp, IJHPCA 2005, sec. 4.2): log p rounds of
/// exchanges of doubling windows: log p alpha + (p-1)/p n beta. When p is not a power of two the
/// ranks first fold onto the largest power of two p' (each even rank below 2(p-p') hands its block
/// to the rank after it) and unfold at the end: 2 alpha + (size + n) beta more.
AllgatherCollective allgather_recursive_doubling;

/// Bruck et al., "Efficient algorithms for all-to-all communications in multiport message-passing
/// systems", IEEE TPDS 1997 (MPICH's allgather for short messages and any p): ceil(log p) rounds,
/// rank i sending to i - 2^k the blocks it has, then a local rotation: ceil(log p) alpha +
/// (p-1)/p n beta.
AllgatherCollective allgather_bruck;

/// Ring (Thakur et al. 2005, sec. 4.2; MPICH's long-message allgather): p - 1 steps passing blocks
/// to the next rank: (p-1) alpha + (p-1)/p n beta.
AllgatherCollective allgather_ring;

/// Neighbor exchange (Chen et al., "Performance evaluation of allgather algorithms on terascale
/// Linux cluster with fast Ethernet", HPC Asia 2005; Open MPI's neighborexchange): p/2 steps,
/// each rank exchanging with its left and right neighbours alternately, two blocks a step after
/// the first: (p/2) alpha + (p-1)/p n beta. Even p only; for odd p it runs the ring, as Open MPI does.
AllgatherCollective allgather_neighbor_exchange;


}  // namespace touchstone::algorithms
