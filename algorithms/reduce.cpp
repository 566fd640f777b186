// Reduce (reduce.hpp): the binomial tree and Rabenseifner's reduce-scatter + gather.
#include "reduce.hpp"

#include <cstring>

#include "common.hpp"
#include "families.hpp"
#include "generic.hpp"
#include "library_harness.hpp"
#include "reduction_steps.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

Reducer charged(Proc& p, Reducer op, OperandClass c) {
  const Time per_byte = p.machine().costs_of(p.rank()).reduce_per_byte(c);
  if (per_byte == 0) return op;
  return [&p, op = std::move(op), per_byte](std::span<const std::byte> in, std::span<std::byte> inout) {
    op(in, inout);
    p.compute(static_cast<Time>(in.size()) * per_byte);
  };
}

void reduce_binomial_tree(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                          const Reduction& r) {
  reduce_binomial(p, g, root, send, recv, r.op, r.commutative);
}

void reduce_rabenseifner(Proc& p, const Group& g0, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                         const Reduction& r) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  ScratchBytes acc(send.begin(), send.end());
  const PowerOfTwoFold f(n);
  fold_in(p, g, f, me, acc, r);
  // The root's new rank, or, when the root sat the fold out, that of the rank it handed its data to.
  const int troot = f.newrank(root) >= 0 ? f.newrank(root) : f.newrank(root + 1);
  const int nr = f.newrank(me);
  if (nr >= 0) {
    const std::vector<std::size_t> cut = split_pieces(acc.size(), r.elem, f.pof2);
    recursive_halving(p, g, f, nr, cut, acc, r);
    // Binomial gather of the pieces to troot: in the round of distance d the new rank whose
    // distance from troot (nr ^ troot) has bit d sends its window of d pieces and is done.
    const int v = nr ^ troot;
    for (int d = 1; d < f.pof2; d *= 2) {
      const int lo = nr & ~(d - 1), other = lo ^ d, partner = f.rank_of(nr ^ d);
      const auto piece = [&](int a) { return cut[static_cast<std::size_t>(a)]; };
      if (v & d) {
        p.send(partner, kGenericTag, std::span<const std::byte>(acc).subspan(piece(lo), piece(lo + d) - piece(lo)), g);
        break;
      }
      p.recv(partner, kGenericTag, std::span(acc).subspan(piece(other), piece(other + d) - piece(other)), g);
    }
    if (nr == troot) {
      if (me == root)
        copy_in(p, recv.first(acc.size()), acc);
      else
        p.send(root, kGenericTag, acc, g);
    }
  }
  if (nr < 0 && me == root) p.recv(f.rank_of(troot), kGenericTag, recv.first(acc.size()), g);
}

void add_reduce_algorithms(Catalog& c) {
  c.push_back(reduce_entry("reduce/binomial", "binomial tree (Thakur et al. 2005; MPICH, short; any operator)",
                           reduce_binomial_tree, false));
  c.push_back(reduce_entry("reduce/rabenseifner",
                           "reduce-scatter by recursive halving + binomial gather (Rabenseifner; "
                           "Thakur et al. 2005; MPICH, long; commutative)",
                           reduce_rabenseifner, true));
}

}  // namespace touchstone::algorithms
