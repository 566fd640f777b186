// All-to-all broadcast (MPI All-Gather) on switch-based clusters (paper 004): LR (Fig. 3), SB
// (Fig. 4), combining (Fig. 5), RO-ring and SO-ring (sections 4.2, 5.1), LS2 (Fig. 7) and LS
// (section 5.2, Fig. 10), and the LogP formulas of section 3.2.
#pragma once
#include <string>
#include <vector>

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


}  // namespace touchstone::algorithms
