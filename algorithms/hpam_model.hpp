// The analytic models of paper 001 (Ben Miled, Fortes, Eigenmann, Taylor), eqs. 3-14, as
// functions of the machine and the message size. They are the paper's formulas, printed beside the
// emulated time (`analytic_us`); they ignore contention (t_cont = 0) and, as eq. 5 does, charge a
// source's successive sends one whole t_comm each. Where Touchstone's emulation differs, the tests
// (tests/algorithms/test_hpam.cpp) and docs/paper001.md say by which terms.
#pragma once
#include <cstddef>

#include "touchstone/topologies/hpam.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/time.hpp"

namespace touchstone::algorithms {

/// Eq. 3's parameters of a two-level HPAM machine, read from the machine itself (Table 1 for the
/// presets): Gamma_lk = C_send^l + C_recv^k, Omega_lk = lambda'_l/W_l + Lambda + lambda'_k/W_k.
struct HpamModel {
  int r1 = 1, c1 = 1, r2 = 1, c2 = 1;
  NodeCosts level[2];
  Time lambda_byte = 0;  ///< Lambda as time per byte (Omega's middle term)
  Time lambda_hop = 0;   ///< Lambda as time per hop (eq. 3's Lambda * eta)

  /// UsageError unless the machine is a two-level HPAM.
  static HpamModel of(const Machine& m);

  /// Table 1's Q, the ratio of level 2's communication parameters to level 1's (C_send^2 / C_send^1);
  /// UsageError unless it is a positive integer.
  int q_ratio() const;

  Time gamma(int l, int k) const;
  Time omega(int l, int k) const;
  /// A^S_lk = Gamma_lk + Omega_lk * S (section 3).
  Time a(int l, int k, std::size_t s) const { return gamma(l, k) + omega(l, k) * static_cast<Time>(s); }
  /// B^S_lk(x, y) = x * Gamma_lk + y * S * Omega_lk (section 4; the paper prints Omega_ll, which
  /// would charge an inter-level message the upper level's copy cost at both ends: we read Omega_lk).
  Time b(int l, int k, std::size_t s, long long x, long long y) const {
    return x * gamma(l, k) + y * static_cast<Time>(s) * omega(l, k);
  }

  // Broadcast (section 3). p2 x q2 is the initial sub-mesh of level 2.
  /// Eq. 4: binary-tree broadcast in an r x c mesh of level l.
  Time eq4_tree_bcast(int l, int r, int c, std::size_t s) const;
  /// Eq. 5: hybrid broadcast, one processor in level 1.
  Time eq5_hybrid_bcast(int p2, int q2, std::size_t s) const;
  /// Eq. 6: multicast broadcast, one processor in level 1, p2 x 1 sub-meshes.
  Time eq6_multicast_bcast(int p2, std::size_t s) const;
  /// Eq. 7: hybrid broadcast with several level-1 processors, two sub-meshes (r2 x c2/2), source
  /// in level 1's first row; `level1_too`: destinations in both levels (else level 2 only).
  Time eq7_hybrid_bcast_multi(std::size_t s, bool level1_too) const;
  /// Eq. 8: multicast broadcast with several level-1 processors, r2/2 x 1 sub-meshes.
  Time eq8_multicast_bcast_multi(std::size_t s, bool level1_too) const;

  // Scatter (section 4); s is the size at each final destination.
  /// Eq. 9: binary-tree scatter in an r x c mesh of level l.
  Time eq9_tree_scatter(int l, int r, int c, std::size_t s) const;
  /// Eq. 10: hybrid scatter, one processor in level 1 (also the hybrid gather, section 5).
  Time eq10_hybrid_scatter(int p2, int q2, std::size_t s) const;
  /// Eq. 11: multicast scatter, one processor in level 1, p2 x 1 sub-meshes.
  Time eq11_multicast_scatter(int p2, std::size_t s) const;
  /// Eqs. 12 and 13: hybrid scatter with several level-1 processors to level 2 only (case a:
  /// q2 <= f2, case b: q2 > f2; the function picks the case).
  Time eq12_13_hybrid_scatter_multi(int p2, int q2, std::size_t s) const;
  /// Eq. 14: multicast scatter with several level-1 processors to level 2 only.
  Time eq14_multicast_scatter_multi(int p2, std::size_t s) const;
  /// Section 4.2's scatter to both levels, for which the paper gives steps but no equation: eq. 12's
  /// (hybrid, q2 <= f2) or eq. 14's (multicast, q2 = 1) three terms, with each row processor's chunk
  /// holding its level-1 column's blocks too ("r1 S + r2 f2 S"), and level 1's column scatter (eq. 9
  /// on r1 x 1) beside level 2's trees ("the intra-level scatter in the first and second level
  /// proceed concurrently"). `s1` is the size at each level-1 destination: s, or Q s in the second
  /// scenario. Ours, derived from the text; the paper prints no such formula.
  Time both_levels_scatter(int p2, int q2, bool multicast, std::size_t s, std::size_t s1) const;
};

/// log2 of a power of two (the paper's l_alpha).
int lg(int x);

}  // namespace touchstone::algorithms
