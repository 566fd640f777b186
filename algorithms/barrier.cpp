// Barriers (bcast.hpp): dissemination and tree.
#include "bcast.hpp"
#include "common.hpp"
#include "families.hpp"
#include "generic.hpp"
#include "library_harness.hpp"

namespace touchstone::algorithms {

void barrier_dissemination(Proc& p, const Group& g0) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  for (int d = 1; d < n; d *= 2) p.sendrecv((me + d) % n, kGenericTag, {}, (me - d % n + n) % n, kGenericTag, {}, g);
}

void barrier_tree(Proc& p, const Group& g0) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  // Fan-in: in round d a rank with bit d set signals me - d and is done; the others wait for me + d.
  int d = 1;
  for (; d < n; d *= 2) {
    if (me & d) {
      p.send(me - d, kGenericTag, {}, g);
      break;
    }
    if (me + d < n) p.recv(me + d, kGenericTag, {}, g);
  }
  // Fan-out: the mirror image.
  if (me != 0) p.recv(me - d, kGenericTag, {}, g);
  for (d /= 2; d > 0; d /= 2)
    if (me + d < n) p.send(me + d, kGenericTag, {}, g);
}

void add_barrier_algorithms(Catalog& c) {
  c.push_back(barrier_entry("barrier/dissemination",
                            "ceil(log p) rounds to i + 2^k (Hensgen, Finkel, Manber 1988; MPICH)",
                            barrier_dissemination));
  c.push_back(barrier_entry("barrier/tree", "binomial fan-in to rank 0, then fan-out (Open MPI's tree)", barrier_tree));
}

}  // namespace touchstone::algorithms
