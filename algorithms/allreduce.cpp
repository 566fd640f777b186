// Allreduce (reduce.hpp): recursive doubling, Rabenseifner, ring, and reduce + broadcast.
#include <cstring>

#include "common.hpp"
#include "families.hpp"
#include "generic.hpp"
#include "library_harness.hpp"
#include "reduce.hpp"
#include "reduction_steps.hpp"

namespace touchstone::algorithms {

namespace {
// Allreduce on any p as Thakur et al. 2005 (sec. 4.4) run the power-of-two algorithms: fold the
// group onto p' ranks (reduction_steps.hpp), run `core(g, f, nr, acc)` among them on the whole
// vector `acc`, then hand the result back to the ranks that sat out.
template <class Core>
void on_power_of_two(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                     const Reduction& r, Core core) {
  const Group g = resolve(p, g0);
  const int me = g.local_rank(p.rank());
  const PowerOfTwoFold f(g.size());
  ScratchBytes acc(send.begin(), send.end());
  fold_in(p, g, f, me, acc, r);
  if (const int nr = f.newrank(me); nr >= 0) core(g, f, nr, acc);
  const auto out = recv.first(acc.size());
  fold_out(p, g, f, me, acc, out);
  if (f.newrank(me) >= 0) copy_in(p, out, acc);
}
}  // namespace

void allreduce_recursive_doubling(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                                  const Reduction& r) {
  on_power_of_two(p, g0, send, recv, r, [&](const Group& g, const PowerOfTwoFold& f, int nr, std::span<std::byte> acc) {
    ScratchBytes in(acc.size());
    // Round d: exchange the whole vector with new rank nr ^ d; each side's data covers a run of
    // consecutive ranks, so the lower side's comes first.
    for (int d = 1; d < f.pof2; d *= 2) {
      const int partner = f.rank_of(nr ^ d);
      p.sendrecv(partner, kGenericTag, acc, partner, kGenericTag, in, g);
      if (nr & d)
        combine_before(r, in, acc);
      else
        combine_after(r, acc, in);
    }
  });
}

void allreduce_rabenseifner(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                            const Reduction& r) {
  on_power_of_two(p, g0, send, recv, r, [&](const Group& g, const PowerOfTwoFold& f, int nr, std::span<std::byte> acc) {
    const std::vector<std::size_t> cut = split_pieces(acc.size(), r.elem, f.pof2);
    recursive_halving(p, g, f, nr, cut, acc, r);
    recursive_doubling_windows(p, g, f, nr, cut, acc);
  });
}

void allreduce_ring(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                    const Reduction& r) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const auto out = recv.first(send.size());
  copy_in(p, out, send);
  const std::vector<std::size_t> cut = split_pieces(send.size(), r.elem, n);
  std::vector<std::size_t> counts(static_cast<std::size_t>(n)), displs(cut.begin(), cut.end() - 1);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = cut[i + 1] - cut[i];
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  auto piece = [&](int k) {
    return out.subspan(displs[static_cast<std::size_t>(k)], counts[static_cast<std::size_t>(k)]);
  };
  // Reduce-scatter: in step i pass on piece me-i-1 (own operands first) and combine piece me-i-2
  // into what arrives; after p-1 steps piece `me` holds every rank's operands.
  ScratchBytes in;
  for (int i = 0; i + 1 < n; ++i) {
    const int out_piece = ((me - i - 1) % n + n) % n, in_piece = ((me - i - 2) % n + n) % n;
    in.resize(piece(in_piece).size());
    p.sendrecv(next, kGenericTag, piece(out_piece), prev, kGenericTag, in, g);
    combine_before(r, in, piece(in_piece));
  }
  allgatherv_ring(p, g, out, counts, displs);
}

void allreduce_reduce_then_bcast(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                                 const Reduction& r) {
  allreduce_reduce_bcast(p, g, send, recv, r.op, r.commutative);
}

void add_allreduce_algorithms(Catalog& c) {
  c.push_back(allreduce_entry("allreduce/reduce-bcast", "binomial reduce + binomial broadcast (any operator)",
                              allreduce_reduce_then_bcast, false));
  c.push_back(allreduce_entry("allreduce/recursive-doubling",
                              "log p full-vector exchanges (Thakur et al. 2005; MPICH, short; "
                              "any operator)",
                              allreduce_recursive_doubling, false));
  c.push_back(allreduce_entry("allreduce/rabenseifner",
                              "recursive-halving reduce-scatter + recursive-doubling all-gather "
                              "(Rabenseifner; Thakur et al. 2005; MPICH, long; commutative)",
                              allreduce_rabenseifner, true));
  c.push_back(allreduce_entry("allreduce/ring",
                              "ring reduce-scatter + ring all-gather (Patarasuk and Yuan 2009; Open MPI; "
                              "commutative)",
                              allreduce_ring, true));
}

}  // namespace touchstone::algorithms
