// Scan (reduce.hpp): recursive doubling and a chain.
#include <cstring>

#include "common.hpp"
#include "families.hpp"
#include "generic.hpp"
#include "library_harness.hpp"
#include "reduce.hpp"
#include "reduction_steps.hpp"

namespace touchstone::algorithms {

void scan_recursive_doubling(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                             const Reduction& r, bool exclusive) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  // partial: the operands of the ranks this rank has heard of so far, a run of consecutive ranks
  // around it; result: those of the ranks up to it (up to me - 1 when exclusive).
  ScratchBytes partial(send.begin(), send.end()), in(send.size());
  const auto result = recv.first(send.size());
  bool have_result = !exclusive;
  if (have_result) copy_in(p, result, send);
  for (int d = 1; d < n; d *= 2) {
    const int partner = me ^ d;
    if (partner >= n) continue;
    p.sendrecv(partner, kGenericTag, partial, partner, kGenericTag, in, g);
    if (partner < me) {
      // `in` covers lower ranks: it goes before both (the operator leaves it as it is).
      combine_before(r, in, partial);
      if (have_result)
        combine_before(r, in, result);
      else
        copy_in(p, result, in);
      have_result = true;
    } else {
      combine_after(r, partial, in);
    }
  }
}

void scan_chain(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv, const Reduction& r,
                bool exclusive) {
  scan_linear(p, g, send, recv, r.op, exclusive);
}

void add_scan_algorithms(Catalog& c) {
  c.push_back(scan_entry("scan/linear", "a chain of p-1 steps (any operator)", scan_chain));
  c.push_back(scan_entry("scan/recursive-doubling", "ceil(log p) exchanges (MPICH; Thakur et al. 2005; any operator)",
                         scan_recursive_doubling));
}

}  // namespace touchstone::algorithms
