// All-to-all broadcast on switch-based clusters (paper 004). Every algorithm is real SPMD code
// over the public API; the switch structure comes from the machine's topology (SwitchNetwork).
#include "families.hpp"
#include "allgather.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "combine.hpp"
#include "common.hpp"
#include "generic.hpp"
#include "harness.hpp"
#include "library_harness.hpp"
#include "reduction_steps.hpp"
#include "touchstone/error.hpp"
#include "touchstone/topologies/switch_network.hpp"

namespace touchstone::algorithms {

namespace {

using AllgatherFn = std::function<void(Proc&, std::span<std::byte> buf, std::size_t size)>;

// Harness: allgather_program (harness.hpp), with the memory of paper 004's algorithms.
Algorithm allgather_entry(std::string name, std::string summary, AllgatherFn fn) {
  auto program = allgather_program(name, fn);
  // Every processor's buffer of p blocks (one per run under phantom payloads), the algorithm's
  // combined messages, and their copies in flight; SB and LS post a message to every processor at once.
  auto footprint = [](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps);
    return Footprint{2 * p * p * size, p * p * size, 2 * p * p, p * p * size, p * size};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.allgather_world = std::move(fn);
  return alg;
}

const SwitchNetwork* switch_net(const Proc& p) { return dynamic_cast<const SwitchNetwork*>(p.machine().topology.get()); }

// LR (Fig. 3) over a ring order: in step i, send the block received in step i-1 (own block first)
// to the next node and receive the next block from the previous one.
void ring(Proc& p, std::span<std::byte> buf, std::size_t L, const std::vector<int>& order) {
  const int P = p.size();
  if (P == 1) return;
  int pos = 0;
  while (order[static_cast<std::size_t>(pos)] != p.rank()) ++pos;
  auto at = [&](int k) { return order[static_cast<std::size_t>(((k % P) + P) % P)]; };
  for (int i = 1; i < P; ++i)
    p.sendrecv(at(pos + 1), 0, block(std::span<const std::byte>(buf), at(pos + 1 - i), L), at(pos - 1), 0,
               block(buf, at(pos - i), L));
}

std::vector<int> rank_order(int P) {
  std::vector<int> o(static_cast<std::size_t>(P));
  std::iota(o.begin(), o.end(), 0);
  return o;
}

// SB (Fig. 4): send the own block to me+1, me+2, ... while receiving from me-1, me-2, ...
// Sends are asynchronous; after each send the node receives a message that has already arrived
// (test), and the remaining receives complete in arrival order at the end.
void sb(Proc& p, std::span<std::byte> buf, std::size_t L) {
  const int P = p.size(), me = p.rank();
  std::vector<Request> sends, recvs;
  for (int i = 1; i < P; ++i) recvs.push_back(p.irecv((me - i + P) % P, 0, block(buf, (me - i + P) % P, L)));
  std::size_t next = 0;
  for (int i = 1; i < P; ++i) {
    sends.push_back(p.isend((me + i) % P, 0, block(std::span<const std::byte>(buf), me, L)));
    if (next < recvs.size() && p.test(recvs[next])) ++next;
  }
  for (; next < recvs.size(); ++next) p.wait(recvs[next]);
  p.waitall(sends);
}

// Combining (Fig. 5): ceil(log2 P) steps; in step s send the 2^s most recent blocks (fewer in the
// last step) to me + 2^s and receive as many from me - 2^s. Blocks me-k+1..me travel packed.
void combining(Proc& p, std::span<std::byte> buf, std::size_t L) {
  const int P = p.size(), me = p.rank();
  ScratchBytes out, in;
  for (int have = 1, dist = 1; have < P; dist *= 2) {
    const int cnt = std::min(have, P - have);
    out.resize(static_cast<std::size_t>(cnt) * L);
    in.resize(out.size());
    // Under phantom payloads nothing is packed or unpacked: no byte is read for its value, and
    // the harness's buffer is shared by the VPs.
    for (int k = 0; k < cnt && !p.phantom_payloads(); ++k) {
      const int b = ((me - k) % P + P) % P;
      std::memcpy(out.data() + static_cast<std::size_t>(k) * L, block(buf, b, L).data(), L);
    }
    const int src = ((me - dist) % P + P) % P;
    p.sendrecv((me + dist) % P, 0, out, src, 0, in);
    for (int k = 0; k < cnt && !p.phantom_payloads(); ++k) {
      const int b = ((src - k) % P + P) % P;
      std::memcpy(block(buf, b, L).data(), in.data() + static_cast<std::size_t>(k) * L, L);
    }
    have += cnt;
  }
}

// The switch ring of LS (section 5.2, step 1): switches with nodes, in in-order BFS traversal.
struct SwitchRing {
  std::vector<int> sw;  // ring order
  int self = 0;         // index of this node's switch in sw
};
SwitchRing switch_ring(const SwitchNetwork& net, int rank) {
  SwitchRing r;
  for (int s : net.inorder_switches())
    if (!net.nodes_on(s).empty()) r.sw.push_back(s);
  while (r.sw[static_cast<std::size_t>(r.self)] != net.switch_of(rank)) ++r.self;
  return r;
}

// LS2 (Fig. 7) and LS (Fig. 10): phase 1 stages of a modified local SB while the link schedule
// sends remote blocks to the next switch of the ring and receives from the previous one; phase 2
// distributes the blocks received in the last stage.
void link_scheduling(Proc& p, std::span<std::byte> buf, std::size_t L, bool reflect, const char* name) {
  const SwitchNetwork* net = switch_net(p);
  const int P = p.size(), me = p.rank();
  if (!net) {  // one crossbar of all nodes: phase 1 is a plain local SB
    if (reflect) return sb(p, buf, L);
    throw UsageError(fmt::format("{} needs a switch machine (switch:P, switch2:N1+N2, irregular:...)", name));
  }
  const SwitchRing ring = switch_ring(*net, me);
  const int S = static_cast<int>(ring.sw.size());
  if (!reflect && S != 2) throw UsageError(fmt::format("{} needs exactly two switches with nodes (got {}); use allgather/LS", name, S));
  auto nodes = [&](int k) -> const std::vector<int>& { return net->nodes_on(ring.sw[static_cast<std::size_t>(((k % S) + S) % S)]); };
  const auto& local = nodes(ring.self);
  const auto& src = nodes(ring.self - 1);
  const auto& dst = nodes(ring.self + 1);
  const int n = static_cast<int>(local.size()), i = static_cast<int>(std::find(local.begin(), local.end(), me) - local.begin());
  const LinkSchedule here{n, reflect}, from{static_cast<int>(src.size()), reflect}, to{static_cast<int>(dst.size()), reflect};
  const int R = S > 1 ? P - n : 0, Snd = S > 1 ? P - static_cast<int>(dst.size()) : 0;
  // Origins of the blocks arriving at every switch, in arrival order: switch k's t-th arrival is
  // its source's own block (t < n_src) or the source's (t - n_src)-th arrival, forwarded.
  std::vector<std::vector<int>> seq(static_cast<std::size_t>(S));
  for (int t = 0; t < P; ++t)
    for (int k = 0; k < S; ++k) {
      const auto& ws = nodes(k - 1);
      const int nw = static_cast<int>(ws.size());
      auto& q = seq[static_cast<std::size_t>(k)];
      if (S == 1 || t >= P - static_cast<int>(nodes(k).size())) continue;
      const LinkSchedule wsch{nw, reflect};
      q.push_back(t < nw ? ws[static_cast<std::size_t>(wsch.remote_sender(t))] : seq[static_cast<std::size_t>(((k - 1) % S + S) % S)][static_cast<std::size_t>(t - nw)]);
    }
  const auto& arrivals = seq[static_cast<std::size_t>(ring.self)];
  const int T = std::max(R, Snd), stages = std::max(1, (T + n - 1) / n);
  // The block local node k distributes in stage s: its own in stage 0, later the remote block it
  // received in stage s-1 (-1: none).
  auto msg_of = [&](int s, int k) {
    if (s == 0) return local[static_cast<std::size_t>(k)];
    const int dir = here.direction(s - 1);
    const int r = (s - 1) * n + (dir > 0 ? n - 1 - k : k);
    return r < R ? arrivals[static_cast<std::size_t>(r)] : -1;
  };
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  auto cblock = [&](int b) { return block(std::span<const std::byte>(buf), b, L); };
  std::vector<Request> sends;
  for (int s = 0; s < stages; ++s) {
    const int dir = here.direction(s);
    const int sslot = dir > 0 ? i : n - 1 - i, rslot = dir > 0 ? n - 1 - i : i;
    const int mine = msg_of(s, i);
    std::vector<Request> recvs;
    for (int j = 0; j < n; ++j) {
      if (j == sslot) {
        const int t = s * n + j;
        if (t < Snd) {
          const int b = t < n ? me : arrivals[static_cast<std::size_t>(t - n)];
          sends.push_back(p.isend(dst[static_cast<std::size_t>(to.remote_receiver(t))], 1, cblock(b)));
        }
      } else if (mine >= 0) {
        const int d = j < sslot ? j + 1 : j;
        sends.push_back(p.isend(local[static_cast<std::size_t>(mod(i - dir * d))], 10 + s, cblock(mine)));
      }
      if (j == rslot) {
        const int r = s * n + j;
        if (r < R) recvs.push_back(p.irecv(src[static_cast<std::size_t>(from.remote_sender(r))], 1, block(buf, arrivals[static_cast<std::size_t>(r)], L)));
      } else {
        const int d = j < rslot ? j + 1 : j;
        const int k = mod(i + dir * d), b = msg_of(s, k);
        if (b >= 0) recvs.push_back(p.irecv(local[static_cast<std::size_t>(k)], 10 + s, block(buf, b, L)));
      }
    }
    // Fig. 7's note: the next stage starts only when NEXT_MSG has been received.
    p.waitall(recvs);
  }
  // Phase 2: local broadcast of the blocks received in the last stage.
  const int dir = here.direction(stages);
  std::vector<Request> recvs;
  const int mine = msg_of(stages, i);
  for (int d = 1; d < n; ++d) {
    if (mine >= 0) sends.push_back(p.isend(local[static_cast<std::size_t>(mod(i - dir * d))], 10 + stages, cblock(mine)));
    const int k = mod(i + dir * d), b = msg_of(stages, k);
    if (b >= 0) recvs.push_back(p.irecv(local[static_cast<std::size_t>(k)], 10 + stages, block(buf, b, L)));
  }
  p.waitall(recvs);
  p.waitall(sends);
}

}  // namespace

std::vector<PatternStep> link_schedule_pattern(int n, int n_src, int n_dst, int P, bool reflect) {
  const LinkSchedule here{n, reflect}, from{n_src, reflect}, to{n_dst, reflect};
  const int R = P - n, Snd = P - n_dst, T = std::max(R, Snd), stages = std::max(1, (T + n - 1) / n);
  const char* rl = reflect ? "S" : "R";
  const char* sl = reflect ? "D" : "R";
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  auto has_msg = [&](int s, int k) {
    if (s == 0) return true;
    return (s - 1) * n + (here.direction(s - 1) > 0 ? n - 1 - k : k) < R;
  };
  std::vector<PatternStep> out;
  for (int s = 0; s < stages; ++s) {
    const int dir = here.direction(s);
    for (int j = 0; j < n; ++j) {
      PatternStep st;
      for (int i = 0; i < n; ++i) {
        const int sslot = dir > 0 ? i : n - 1 - i, rslot = dir > 0 ? n - 1 - i : i;
        const int t = s * n + j;
        if (j == sslot) st.send.push_back(t < Snd ? fmt::format("{}{}", sl, to.remote_receiver(t) + 1) : "-");
        else st.send.push_back(has_msg(s, i) ? std::to_string(mod(i - dir * (j < sslot ? j + 1 : j)) + 1) : "-");
        if (j == rslot) st.recv.push_back(t < R ? fmt::format("{}{}", rl, from.remote_sender(t) + 1) : "-");
        else {
          const int k = mod(i + dir * (j < rslot ? j + 1 : j));
          st.recv.push_back(has_msg(s, k) ? std::to_string(k + 1) : "-");
        }
      }
      out.push_back(std::move(st));
    }
  }
  const int dir = here.direction(stages);
  for (int d = 1; d < n; ++d) {
    PatternStep st;
    for (int i = 0; i < n; ++i) {
      st.send.push_back(has_msg(stages, i) ? std::to_string(mod(i - dir * d) + 1) : "-");
      const int k = mod(i + dir * d);
      st.recv.push_back(has_msg(stages, k) ? std::to_string(k + 1) : "-");
    }
    out.push_back(std::move(st));
  }
  return out;
}

// --- The MPI libraries' all-gathers (allgather.hpp), on any group ---

void allgather_recursive_doubling(Proc& p, const Group& g0, std::span<std::byte> buf, std::size_t L) {
  const Group g = resolve(p, g0);
  const int me = g.local_rank(p.rank());
  const PowerOfTwoFold f(g.size());
  // The blocks of ranks [a, b), contiguous in buf.
  auto ranks = [&](int a, int b) {
    return buf.subspan(static_cast<std::size_t>(a) * L, static_cast<std::size_t>(b - a) * L);
  };
  if (me < 2 * f.rem) {
    if (me % 2 == 0)
      p.send(me + 1, kGenericTag, ranks(me, me + 1), g);
    else
      p.recv(me - 1, kGenericTag, ranks(me - 1, me), g);
  }
  if (const int nr = f.newrank(me); nr >= 0)
    // Round d: exchange the window of d new ranks (the blocks of the ranks they stand for) with nr ^ d.
    for (int d = 1; d < f.pof2; d *= 2) {
      const int lo = nr & ~(d - 1), other = lo ^ d, partner = f.rank_of(nr ^ d);
      p.sendrecv(partner, kGenericTag, ranks(f.first_rank(lo), f.first_rank(lo + d)), partner, kGenericTag,
                 ranks(f.first_rank(other), f.first_rank(other + d)), g);
    }
  if (me < 2 * f.rem) {
    if (me % 2)
      p.send(me - 1, kGenericTag, buf.first(static_cast<std::size_t>(f.n) * L), g);
    else
      p.recv(me + 1, kGenericTag, buf.first(static_cast<std::size_t>(f.n) * L), g);
  }
}

void allgather_bruck(Proc& p, const Group& g0, std::span<std::byte> buf, std::size_t L) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  // tmp block k holds the block of rank me + k; in round d rank me sends its first min(d, n - d)
  // blocks to me - d and receives as many, those of ranks me + d .., from me + d.
  ScratchBytes tmp(static_cast<std::size_t>(n) * L);
  const auto slots = [&](int a, int count) {
    return std::span(tmp).subspan(static_cast<std::size_t>(a) * L, static_cast<std::size_t>(count) * L);
  };
  copy_in(p, slots(0, 1), block(std::span<const std::byte>(buf), me, L));
  for (int d = 1; d < n; d *= 2) {
    const int count = std::min(d, n - d);
    p.sendrecv((me - d + n) % n, kGenericTag, slots(0, count), (me + d) % n, kGenericTag, slots(d, count), g);
  }
  // Rotate back: rank (me + k)'s block to its place, as at most two contiguous copies.
  copy_charged(p, [&](Copier& copy) {
    const int wrap = n - me;  // tmp blocks 0..wrap-1 are ranks me..n-1
    copy(buf.subspan(static_cast<std::size_t>(me) * L, static_cast<std::size_t>(wrap) * L), slots(0, wrap));
    copy(buf.first(static_cast<std::size_t>(me) * L), slots(wrap, me));
  });
}

void allgather_ring(Proc& p, const Group& g0, std::span<std::byte> buf, std::size_t L) {
  const Group g = resolve(p, g0);
  const auto n = static_cast<std::size_t>(g.size());
  const std::vector<std::size_t> counts(n, L);
  std::vector<std::size_t> displs(n);
  for (std::size_t i = 0; i < n; ++i) displs[i] = i * L;
  allgatherv_ring(p, g, buf, counts, displs);
}

void allgather_neighbor_exchange(Proc& p, const Group& g0, std::span<std::byte> buf, std::size_t L) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  if (n % 2) return allgather_ring(p, g, buf, L);
  auto at = [&](int first, int count) {
    return buf.subspan(static_cast<std::size_t>(first) * L, static_cast<std::size_t>(count) * L);
  };
  // An even rank's neighbours are me + 1 (step 0 and even steps) and me - 1 (odd steps); an odd
  // rank's the other way round. Step 0 exchanges the own block with neighbour 0, so every rank then
  // holds the pair of blocks (2k, 2k + 1) of itself and that neighbour. Step i > 0 sends the pair
  // received last (the own pair at step 1) to neighbour i mod 2 and receives from it the pair two
  // ranks further on that side.
  const bool even = me % 2 == 0;
  const int neighbour[2] = {even ? (me + 1) % n : (me - 1 + n) % n, even ? (me - 1 + n) % n : (me + 1) % n};
  const int further[2] = {even ? 2 : -2, even ? -2 : 2};
  p.sendrecv(neighbour[0], kGenericTag, at(me, 1), neighbour[0], kGenericTag, at(neighbour[0], 1), g);
  int received[2] = {even ? me : neighbour[0],
                     even ? me : neighbour[0]};  // first block of the last pair from each side
  int send_from = received[0];
  for (int i = 1; i < n / 2; ++i) {
    const int side = i % 2;
    received[side] = (received[side] + further[side] + n) % n;
    p.sendrecv(neighbour[side], kGenericTag, at(send_from, 2), neighbour[side], kGenericTag, at(received[side], 2), g);
    send_from = received[side];
  }
}

// Section 3.2 and Table 1: g = L; g_s = L when L > 2o (case 1), 2o when o < L < 2o (case 2), and
// g = g_s = o when L <= o (case 3).
double t_sb(int P, double L, double o) {
  const double g = L > o ? L : o;
  const double gs = L > 2 * o ? L : (L > o ? 2 * o : o);
  return 2 * o + L + (P - 3) * gs + g;
}

double t_combine(int P, double L, double o) {
  return std::ceil(std::log2(static_cast<double>(P))) * 2 * o + (P - 1) * L;
}

void add_allgather_algorithms(Catalog& c) {
  c.push_back(allgather_entry("allgather/LR", "logical ring in rank order (paper 004, Fig. 3)",
                              [](Proc& p, std::span<std::byte> b, std::size_t L) { ring(p, b, L, rank_order(p.size())); }));
  c.push_back(allgather_entry("allgather/SB", "simultaneous broadcast (paper 004, Fig. 4)", sb));
  c.push_back(allgather_entry("allgather/combining", "recursive combining, ceil(log2 P) steps (paper 004, Fig. 5)", combining));
  c.push_back(allgather_entry("allgather/RO-ring", "rank-ordered ring, MPICH's default (paper 004, section 5)",
                              [](Proc& p, std::span<std::byte> b, std::size_t L) { ring(p, b, L, rank_order(p.size())); }));
  c.push_back(allgather_entry("allgather/SO-ring", "switch-ordered ring: in-order BFS traversal (paper 004, sections 4.2, 5.1)",
                              [](Proc& p, std::span<std::byte> b, std::size_t L) {
                                const SwitchNetwork* net = switch_net(p);
                                ring(p, b, L, net ? net->switch_ordered_ranks() : rank_order(p.size()));
                              }));
  c.push_back(allgather_entry("allgather/LS2", "2-switch link scheduling (paper 004, Fig. 7)",
                              [](Proc& p, std::span<std::byte> b, std::size_t L) { link_scheduling(p, b, L, false, "allgather/LS2"); }));
  c.push_back(allgather_entry("allgather/LS", "link scheduling on irregular networks (paper 004, section 5.2, Fig. 10)",
                              [](Proc& p, std::span<std::byte> b, std::size_t L) { link_scheduling(p, b, L, true, "allgather/LS"); }));
  // The MPI libraries', on any group.
  c.push_back(library_allgather_entry("allgather/recursive-doubling",
                                      "log p exchanges of doubling windows (Thakur et al. "
                                      "2005; MPICH, medium)",
                                      allgather_recursive_doubling));
  c.push_back(library_allgather_entry("allgather/bruck", "Bruck et al. 1997: ceil(log p) rounds, any p (MPICH, short)",
                                      allgather_bruck));
  c.push_back(library_allgather_entry("allgather/ring", "p-1 steps to the next rank (Thakur et al. 2005; MPICH, long)",
                                      allgather_ring));
  c.push_back(library_allgather_entry("allgather/neighbor-exchange",
                                      "p/2 steps with alternate neighbours (Chen et al. 2005; "
                                      "Open MPI; ring for odd p)",
                                      allgather_neighbor_exchange));
}

}  // namespace touchstone::algorithms
