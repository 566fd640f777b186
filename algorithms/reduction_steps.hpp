// Steps the reduction algorithms of reduce.hpp share (reduce.cpp, allreduce.cpp,
// reduce_scatter.cpp): combining in rank order, the fold onto a power of two, recursive halving
// and its mirror, recursive doubling of windows. Internal to the catalog.
#pragma once
#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/common.hpp"
#include "algorithms/generic.hpp"
#include "algorithms/scratch.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// acc = lower op acc: `lower` holds the operands of lower ranks.
inline void combine_before(const Reduction& r, std::span<const std::byte> lower, std::span<std::byte> acc) {
  r.op(lower, acc);
}

/// acc = acc op higher: `higher` (a received buffer) holds the operands of higher ranks and is
/// overwritten.
inline void combine_after(const Reduction& r, std::span<std::byte> acc, std::span<std::byte> higher) {
  r.op(acc, higher);
  if (!acc.empty()) std::memcpy(acc.data(), higher.data(), acc.size());
}

/// Copies `from` into `to` and charges p the copy (docs/model.md 2.11); under phantom payloads
/// charges it only (no byte is read for its value, and the harness's buffers are shared by the VPs).
inline void copy_in(Proc& p, std::span<std::byte> to, std::span<const std::byte> from) {
  if (from.empty() || to.data() == from.data()) return;
  if (!p.phantom_payloads()) std::memmove(to.data(), from.data(), from.size());
  p.local_copy(from.size());
}

/// A group of n folded onto the largest power of two p' <= n (Thakur et al. 2005, sec. 4.4): of
/// the first 2 rem ranks (rem = n - p'), each even rank hands its data to the odd rank after it
/// and sits out; the others take part as new ranks 0..p'-1, in rank order, so that a new rank's
/// data always covers a run of consecutive ranks.
struct PowerOfTwoFold {
  int n, pof2, rem;
  explicit PowerOfTwoFold(int size) : n(size), pof2(1), rem(0) {
    while (pof2 * 2 <= n) pof2 *= 2;
    rem = n - pof2;
  }
  /// The new rank of `rank`, -1 when it sits out.
  int newrank(int rank) const { return rank < 2 * rem ? (rank % 2 ? rank / 2 : -1) : rank - rem; }
  /// The rank that takes part as `nr`.
  int rank_of(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }
  /// The first rank whose data new rank `nr` holds after the fold (n for nr = p').
  int first_rank(int nr) const { return nr < rem ? 2 * nr : nr + rem; }
};

/// The fold's first step on `acc` (the whole vector): an even rank below 2 rem sends it to the
/// rank after it, which combines it before its own. One message of acc.size() bytes.
inline void fold_in(Proc& p, const Group& g, const PowerOfTwoFold& f, int me, std::span<std::byte> acc,
                    const Reduction& r) {
  if (me >= 2 * f.rem) return;
  if (me % 2 == 0) {
    p.send(me + 1, kGenericTag, acc, g);
    return;
  }
  ScratchBytes lower(acc.size());
  p.recv(me - 1, kGenericTag, lower, g);
  combine_before(r, lower, acc);
}

/// The fold's last step: an odd rank below 2 rem sends the result to the rank before it.
inline void fold_out(Proc& p, const Group& g, const PowerOfTwoFold& f, int me, std::span<const std::byte> result,
                     std::span<std::byte> recv) {
  if (me >= 2 * f.rem) return;
  if (me % 2)
    p.send(me - 1, kGenericTag, result, g);
  else
    p.recv(me + 1, kGenericTag, recv, g);
}

/// Offsets of k element-aligned pieces of a vector of `bytes` bytes: piece i is [at[i], at[i+1]);
/// the first (elements mod k) pieces have one element more.
inline std::vector<std::size_t> split_pieces(std::size_t bytes, std::size_t elem, int k) {
  const std::size_t count = bytes / elem, each = count / static_cast<std::size_t>(k),
                    extra = count % static_cast<std::size_t>(k);
  std::vector<std::size_t> at(static_cast<std::size_t>(k) + 1, 0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(k); ++i) at[i + 1] = at[i] + (each + (i < extra)) * elem;
  return at;
}

/// Recursive halving among the fold's p' new ranks (reduce-scatter; commutative operators): in the
/// round of distance d = p'/2, p'/4, .., 1 a new rank keeps the half of its window on its side of
/// bit d, sends the other half to new rank ^ d and combines what it receives. Afterwards new rank
/// nr holds [cut[nr], cut[nr+1]) of the reduction in acc. log p' messages.
inline void recursive_halving(Proc& p, const Group& g, const PowerOfTwoFold& f, int nr,
                              std::span<const std::size_t> cut, std::span<std::byte> acc, const Reduction& r) {
  int lo = 0, hi = f.pof2;
  ScratchBytes in;
  auto window = [&](int a, int b) {
    return acc.subspan(cut[static_cast<std::size_t>(a)],
                       cut[static_cast<std::size_t>(b)] - cut[static_cast<std::size_t>(a)]);
  };
  for (int d = f.pof2 / 2; d > 0; d /= 2) {
    const int mid = (lo + hi) / 2, partner = f.rank_of(nr ^ d);
    const bool upper = (nr & d) != 0;
    const auto keep = upper ? window(mid, hi) : window(lo, mid);
    const auto give = upper ? window(lo, mid) : window(mid, hi);
    in.resize(keep.size());
    p.sendrecv(partner, kGenericTag, give, partner, kGenericTag, in, g);
    if (upper)
      combine_before(r, in, keep);
    else
      combine_after(r, keep, in);
    if (upper)
      lo = mid;
    else
      hi = mid;
  }
}

/// The mirror of recursive_halving (all-gather by recursive doubling): in the round of distance d
/// = 1, 2, .., p'/2 a new rank exchanges its window (d pieces) with new rank ^ d. Afterwards every
/// new rank holds all of acc.
inline void recursive_doubling_windows(Proc& p, const Group& g, const PowerOfTwoFold& f, int nr,
                                       std::span<const std::size_t> cut, std::span<std::byte> acc) {
  auto window = [&](int a, int b) {
    return acc.subspan(cut[static_cast<std::size_t>(a)],
                       cut[static_cast<std::size_t>(b)] - cut[static_cast<std::size_t>(a)]);
  };
  for (int d = 1; d < f.pof2; d *= 2) {
    const int lo = nr & ~(d - 1), other = lo ^ d, partner = f.rank_of(nr ^ d);
    p.sendrecv(partner, kGenericTag, window(lo, lo + d), partner, kGenericTag, window(other, other + d), g);
  }
}

}  // namespace touchstone::algorithms
