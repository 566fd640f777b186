// Paper 000 (Hambrusch, Hameed, Khokhar), section 5: all-to-all algorithms.
#include "alltoall.hpp"

#include <cstring>
#include <vector>

#include "common.hpp"
#include "harness.hpp"

namespace touchstone::algorithms {

namespace {
constexpr int kTag = 0;

// A processor's own block never crosses the network.
void copy_own_block(int me, std::span<const std::byte> send, std::span<std::byte> recv, std::size_t size) {
  if (size) std::memcpy(block(recv, me, size).data(), block(send, me, size).data(), size);
}
}  // namespace

// Section 5.3: "Algorithm 1-lev-dir, in which each processor simply issues its p - 1 sends and
// p - 1 receives". Receives are posted first so that arriving messages land in place; the sends
// follow the section 3.2 rule, farthest destination first; all are non-blocking (Figure 9 reports
// non-blocking sends).
void alltoall_1lev_dir(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size) {
  const int n = g.size(), me = g.local_rank(p.rank());
  copy_own_block(me, send, recv, size);
  std::vector<int> others;
  for (int r = 0; r < n; ++r)
    if (r != me) others.push_back(r);
  std::vector<Request> reqs;
  reqs.reserve(2 * others.size());
  for (int src : others) reqs.push_back(p.irecv(src, kTag, block(recv, src, size), g));
  for (int dst : farthest_first(p, g, others)) reqs.push_back(p.isend(dst, kTag, block(send, dst, size), g));
  p.waitall(reqs);
}

// Section 5.1: "in the i-th permutation processor P_j sends a message to P_(i xor j)". Each
// permutation is an exchange between partners; a processor moves to permutation i + 1 once its
// exchange of permutation i is complete.
void alltoall_1lev_xor(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size) {
  const int n = g.size(), me = g.local_rank(p.rank());
  copy_own_block(me, send, recv, size);
  for (int i = 1; i < ceil_pow2(n); ++i) {
    const int partner = me ^ i;
    if (partner >= n) continue;
    Request reqs[2] = {p.irecv(partner, kTag, block(recv, partner, size), g),
                       p.isend(partner, kTag, block(send, partner, size), g)};
    p.waitall(reqs);
  }
}

void add_alltoall_algorithms(std::vector<Algorithm>& c) {
  c.push_back(alltoall_entry("alltoall/1-lev-dir", "p-1 direct sends, farthest first (paper 000, sec. 5.1, 5.3)",
                             alltoall_1lev_dir));
  c.push_back(alltoall_entry("alltoall/1-lev-xor", "p-1 exclusive-or permutations (paper 000, sec. 5.1)",
                             alltoall_1lev_xor));
}

}  // namespace touchstone::algorithms
