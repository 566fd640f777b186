// Paper 001's equations 3-14, term by term, in picoseconds. The under-braces of the paper
// (inter-level, intra-level) are the local variables below. Terms with a fraction of Lambda that is
// not a whole number of picoseconds (eqs. 12-14's (r2 - p2) / (2 p2)) are rounded to the nearest.
#include "hpam_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::algorithms {

int lg(int x) {
  int l = 0;
  while ((1 << l) < x) ++l;
  return l;
}

namespace {
// log2+(a) = log2(a)(log2(a) + 1) and log2-(a) = log2(a)(log2(a) - 1) (section 3).
long long lplus(int x) { return static_cast<long long>(lg(x)) * (lg(x) + 1); }
long long lminus(int x) { return static_cast<long long>(lg(x)) * (lg(x) - 1); }
Time frac(long double x) { return static_cast<Time>(std::llround(x)); }
}  // namespace

HpamModel HpamModel::of(const Machine& m) {
  const Hpam* t = as_hpam(m);
  if (!t || t->levels() != 2)
    throw UsageError(fmt::format("paper 001's models need a two-level HPAM machine such as hpam:1x1/16x16 (got {})", m.name));
  HpamModel h;
  h.r1 = t->rows(1), h.c1 = t->cols(1), h.r2 = t->rows(2), h.c2 = t->cols(2);
  h.level[0] = m.costs_of(t->first(1));
  h.level[1] = m.costs_of(t->first(2));
  h.lambda_byte = m.net.link_byte_time;
  h.lambda_hop = m.net.hop_time;
  return h;
}

int HpamModel::q_ratio() const {
  const Time one = level[0].send_overhead, two = level[1].send_overhead;
  if (one <= 0 || two % one)
    throw UsageError("paper 001: Q = C_send^2 / C_send^1 must be a positive integer (Table 1), e.g. hpam:4x4/16x16,Q=8");
  return static_cast<int>(two / one);
}

Time HpamModel::gamma(int l, int k) const {
  return level[l - 1].send_overhead + level[k - 1].recv_overhead;
}

Time HpamModel::omega(int l, int k) const {
  return level[l - 1].send_per_byte + lambda_byte + level[k - 1].recv_per_byte;
}

Time HpamModel::eq4_tree_bcast(int l, int r, int c, std::size_t s) const {
  return (lg(r) + lg(c)) * a(l, l, s) + lambda_hop * (lplus(r) + lplus(c)) / 2;
}

Time HpamModel::eq5_hybrid_bcast(int p2, int q2, std::size_t s) const {
  const long long roots = static_cast<long long>(r2 / p2) * (c2 / q2);
  // Each root (i p2, j q2) is i p2 + 1 hops away: on average 1 + (r2 - p2) / 2.
  const Time inter = roots * a(1, 2, s) + lambda_hop * roots * (2 + r2 - p2) / 2;
  const Time intra = (lg(p2) + lg(q2)) * a(2, 2, s) + lambda_hop * (lplus(p2) + lplus(q2)) / 2;
  return inter + intra;
}

Time HpamModel::eq6_multicast_bcast(int p2, std::size_t s) const {
  const long long rounds = r2 / p2;
  const Time inter = rounds * a(1, 2, s) + lambda_hop * rounds * (2 + r2 - p2) / 2;
  const Time intra = lg(p2) * a(2, 2, s) + lambda_hop * lplus(p2) / 2;
  return inter + intra;
}

Time HpamModel::eq7_hybrid_bcast_multi(std::size_t s, bool level1_too) const {
  const Time level1_part1 = a(1, 1, s) + lambda_hop * c1 / 2;
  const Time inter = a(1, 2, s) + lambda_hop * r1;
  const Time level1_part2 =
      level1_too ? (lg(r1) + lg(c1) - 1) * a(1, 1, s) + lambda_hop * (lplus(r1) + lminus(c1)) / 2 : 0;
  const Time level2 = (lg(r2) + lg(c2) - 1) * a(2, 2, s) + lambda_hop * (lplus(r2) + lminus(c2)) / 2;
  return level1_part1 + inter + std::max(level1_part2, level2);
}

Time HpamModel::eq8_multicast_bcast_multi(std::size_t s, bool level1_too) const {
  const Time level1_part1 = lg(c1) * (a(1, 1, s) + lambda_hop * (lg(c1) + 1) / 2);
  const Time inter = 2 * (a(1, 2, s) + lambda_hop * r1 + lambda_hop * r2 / 4);
  const Time level1_part2 = level1_too ? lg(r1) * a(1, 1, s) + lambda_hop * lplus(r1) / 2 : 0;
  const Time level2 = (lg(r2) - 1) * a(2, 2, s) + lambda_hop * lminus(r2) / 2;
  return level1_part1 + inter + std::max(level1_part2, level2);
}

Time HpamModel::eq9_tree_scatter(int l, int r, int c, std::size_t s) const {
  // B^{S-bar}_ll(lr + lc, (rc - 1) / rc) with S-bar = r c S.
  return b(l, l, s, lg(r) + lg(c), static_cast<long long>(r) * c - 1) + lambda_hop * (lplus(r) + lplus(c)) / 2;
}

Time HpamModel::eq10_hybrid_scatter(int p2, int q2, std::size_t s) const {
  const long long roots = static_cast<long long>(r2 / p2) * (c2 / q2), sub = static_cast<long long>(p2) * q2;
  const Time inter = roots * b(1, 2, s, 1, sub) + lambda_hop * roots * (2 + r2 - p2) / 2;
  const Time intra = b(2, 2, s, lg(p2) + lg(q2), sub - 1) + lambda_hop * (lplus(p2) + lplus(q2)) / 2;
  return inter + intra;
}

Time HpamModel::eq11_multicast_scatter(int p2, std::size_t s) const {
  const long long rounds = r2 / p2;
  const Time inter = rounds * (b(1, 2, s, 1, static_cast<long long>(p2) * c2) + lambda_hop);
  const Time intra = b(2, 2, s, lg(p2), p2 - 1) + lambda_hop * lplus(p2) / 2;
  return inter + intra;
}

Time HpamModel::eq12_13_hybrid_scatter_multi(int p2, int q2, std::size_t s) const {
  const int f2 = c2 / c1;
  const long long sub = static_cast<long long>(p2) * q2;
  // Lambda (r1 + (r2 - p2) / (2 p2)): the mean hops of an inter-level message from the source's row.
  const long double hops = r1 + static_cast<long double>(r2 - p2) / (2.0L * p2);
  const Time intra2 = b(2, 2, s, lg(p2) + lg(q2), sub - 1) + lambda_hop * (lplus(p2) + lplus(q2)) / 2;
  if (q2 <= f2) {  // case a, eq. 12
    const Time intra1 = b(1, 1, s, lg(c1), static_cast<long long>(r2) * f2 * (c1 - 1)) + lambda_hop * lplus(c1) / 2;
    const long long msgs = static_cast<long long>(c2 / (c1 * q2)) * (r2 / p2);
    const Time inter = msgs * b(1, 2, s, 1, sub) + frac(static_cast<long double>(lambda_hop) * msgs * hops);
    return intra1 + inter + intra2;
  }
  // case b, eq. 13
  const int k = lg(c2) - lg(q2);
  const Time intra1 = b(1, 1, s, k, static_cast<long long>(r2) * (c2 - q2)) +
                      frac(static_cast<long double>(lambda_hop) * k * (lg(c1) + (k - 1) / 2.0L));
  const long long msgs = r2 / p2;
  const Time inter = msgs * b(1, 2, s, 1, sub) + frac(static_cast<long double>(lambda_hop) * msgs * hops);
  return intra1 + inter + intra2;
}

Time HpamModel::eq14_multicast_scatter_multi(int p2, std::size_t s) const {
  const int f2 = c2 / c1;
  // The paper prints B11(l_c1 + (c2/c1) r2 (c1 - 1)) with one argument; we read it as eq. 12's
  // B11(l_c1, (c2/c1) r2 (c1 - 1)).
  const Time intra1 = b(1, 1, s, lg(c1), static_cast<long long>(f2) * r2 * (c1 - 1)) + lambda_hop * lplus(c1) / 2;
  const long double hops = r1 + static_cast<long double>(r2 - p2) / (2.0L * p2);
  const long long msgs = r2 / p2;
  const Time inter = msgs * b(1, 2, s, 1, static_cast<long long>(p2) * f2) + frac(static_cast<long double>(lambda_hop) * msgs * hops);
  const Time intra2 = b(2, 2, s, lg(p2), p2 - 1) + lambda_hop * lplus(p2) / 2;
  return intra1 + inter + intra2;
}

Time HpamModel::both_levels_scatter(int p2, int q2, bool multicast, std::size_t s, std::size_t s1) const {
  const int f2 = c2 / c1;
  if (multicast ? q2 != 1 : q2 > f2)
    throw UsageError(fmt::format("both_levels_scatter: needs q2 = 1 (multicast) or q2 <= f2 = {} (hybrid)", f2));
  // The row's partial scatter moves c1 - 1 chunks of r1 s1 + r2 f2 s bytes from the source in l_c1 sends.
  const std::size_t chunk = static_cast<std::size_t>(r1) * s1 + static_cast<std::size_t>(r2) * f2 * s;
  const Time intra1 = b(1, 1, chunk, lg(c1), c1 - 1) + lambda_hop * lplus(c1) / 2;
  // Eq. 12's or eq. 14's inter-level term: one message per root, or one multicast per band of p2 rows.
  const long long msgs = static_cast<long long>(r2 / p2) * (multicast ? 1 : f2 / q2);
  const long long blocks = static_cast<long long>(p2) * (multicast ? f2 : q2);
  const long double hops = r1 + static_cast<long double>(r2 - p2) / (2.0L * p2);
  const Time inter = msgs * b(1, 2, s, 1, blocks) + frac(static_cast<long double>(lambda_hop) * msgs * hops);
  const int lq = multicast ? 0 : lg(q2);
  const Time intra2 = b(2, 2, s, lg(p2) + lq, static_cast<long long>(p2) * (multicast ? 1 : q2) - 1) +
                      lambda_hop * (lplus(p2) + (multicast ? 0 : lplus(q2))) / 2;
  return intra1 + inter + std::max(intra2, eq9_tree_scatter(1, r1, 1, s1));
}

}  // namespace touchstone::algorithms
