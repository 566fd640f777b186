// Paper 002, sections 3 and 4: CC-cube and pipelined CC-cube complete exchange.
#include "families.hpp"
#include "cccube.hpp"

#include <algorithm>
#include <bit>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include <cstdlib>

#include <fmt/format.h>

#include "common.hpp"
#include "embedding.hpp"
#include "exchange.hpp"
#include "harness.hpp"
#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::algorithms {

std::vector<int> cc_cube_message_positions(int d, int i) {
  std::vector<int> out;
  for (int j = (1 << d) - 1; j >= 0; --j)
    if (j & (1 << i)) out.push_back(j);
  return out;
}

namespace {
// Blocks [first, last) of x_i form piece q of `degree` pieces (the first pieces get the extra block).
struct Piece {
  int first, last;
};
// Tokens between the conflict-free rounds of an iteration (exchange.hpp's kExchangeTag is 0).
constexpr int kTokenTag = 1;

Piece piece(int blocks, int degree, int q) {
  const int base = blocks / degree, extra = blocks % degree;
  const int first = q * base + std::min(q, extra);
  return {first, first + base + (q < extra ? 1 : 0)};
}

int cube_dimensions(int n, const char* name) {
  int d = 0;
  while ((1 << d) < n) ++d;
  if ((1 << d) != n) throw UsageError(fmt::format("{} needs a power-of-two number of processors (p = {})", name, n));
  return d;
}

// The hypercube node of every group rank: the machine's embedding when g is the whole machine in
// rank order, group ranks themselves otherwise.
}  // namespace

Embedding cc_cube_embedding(const Proc& p, const Group& g) {
  if (is_whole_machine(p, g)) return embedding_for(*p.machine().topology);
  cube_dimensions(g.size(), "cc-cube");  // the algorithm's own error before the embedding's
  return identity_embedding(g.size());
}

namespace {
// The conflict-free rounds of every dimension and the token source of every round-0 node after an
// iteration of several rounds: computed once per topology and embedding (every VP of a run, and
// every run on the same machine, shares them; a VP computing them alone would cost O(p^2) routes).
struct RoundPlan {
  std::vector<int> node_of;
  std::vector<std::vector<std::vector<int>>> rounds;  // rounds[i]: exchange_rounds(topo, e, i)
  std::vector<std::vector<int>> source;               // source[s][h]: -1 when iteration s - 1 is one round
};

RoundPlan make_plan(const Topology& topo, const Embedding& e) {
  RoundPlan plan;
  plan.node_of = e.node_of;
  for (int i = 0; i < e.d; ++i) plan.rounds.push_back(exchange_rounds(topo, e, i));
  plan.source.assign(static_cast<std::size_t>(e.d), std::vector<int>(static_cast<std::size_t>(1) << e.d, -1));
  for (int s = 1; s < e.d; ++s) {
    const auto& prev = plan.rounds[static_cast<std::size_t>(s - 1)];
    if (prev.size() < 2) continue;
    for (int h = 0; h < (1 << e.d); ++h) {
      int best = -1, best_hops = 0;
      for (int x : prev.back())
        for (int y : {x, x ^ (1 << (s - 1))}) {
          const int hops = topo.distance(e.node_of[static_cast<std::size_t>(h)], e.node_of[static_cast<std::size_t>(y)]);
          if (best < 0 || hops < best_hops || (hops == best_hops && y < best)) best = y, best_hops = hops;
        }
      plan.source[static_cast<std::size_t>(s)][static_cast<std::size_t>(h)] = best;
    }
  }
  return plan;
}

// Topology names are canonical (same name, same routes); the embedding is compared in full.
const RoundPlan& plan_of(const Topology& topo, const Embedding& e) {
  static std::mutex mu;
  static std::map<std::string, std::deque<RoundPlan>> cache;
  const std::lock_guard lock(mu);
  auto& plans = cache[topo.name()];
  for (const auto& plan : plans)
    if (plan.node_of == e.node_of) return plan;
  return plans.emplace_back(make_plan(topo, e));
}
}  // namespace

int cc_cube_boundary_source(const Topology& topo, const Embedding& e, int s, int h) {
  if (s < 1 || s >= e.d) return -1;
  return plan_of(topo, e).source[static_cast<std::size_t>(s)][static_cast<std::size_t>(h)];
}

// One step of the (pipelined) CC-cube on this node's vector M of 2^d blocks of L bytes: the pieces
// q = s - i of every iteration i in flight at step s. See alltoall_pipelined_cc_cube.
void cc_cube_step(Proc& p, const Group& g, const Embedding& e, int degree, int s, std::span<std::byte> M,
                  std::size_t L, bool alone) {
  const int d = e.d, blocks = (1 << d) / 2, me = e.cube_of[static_cast<std::size_t>(g.local_rank(p.rank()))];
  std::vector<std::vector<int>> positions;
  for (int i = 0; i < d; ++i) positions.push_back(cc_cube_message_positions(d, i));
  // The pieces of the iterations active in this step (piece q = s - i in 0..degree-1): at most
  // `degree` of the d iterations, one with the CC-cube. Their outgoing blocks are packed into one
  // buffer, piece after piece.
  struct Active {
    int i;
    Piece pc;
    std::size_t at;  // first block of the piece in the outgoing buffer and in the landing area
  };
  std::vector<Active> active;
  std::size_t moving = 0;
  for (int i = 0; i < d; ++i)
    if (s - i >= 0 && s - i < degree) {
      const Piece pc = piece(blocks, degree, s - i);
      active.push_back({i, pc, moving});
      moving += static_cast<std::size_t>(pc.last - pc.first);
    }
  // Incoming pieces land in M itself: once the outgoing blocks are packed, the blocks that stay
  // are compacted to the front of M and the pieces are received into its tail, then one in-place
  // permutation puts every block at its position. Per node that is M (the receive buffer) and one
  // outgoing buffer, instead of M, an outgoing and an incoming buffer per active iteration (which
  // would take 9.6 GB for the CC-cube at 16 KiB on 16x16 with d pairs, 4.6 GB with one pair and its
  // own M).
  // This needs the pieces of a step to leave from distinct positions, which the reverse order of
  // section 4 gives (enumerated for every d <= 10 and every degree); checked here all the same.
  std::vector<char> leaving(static_cast<std::size_t>(1) << d, 0);
  for (const auto& a : active)
    for (int k = a.pc.first; k < a.pc.last; ++k) {
      char& l = leaving[static_cast<std::size_t>(positions[static_cast<std::size_t>(a.i)][static_cast<std::size_t>(k)])];
      if (l) throw std::logic_error(fmt::format("cc-cube: two pieces of step {} leave from the same position", s));
      l = 1;
    }
  Scratch out(moving * L);
  // Section 3: "it is necessary to determine how the messages to be exchanged at the end of every
  // iteration of the algorithm must be routed to avoid conflicts". With degree 1 (the CC-cube) an
  // iteration whose exchange has congestion > 1 under the embedding runs in the conflict-free
  // rounds of exchange_rounds; a pair of round r > 0 starts when the pair at the same index of
  // round r - 1 (index modulo that round's size) has finished and sent each of its nodes a 0-byte
  // token (lower node to lower node, upper to upper; tag kTokenTag). Our design: the short paper
  // leaves the routing algorithms to its report [2]. With degree > 1 every piece of a step is posted
  // at once and the network resolves any conflict.
  const bool use_rounds = degree == 1 && e.kind != "identity";
  std::vector<Request> reqs, tokens;
  std::vector<std::byte> token_in(1);
  std::vector<int> successors;  // nodes to hand the token to after this step's exchange
  if (use_rounds) {
    const Topology& topo = *p.machine().topology;
    auto node = [&](int h) { return e.node_of[static_cast<std::size_t>(h)]; };
    auto wait_token = [&](int h) { p.recv(node(h), kTokenTag, std::span<std::byte>(token_in).first(0), g); };
    auto in_round = [](const std::vector<int>& round, int h) { return std::find(round.begin(), round.end(), h) != round.end(); };
    const RoundPlan& plan = plan_of(topo, e);
    const auto& rounds = plan.rounds[static_cast<std::size_t>(s)];
    const int low = me & ~(1 << s), side = me & (1 << s);
    // Between iterations (design): a round-0 pair of iteration s starts only when the nearest node
    // of the last round of iteration s - 1 has finished and sent it a token (when that iteration
    // had several rounds), so consecutive iterations do not overlap on a link either.
    if (!alone && s > 0 && in_round(rounds[0], low))
      if (const int from = cc_cube_boundary_source(topo, e, s, me); from >= 0 && from != me) wait_token(from);
    if (!alone && s + 1 < d && rounds.size() > 1 && in_round(rounds.back(), low))
      for (int x : plan.rounds[static_cast<std::size_t>(s + 1)][0])
        for (int y : {x, x ^ (1 << (s + 1))})
          if (y != me && cc_cube_boundary_source(topo, e, s + 1, y) == me) successors.push_back(node(y));
    for (std::size_t r = 0; r < rounds.size(); ++r)
      for (std::size_t k = 0; k < rounds[r].size(); ++k) {
        if (rounds[r][k] != low) continue;
        if (r > 0) wait_token(rounds[r - 1][k % rounds[r - 1].size()] | side);
        if (r + 1 < rounds.size())
          for (std::size_t k2 = 0; k2 < rounds[r + 1].size(); ++k2)
            if (k2 % rounds[r].size() == k) successors.push_back(node(rounds[r + 1][k2] | side));
      }
  }
  for (const auto& a : active)
    for (int k = a.pc.first; k < a.pc.last; ++k)
      move_block(p, M, positions[static_cast<std::size_t>(a.i)][static_cast<std::size_t>(k)], out,
                 static_cast<int>(a.at) + k - a.pc.first, L);
  const int n = 1 << d, stay = n - static_cast<int>(moving);
  std::vector<int> from(static_cast<std::size_t>(n));  // the slot of M holding each position's block
  for (int j = 0, slot = 0; j < n; ++j)
    if (!leaving[static_cast<std::size_t>(j)]) {
      if (slot != j) move_block(p, M, j, M, slot, L);  // slot < j: its block has left or moved already
      from[static_cast<std::size_t>(j)] = slot++;
    }
  const std::span<std::byte> landing = M.subspan(static_cast<std::size_t>(stay) * L, moving * L);
  for (const auto& a : active) {
    const int partner = e.node_of[static_cast<std::size_t>(me ^ (1 << a.i))];
    const std::size_t bytes = static_cast<std::size_t>(a.pc.last - a.pc.first) * L;
    reqs.push_back(p.irecv(partner, kExchangeTag, landing.subspan(a.at * L, bytes), g));
    reqs.push_back(p.isend(partner, kExchangeTag, out.span().subspan(a.at * L, bytes), g));
  }
  p.waitall(reqs);
  for (int next : successors) tokens.push_back(p.isend(next, kTokenTag, {}, g));
  for (const auto& a : active)
    for (int k = a.pc.first; k < a.pc.last; ++k)
      from[static_cast<std::size_t>(positions[static_cast<std::size_t>(a.i)][static_cast<std::size_t>(k)])] =
          stay + static_cast<int>(a.at) + k - a.pc.first;
  permute_blocks(p, M.first(static_cast<std::size_t>(n) * L), from, L);
  p.waitall(tokens);
}

// Figure 1: every node m starts with block (m, j) in M[j]; the simulation below moves block ids
// exactly as alltoall_pipelined_cc_cube moves bytes with degree 1.
std::vector<std::vector<std::vector<BlockId>>> cc_cube_states(int d) {
  const int n = 1 << d;
  std::vector<std::vector<BlockId>> M(static_cast<std::size_t>(n), std::vector<BlockId>(static_cast<std::size_t>(n)));
  for (int m = 0; m < n; ++m)
    for (int j = 0; j < n; ++j) M[static_cast<std::size_t>(m)][static_cast<std::size_t>(m ^ j)] = {m, j};
  std::vector<std::vector<std::vector<BlockId>>> states{M};
  for (int i = 0; i < d; ++i) {
    const auto positions = cc_cube_message_positions(d, i);
    auto next = M;
    for (int m = 0; m < n; ++m)
      for (int pos : positions)  // received blocks go where the sent ones were
        next[static_cast<std::size_t>(m)][static_cast<std::size_t>(pos)] =
            M[static_cast<std::size_t>(m ^ (1 << i))][static_cast<std::size_t>(pos)];
    M = next;
    states.push_back(M);
  }
  // The final permutation is the initial one: M[k] moves to M[m XOR k].
  auto final_state = M;
  for (int m = 0; m < n; ++m)
    for (int k = 0; k < n; ++k)
      final_state[static_cast<std::size_t>(m)][static_cast<std::size_t>(m ^ k)] = M[static_cast<std::size_t>(m)][static_cast<std::size_t>(k)];
  states.push_back(final_state);
  return states;
}

// Section 4 with section 3's pipelining. Node m (hypercube numbering) keeps M, 2^d blocks:
//   initial permutation: block (m, j) to M[m XOR j];
//   step s = 0 .. d + degree - 2: for every iteration i with piece q = s - i in 0..degree-1, piece
//     q of x_i (the blocks at positions with bit i set, highest position first) goes to the
//     dimension-i neighbour m XOR 2^i and the piece received from it lands in the same positions;
//   final permutation: M[k] holds the block from m XOR k.
// All sends and receives of a step are posted together; the node's ports decide how many move at
// once (one-port: one at a time; all-port: one per link).
void alltoall_pipelined_cc_cube(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                                std::size_t size, int degree) {
  const Group g = resolve(p, g0);
  const int n = g.size(), d = cube_dimensions(n, "cc-cube"), me_rank = g.local_rank(p.rank());
  const int blocks = n / 2;
  if (degree < 1 || (d > 0 && degree > blocks))
    throw UsageError(fmt::format("pipelined-cc-cube: the degree must be between 1 and 2^(d-1) = {} (got {})",
                                 std::max(1, blocks), degree));
  if (d == 0) {
    copy_own_block(p, me_rank, send, recv, size);
    return;
  }
  const Embedding e = cc_cube_embedding(p, g);
  const int me = e.cube_of[static_cast<std::size_t>(me_rank)];
  const std::size_t L = size;
  // M is the receive buffer itself: the final permutation is done in place.
  const std::span<std::byte> M = recv.first(static_cast<std::size_t>(n) * L);
  for (int j = 0; j < n; ++j) move_block(p, send, e.node_of[static_cast<std::size_t>(j)], M, me ^ j, L);
  for (int step = 0; step + 1 < d + degree; ++step) cc_cube_step(p, g, e, degree, step, M, L);
  std::vector<int> from(static_cast<std::size_t>(n));  // recv block node_of[me ^ k] is M[k]
  for (int k = 0; k < n; ++k) from[static_cast<std::size_t>(e.node_of[static_cast<std::size_t>(me ^ k)])] = k;
  permute_blocks(p, M, from, L);
}

void alltoall_cc_cube(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                      std::size_t size) {
  alltoall_pipelined_cc_cube(p, g, send, recv, size, 1);
}

namespace {
// Payload memory of a (pipelined) CC-cube run: the harness's send and receive buffers (M is the
// receive buffer), one outgoing buffer per node for the pieces of a step (at most 2^(d-1) blocks
// plus one per active iteration, pieces differing by at most one block), and their copies in
// flight.
Footprint cc_cube_footprint(int vps, std::size_t size, int degree) {
  const std::size_t p = static_cast<std::size_t>(vps), d = static_cast<std::size_t>(std::bit_width(p) - 1);
  const std::size_t active = std::min<std::size_t>(static_cast<std::size_t>(degree), std::max<std::size_t>(d, 1));
  const std::size_t out = p * (p / 2 + active) * size;
  return Footprint{2 * p * p * size + out, out, 4 * p * (active + 2), 2 * p * p * size, 2 * p * size};
}
Algorithm with_footprint(int degree, Algorithm a) {
  a.footprint = [degree](int vps, std::size_t size) { return cc_cube_footprint(vps, size, degree); };
  return a;
}
}  // namespace

Algorithm pipelined_cc_cube_entry(int degree) {
  return with_footprint(degree, alltoall_entry(fmt::format("alltoall/pipelined-cc-cube({})", degree),
                        "CC-cube with communication pipelining of the given degree (paper 002, sec. 3, 4)",
                        [degree](Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                                 std::size_t size) { alltoall_pipelined_cc_cube(p, g, send, recv, size, degree); }));
}

void add_cc_cube_algorithms(Catalog& c) {
  c.push_back(with_footprint(1, alltoall_entry("alltoall/cc-cube", "CC-cube complete exchange, d iterations (paper 002, sec. 4, Fig. 1)",
                                           alltoall_cc_cube)));
  c.add_family("alltoall/pipelined-cc-cube(", [](const std::string& name, const std::string& param) {
    const auto q = number_in_range(param, 1, 1 << 24);
    if (!q)
      throw UsageError(
          fmt::format("'{}': the pipelining degree must be a positive integer (paper 002, section 3)", name));
    return pipelined_cc_cube_entry(*q);
  });
}

}  // namespace touchstone::algorithms
