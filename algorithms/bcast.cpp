// Broadcast (bcast.hpp): scatter + all-gather and the pipelined chain; the binomial tree is
// generic.cpp's.
#include "bcast.hpp"

#include <algorithm>

#include <cstdlib>

#include <fmt/format.h>

#include "common.hpp"
#include "families.hpp"
#include "generic.hpp"
#include "library_harness.hpp"
#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::algorithms {

namespace {
// bcast/chain's segment: 8 KiB, the size of Open MPI's smaller pipeline segments.
constexpr std::size_t kDefaultSegment = 8192;

Algorithm chain_entry(std::size_t segment) {
  return library_bcast_entry(
      segment == kDefaultSegment ? "bcast/chain" : fmt::format("bcast/chain({})", segment),
      fmt::format("pipelined chain, {}-byte segments (Open MPI's chain/pipeline; bcast/chain(BYTES) for others)",
                  segment),
      [segment](Proc& p, const Group& g, int root, std::span<std::byte> buf) {
        bcast_chain(p, g, root, buf, segment);
      });
}
}  // namespace

namespace {
// Binomial scatter (van de Geijn's first half): piece k of ceil(bytes / n) bytes (the last ones
// shorter or empty) belongs to relative rank k; relative rank v receives the pieces of its subtree
// [v, v + lowbit(v)) from v - lowbit(v), then hands each child v + m the pieces of the child's
// subtree [v + m, v + 2m).
struct Pieces {
  std::span<std::byte> buf;
  int n, root;
  std::size_t each;
  Pieces(std::span<std::byte> b, int size, int r)
      : buf(b),
        n(size),
        root(r),
        each((b.size() + static_cast<std::size_t>(size) - 1) / static_cast<std::size_t>(size)) {}
  std::size_t from(int k) const { return std::min(buf.size(), static_cast<std::size_t>(k) * each); }
  /// The pieces of relative ranks [a, b).
  std::span<std::byte> of(int a, int b) const { return buf.subspan(from(a), from(std::min(b, n)) - from(a)); }
  int real(int rel) const { return (rel + root) % n; }
};

void binomial_scatter(Proc& p, const Group& g, const Pieces& pc, int v) {
  int mask = 1;
  while (mask < pc.n && !(v & mask)) mask <<= 1;
  if (v != 0) p.recv(pc.real(v - mask), kGenericTag, pc.of(v, v + mask), g);
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < pc.n) p.send(pc.real(v + mask), kGenericTag, pc.of(v + mask, v + 2 * mask), g);
}

// Ring all-gather of the pieces in relative rank order.
void ring_allgather(Proc& p, const Group& g, const Pieces& pc) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(pc.n)), displs(static_cast<std::size_t>(pc.n));
  for (int rank = 0; rank < pc.n; ++rank) {
    const int rel = (rank - pc.root + pc.n) % pc.n;
    displs[static_cast<std::size_t>(rank)] = pc.from(rel);
    counts[static_cast<std::size_t>(rank)] = pc.from(rel + 1) - pc.from(rel);
  }
  allgatherv_ring(p, g, pc.buf, counts, displs);
}

// Van de Geijn's broadcast: the binomial scatter, then an all-gather of the pieces, by recursive
// doubling when asked and p is a power of two, by the ring otherwise.
void scatter_then_allgather(Proc& p, const Group& g0, int root, std::span<std::byte> buf, bool recursive_doubling) {
  const Group g = resolve(p, g0);
  const int n = g.size(), v = (g.local_rank(p.rank()) - root + n) % n;
  if (n == 1) return;
  const Pieces pc(buf, n, root);
  binomial_scatter(p, g, pc, v);
  if (!recursive_doubling || (n & (n - 1))) return ring_allgather(p, g, pc);
  // Recursive doubling: in the round of distance d, exchange the window of d pieces with v ^ d.
  for (int d = 1; d < n; d *= 2) {
    const int lo = v & ~(d - 1), other = lo ^ d, partner = pc.real(v ^ d);
    p.sendrecv(partner, kGenericTag, pc.of(lo, lo + d), partner, kGenericTag, pc.of(other, other + d), g);
  }
}
}  // namespace

void bcast_scatter_allgather(Proc& p, const Group& g, int root, std::span<std::byte> buf) {
  scatter_then_allgather(p, g, root, buf, false);
}

void bcast_scatter_rd_allgather(Proc& p, const Group& g, int root, std::span<std::byte> buf) {
  scatter_then_allgather(p, g, root, buf, true);
}

void bcast_chain(Proc& p, const Group& g0, int root, std::span<std::byte> buf, std::size_t segment) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank()), v = (me - root + n) % n;
  if (n == 1) return;
  const std::size_t pieces = std::max<std::size_t>(1, (buf.size() + segment - 1) / segment);
  auto piece = [&](std::size_t k) {
    const std::size_t at = std::min(buf.size(), k * segment);
    return buf.subspan(at, std::min(segment, buf.size() - at));
  };
  const int prev = (me + n - 1) % n, next = (me + 1) % n;
  // Every receive is posted at once, so that pieces arriving while this rank forwards earlier ones
  // find their buffers; pieces leave in order, each as soon as it has arrived.
  std::vector<Request> recvs, sends;
  if (v != 0)
    for (std::size_t k = 0; k < pieces; ++k) recvs.push_back(p.irecv(prev, kGenericTag, piece(k), g));
  for (std::size_t k = 0; k < pieces; ++k) {
    if (v != 0) p.wait(recvs[k]);
    if (v + 1 < n) sends.push_back(p.isend(next, kGenericTag, piece(k), g));
  }
  p.waitall(sends);
}

void add_bcast_algorithms(Catalog& c) {
  c.push_back(library_bcast_entry(
      "bcast/binomial", "binomial tree, ceil(log p) rounds (Thakur et al. 2005; MPICH, short)", bcast_binomial));
  c.push_back(library_bcast_entry("bcast/scatter-allgather",
                                  "binomial scatter + ring all-gather (van de Geijn; Thakur et al. 2005; MPICH, long)",
                                  bcast_scatter_allgather));
  c.push_back(
      library_bcast_entry("bcast/scatter-rd-allgather",
                          "binomial scatter + recursive-doubling all-gather (Thakur et al. 2005; MPICH, medium, "
                          "p a power of two; the ring otherwise)",
                          bcast_scatter_rd_allgather));
  c.push_back(chain_entry(kDefaultSegment));
  c.add_family("bcast/chain(", [](const std::string& name, const std::string& param) {
    const auto bytes = number_in_range<std::size_t>(param, 1, std::size_t{1} << 40);
    if (!bytes)
      throw UsageError(fmt::format("'{}': the segment size must be a whole number of bytes, 1 or more", name));
    return chain_entry(*bytes);
  });
}

}  // namespace touchstone::algorithms
