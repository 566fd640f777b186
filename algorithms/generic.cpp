// Generic collectives (generic.hpp): textbook algorithms for what the papers do not cover.
#include "generic.hpp"

#include <cstring>

#include "common.hpp"
#include "scratch.hpp"

namespace touchstone::algorithms {

namespace {

std::span<const std::byte> cpart(std::span<const std::byte> b, std::size_t off, std::size_t n) { return b.subspan(off, n); }
std::span<std::byte> part(std::span<std::byte> b, std::size_t off, std::size_t n) { return b.subspan(off, n); }

// A local copy the processor pays for (docs/model.md 2.11).
void copy_local(Proc& p, std::span<std::byte> to, std::span<const std::byte> from) {
  if (from.empty() || to.data() == from.data()) return;
  std::memmove(to.data(), from.data(), from.size());
  p.local_copy(from.size());
}

// The binomial tree over virtual ranks 0..n-1 (virtual rank 0 the root): receive from the parent,
// then send to the children, largest subtree first.
void binomial_down(Proc& p, const Group& g, int vme, int n, int vroot_world_offset, std::span<std::byte> buf) {
  auto real = [&](int v) { return (v + vroot_world_offset) % n; };
  int mask = 1;
  while (mask < n) {
    if (vme & mask) {
      p.recv(real(vme - mask), kGenericTag, buf, g);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vme + mask < n) p.send(real(vme + mask), kGenericTag, buf, g);
}

}  // namespace

void bcast_binomial(Proc& p, const Group& g0, int root, std::span<std::byte> buf) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  binomial_down(p, g, (me - root + n) % n, n, root, buf);
}

void reduce_binomial(Proc& p, const Group& g0, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     const Reducer& op, bool commutative) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const int troot = commutative ? root : 0;
  const int vme = (me - troot + n) % n;
  auto real = [&](int v) { return (v + troot) % n; };
  ScratchBytes acc(send.begin(), send.end()), in(send.size());
  // Round `mask`: a virtual rank with that bit set sends its partial result (ranks vme ..
  // vme + mask - 1) to vme - mask, which combines it after its own: acc = acc op in.
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vme & mask) {
      p.send(real(vme - mask), kGenericTag, acc, g);
      break;
    }
    if (vme + mask < n) {
      p.recv(real(vme + mask), kGenericTag, in, g);
      op(acc, in);  // in = acc op in: the lower ranks' part first
      acc.swap(in);
    }
  }
  if (troot == root) {
    if (me == root) std::memcpy(recv.data(), acc.data(), acc.size());
    return;
  }
  if (me == troot) p.send(root, kGenericTag, acc, g);
  if (me == root) p.recv(troot, kGenericTag, recv.first(acc.size()), g);
}

void allreduce_reduce_bcast(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                            const Reducer& op, bool commutative) {
  reduce_binomial(p, g, 0, send, recv, op, commutative);
  bcast_binomial(p, g, 0, recv.first(send.size()));
}

void scan_linear(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                 const Reducer& op, bool exclusive) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  ScratchBytes prefix(send.begin(), send.end());  // send_0 op ... op send_me
  if (me > 0) {
    ScratchBytes before(send.size());  // send_0 op ... op send_(me-1)
    p.recv(me - 1, kGenericTag, before, g);
    if (exclusive) std::memcpy(recv.data(), before.data(), before.size());
    op(before, prefix);
  }
  if (me + 1 < n) p.send(me + 1, kGenericTag, prefix, g);
  if (!exclusive) std::memcpy(recv.data(), prefix.data(), prefix.size());
}

namespace {

// The root exchanges one message with every other member: it receives each member's part
// (gatherv) or sends it (scatterv), all posted at once, and copies its own part locally.
enum class Towards { root, members };
void rooted_direct(Proc& p, const Group& g0, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                   std::span<const std::size_t> counts, std::span<const std::size_t> displs, Towards towards) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const bool gather = towards == Towards::root;
  if (me != root) {
    if (gather) p.send(root, kGenericTag, send, g);
    else p.recv(root, kGenericTag, recv, g);
    return;
  }
  std::vector<Request> rs;
  for (int i = 0; i < n; ++i)
    if (i != root)
      rs.push_back(gather ? p.irecv(i, kGenericTag, part(recv, displs[i], counts[i]), g)
                          : p.isend(i, kGenericTag, cpart(send, displs[i], counts[i]), g));
  if (gather) copy_local(p, part(recv, displs[root], counts[root]), send.first(counts[root]));
  else copy_local(p, recv.first(counts[root]), cpart(send, displs[root], counts[root]));
  p.waitall(rs);
}

}  // namespace

void gatherv_direct(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                    std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
  rooted_direct(p, g, root, send, recv, counts, displs, Towards::root);
}

void scatterv_direct(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
  rooted_direct(p, g, root, send, recv, counts, displs, Towards::members);
}

void allgatherv_ring(Proc& p, const Group& g0, std::span<std::byte> buf, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  // Step i: pass on block me - i + 1 (own block first), receive block me - i.
  for (int i = 1; i < n; ++i) {
    const int out = (me - i + 1 + n) % n, in = (me - i + n) % n;
    p.sendrecv(next, kGenericTag, part(buf, displs[out], counts[out]), prev, kGenericTag,
               part(buf, displs[in], counts[in]), g);
  }
}

void alltoallv_pairwise(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<const std::size_t> scounts,
                        std::span<const std::size_t> sdispls, std::span<std::byte> recv,
                        std::span<const std::size_t> rcounts, std::span<const std::size_t> rdispls) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  copy_local(p, part(recv, rdispls[me], rcounts[me]), cpart(send, sdispls[me], scounts[me]));
  for (int i = 1; i < n; ++i) {
    const int to = (me + i) % n, from = (me - i + n) % n;
    p.sendrecv(to, kGenericTag, cpart(send, sdispls[to], scounts[to]), from, kGenericTag,
               part(recv, rdispls[from], rcounts[from]), g);
  }
}

}  // namespace touchstone::algorithms
