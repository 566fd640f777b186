// Reduce-scatter (reduce.hpp): recursive halving, pairwise exchange, ring, and reduce + scatterv.
#include <numeric>

#include "common.hpp"
#include "families.hpp"
#include "generic.hpp"
#include "library_harness.hpp"
#include "reduce.hpp"
#include "reduction_steps.hpp"

namespace touchstone::algorithms {

namespace {
// Offsets of the ranks' blocks in the vector: block i is [at[i], at[i+1]).
std::vector<std::size_t> offsets(std::span<const std::size_t> counts) {
  std::vector<std::size_t> at(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), at.begin() + 1);
  return at;
}
}  // namespace

void reduce_scatter_recursive_halving(Proc& p, const Group& g0, std::span<const std::byte> send,
                                      std::span<std::byte> recv, std::span<const std::size_t> counts,
                                      const Reduction& r) {
  const Group g = resolve(p, g0);
  const int me = g.local_rank(p.rank());
  const PowerOfTwoFold f(g.size());
  const std::vector<std::size_t> at = offsets(counts);
  ScratchBytes acc(send.begin(), send.begin() + static_cast<std::ptrdiff_t>(at.back()));
  fold_in(p, g, f, me, acc, r);
  const int nr = f.newrank(me);
  const auto mine = [&](int rank) {
    return std::span(acc).subspan(at[static_cast<std::size_t>(rank)], counts[static_cast<std::size_t>(rank)]);
  };
  if (nr >= 0) {
    // New rank k's piece is the blocks of the ranks whose data it holds after the fold.
    std::vector<std::size_t> cut(static_cast<std::size_t>(f.pof2) + 1);
    for (int k = 0; k <= f.pof2; ++k) cut[static_cast<std::size_t>(k)] = at[static_cast<std::size_t>(f.first_rank(k))];
    recursive_halving(p, g, f, nr, cut, acc, r);
    if (me < 2 * f.rem) p.send(me - 1, kGenericTag, mine(me - 1), g);  // the block of the rank that sat out
    copy_in(p, recv.first(counts[static_cast<std::size_t>(me)]), mine(me));
  } else {
    p.recv(me + 1, kGenericTag, recv.first(counts[static_cast<std::size_t>(me)]), g);
  }
}

void reduce_scatter_pairwise(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                             std::span<const std::size_t> counts, const Reduction& r) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const std::vector<std::size_t> at = offsets(counts);
  const auto block_of = [&](int rank) {
    return send.subspan(at[static_cast<std::size_t>(rank)], counts[static_cast<std::size_t>(rank)]);
  };
  const auto out = recv.first(counts[static_cast<std::size_t>(me)]);
  copy_in(p, out, block_of(me));
  ScratchBytes in(out.size());
  for (int i = 1; i < n; ++i) {
    const int to = (me + i) % n, from = (me - i + n) % n;
    p.sendrecv(to, kGenericTag, block_of(to), from, kGenericTag, in, g);
    combine_before(r, in, out);
  }
}

void reduce_scatter_ring(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                         std::span<const std::size_t> counts, const Reduction& r) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const std::vector<std::size_t> at = offsets(counts);
  ScratchBytes acc(send.begin(), send.begin() + static_cast<std::ptrdiff_t>(at.back()));
  const auto block = [&](int k) {
    return std::span(acc).subspan(at[static_cast<std::size_t>(k)], counts[static_cast<std::size_t>(k)]);
  };
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  // As allreduce_ring's first half: step i passes on block me-i-1 and combines into block me-i-2.
  ScratchBytes in;
  for (int i = 0; i + 1 < n; ++i) {
    const int out_block = ((me - i - 1) % n + n) % n, in_block = ((me - i - 2) % n + n) % n;
    in.resize(block(in_block).size());
    p.sendrecv(next, kGenericTag, block(out_block), prev, kGenericTag, in, g);
    combine_before(r, in, block(in_block));
  }
  copy_in(p, recv.first(counts[static_cast<std::size_t>(me)]), block(me));
}

void reduce_scatter_reduce_scatterv(Proc& p, const Group& g0, std::span<const std::byte> send,
                                    std::span<std::byte> recv, std::span<const std::size_t> counts,
                                    const Reduction& r) {
  const Group g = resolve(p, g0);
  const int me = g.local_rank(p.rank());
  const std::vector<std::size_t> at = offsets(counts);
  const auto vector = send.first(at.back());
  ScratchBytes full(me == 0 ? vector.size() : 0);
  reduce_binomial(p, g, 0, vector, full, r.op, r.commutative);
  scatterv_direct(p, g, 0, full, recv.first(counts[static_cast<std::size_t>(me)]), counts,
                  std::span<const std::size_t>(at).first(counts.size()));
}

void add_reduce_scatter_algorithms(Catalog& c) {
  c.push_back(reduce_scatter_entry("reduce_scatter/reduce-scatterv",
                                   "binomial reduce to rank 0 + direct scatter (any operator)",
                                   reduce_scatter_reduce_scatterv, false));
  c.push_back(reduce_scatter_entry("reduce_scatter/recursive-halving",
                                   "log p halving exchanges (Thakur et al. 2005; MPICH, "
                                   "short; commutative)",
                                   reduce_scatter_recursive_halving, true));
  c.push_back(reduce_scatter_entry("reduce_scatter/pairwise",
                                   "p-1 pairwise exchanges (Thakur et al. 2005; MPICH, long; "
                                   "commutative)",
                                   reduce_scatter_pairwise, true));
  c.push_back(reduce_scatter_entry("reduce_scatter/ring", "p-1 ring steps (Open MPI's ring; commutative)",
                                   reduce_scatter_ring, true));
}

}  // namespace touchstone::algorithms
