// Paper 000 (Hambrusch, Hameed, Khokhar), section 5.1: partitioning all-to-all into permutations.
#include "permutations.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "common.hpp"
#include "exchange.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
using Perm = std::vector<int>;

// The messages of a cycle a_0 -> a_1 -> ... -> a_(n-1) -> a_0.
void add_cycle(Perm& perm, std::initializer_list<int> cycle) {
  const std::vector<int> c(cycle);
  for (std::size_t i = 0; i < c.size(); ++i) perm[static_cast<std::size_t>(c[i])] = c[(i + 1) % c.size()];
}

bool has_moves(const Perm& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] >= 0 && perm[i] != static_cast<int>(i)) return true;
  return false;
}

// A 1-factorization of the complete graph on n players (n even), by the circle method: player
// n-1 stays put while the others rotate; round r pairs (n-1, r) and (r+s, r-s) mod (n-1).
std::vector<std::vector<std::pair<int, int>>> tournament(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (int r = 0; r + 1 < n; ++r) {
    std::vector<std::pair<int, int>> round{{r, n - 1}};
    for (int s = 1; s < n / 2; ++s) {
      const int a = (r + s) % (n - 1), b = (r - s + n - 1) % (n - 1);
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}
}  // namespace

Schedule linear_schedule(int p) {
  Schedule s{p, {}, {}};
  for (int i = 1; i < p; ++i) {
    Perm perm(static_cast<std::size_t>(p));
    for (int j = 0; j < p; ++j) perm[static_cast<std::size_t>(j)] = (i + j) % p;
    s.to.push_back(std::move(perm));
  }
  return s;
}

Schedule xor_schedule(int p) {
  Schedule s{p, {}, {}};
  for (int i = 1; i < ceil_pow2(p); ++i) {
    Perm perm(static_cast<std::size_t>(p), -1);
    for (int j = 0; j < p; ++j)
      if ((i ^ j) < p) perm[static_cast<std::size_t>(j)] = i ^ j;
    s.to.push_back(std::move(perm));
  }
  return s;
}

// Section 5.1. The left half P_0..P_(h-1) of the array are the tournament's players; player x
// stands for P_x and its mirror P_(k-x-1). A match (x, y) of a round gives the cycle
// P_x -> P_y -> P_(k-x-1) -> P_(k-y-1) -> P_x and its reverse: two permutations per round, each
// putting load 1 on the links between P_x and P_(k-x-1), so k/4 on the middle link.
// What remains are the mirror pairs P_x <-> P_(k-x-1):
//   k = 4i:     two final permutations, the outer pairs (x < k/4) then the inner ones, load k/4;
//   k = 4i + 2: a dummy player; x's mirror exchange happens in the round where x meets the dummy
//               (load ceil(k/4) in that round's first permutation, floor(k/4) in the second);
//   k odd:      the middle processor P_m, m = (k-1)/2, is its own mirror and plays too; when x
//               meets it, the 3-cycles P_x -> P_m -> P_(k-x-1) -> P_x and P_x -> P_(k-x-1) ->
//               P_m -> P_x carry all six messages of the three. For k = 4i + 1 the players need
//               a dummy as well, which gives k + 1 permutations.
// Finally each P_a gets its stay a -> a in the first permutation where it is idle (a permutation
// of stays only is appended when there is none, k = 4i + 3), so that every ordered pair including
// (a, a) occurs exactly once: the property the cross product for meshes needs.
Schedule balanced_schedule(int k) {
  Schedule s{k, {}, {}};
  if (k <= 0) return s;
  const int h = k / 2;
  const int mid = k % 2 ? h : -1;
  int players = h + (k % 2);
  const int dummy = players % 2 ? players : -1;
  if (dummy >= 0) ++players;
  auto m = [k](int x) { return k - x - 1; };  // the mirror of P_x
  const auto uk = static_cast<std::size_t>(k);
  for (const auto& round : tournament(players)) {
    Perm a(uk, -1), b(uk, -1);
    for (auto [x, y] : round) {  // x < y; left players < mid < dummy
      if (x == mid && y == dummy) continue;
      if (y == dummy) {
        if (mid < 0) add_cycle(a, {x, m(x)});  // k odd: x's mirror pair travels with P_m
      } else if (y == mid) {
        add_cycle(a, {x, mid, m(x)});
        add_cycle(b, {x, m(x), mid});
      } else {
        add_cycle(a, {x, y, m(x), m(y)});
        add_cycle(b, {x, m(y), m(x), y});
      }
    }
    s.to.push_back(std::move(a));
    s.to.push_back(std::move(b));
  }
  if (mid < 0 && dummy < 0) {  // k = 4i: the mirror pairs in two final permutations
    Perm outer(uk, -1), inner(uk, -1);
    for (int x = 0; x < h; ++x) add_cycle(x < k / 4 ? outer : inner, {x, m(x)});
    s.to.push_back(std::move(outer));
    s.to.push_back(std::move(inner));
  }
  std::erase_if(s.to, [](const Perm& perm) { return !has_moves(perm); });
  // The stays.
  for (int x = 0; x < k; ++x) {
    const auto ux = static_cast<std::size_t>(x);
    auto idle = std::find_if(s.to.begin(), s.to.end(), [&](const Perm& perm) {
      return perm[ux] < 0 && std::find(perm.begin(), perm.end(), x) == perm.end();
    });
    if (idle == s.to.end()) {
      s.to.emplace_back(uk, -1);
      idle = s.to.end() - 1;
    }
    (*idle)[ux] = x;
  }
  return s;
}

// Section 5.1: "Pi_i x Pi'_j gives the p balanced permutations": processor (a, b) sends to
// (Pi_i(a), Pi'_j(b)). Under XY routing the row links carry Pi'_j and the column links Pi_i.
Schedule balanced_schedule(const std::vector<int>& dims) {
  if (dims.empty()) return {};
  Schedule s = balanced_schedule(dims[0]);
  for (std::size_t d = 1; d < dims.size(); ++d) {
    const Schedule f = balanced_schedule(dims[d]);
    const int n = f.p;
    Schedule x{s.p * n, {}, {}};
    for (const auto& pi : s.to)
      for (const auto& pj : f.to) {
        Perm perm(static_cast<std::size_t>(x.p), -1);
        for (int a = 0; a < s.p; ++a)
          for (int b = 0; b < n; ++b) {
            const int ta = pi[static_cast<std::size_t>(a)], tb = pj[static_cast<std::size_t>(b)];
            if (ta >= 0 && tb >= 0) perm[static_cast<std::size_t>(a * n + b)] = ta * n + tb;
          }
        x.to.push_back(std::move(perm));
      }
    s = std::move(x);
  }
  if (dims.size() > 1) std::erase_if(s.to, [](const Perm& perm) { return !has_moves(perm); });
  return s;
}

std::string check_partition(const Schedule& s, bool stays_once) {
  const auto up = static_cast<std::size_t>(s.p);
  std::vector<int> seen(up * up, 0);
  for (std::size_t k = 0; k < s.to.size(); ++k) {
    const auto& perm = s.to[k];
    if (perm.size() != up) return fmt::format("permutation {} has {} entries, expected {}", k, perm.size(), s.p);
    std::vector<int> hit(up, -1);
    for (std::size_t i = 0; i < up; ++i) {
      const int t = perm[i];
      if (t < -1 || t >= s.p) return fmt::format("permutation {}: P_{} sends to {}, out of range", k, i, t);
      if (t < 0) continue;
      if (hit[static_cast<std::size_t>(t)] >= 0)
        return fmt::format("permutation {}: P_{} receives from both P_{} and P_{}", k, t, hit[static_cast<std::size_t>(t)], i);
      hit[static_cast<std::size_t>(t)] = static_cast<int>(i);
      ++seen[i * up + static_cast<std::size_t>(t)];
    }
  }
  for (std::size_t i = 0; i < up; ++i)
    for (std::size_t j = 0; j < up; ++j) {
      if (i == j && !stays_once) continue;
      if (seen[i * up + j] != 1) return fmt::format("P_{} -> P_{} occurs {} times", i, j, seen[i * up + j]);
    }
  return {};
}

Loads schedule_loads(const Schedule& s, const Topology& topology, std::span<const int> world_ranks) {
  if (!world_ranks.empty() && static_cast<int>(world_ranks.size()) != s.p)
    throw UsageError(fmt::format("schedule_loads: {} world ranks for a schedule of {} processors", world_ranks.size(), s.p));
  if (world_ranks.empty() && s.p > topology.nodes())
    throw UsageError(fmt::format("schedule_loads: a schedule of {} processors on {} nodes", s.p, topology.nodes()));
  auto node = [&](int i) { return world_ranks.empty() ? i : world_ranks[static_cast<std::size_t>(i)]; };
  Loads out;
  std::vector<int> count(topology.link_channels(), 0);
  std::vector<LinkId> path, touched;
  for (const auto& perm : s.to) {
    int load = 0;
    for (int i = 0; i < s.p; ++i) {
      const int t = perm[static_cast<std::size_t>(i)];
      if (t < 0 || t == i) continue;
      path.clear();
      topology.route(node(i), node(t), path);
      for (LinkId l : path) {
        if (count[l]++ == 0) touched.push_back(l);
        load = std::max(load, count[l]);
      }
    }
    for (LinkId l : touched) count[l] = 0;
    touched.clear();
    out.per_permutation.push_back(load);
    out.max_load = std::max(out.max_load, load);
    out.sum_load += load;
  }
  return out;
}

void add_inverse(Schedule& s) {
  s.from.assign(s.to.size(), std::vector<int>(static_cast<std::size_t>(s.p), -1));
  for (std::size_t k = 0; k < s.to.size(); ++k)
    for (int i = 0; i < s.p; ++i)
      if (const int t = s.to[k][static_cast<std::size_t>(i)]; t >= 0) s.from[k][static_cast<std::size_t>(t)] = i;
}

const Schedule& shared_schedule(const std::string& kind, const std::vector<int>& shape) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::vector<int>>, std::unique_ptr<const Schedule>> cache;
  std::lock_guard lk(mu);
  auto& slot = cache[{kind, shape}];
  if (!slot) {
    int p = 1;
    for (int d : shape) p *= d;
    Schedule s;
    if (kind == "linear") s = linear_schedule(p);
    else if (kind == "xor") s = xor_schedule(p);
    else if (kind == "balanced") s = balanced_schedule(shape);
    else throw UsageError(fmt::format("unknown permutation schedule '{}' (linear, xor or balanced)", kind));
    add_inverse(s);
    slot = std::make_unique<const Schedule>(std::move(s));
  }
  return *slot;
}

// Section 5.1: "the p(p - 1) message routing requests are partitioned into permutations", routed
// one after the other: in each, a processor receives from the one that sends to it and sends to
// its own partner, and moves on when both are complete.
void alltoall_by_schedule(Proc& p, const Group& g, const Schedule& s, std::span<const std::byte> send,
                          std::span<std::byte> recv, std::size_t size) {
  const int n = g.size(), me = g.local_rank(p.rank());
  if (s.p != n) throw UsageError(fmt::format("a schedule of {} processors run on a group of {}", s.p, n));
  copy_own_block(p, me, send, recv, size);
  for (std::size_t k = 0; k < s.to.size(); ++k) {
    const auto& perm = s.to[k];
    int from = -1;
    if (!s.from.empty()) from = s.from[k][static_cast<std::size_t>(me)];
    else
      for (int i = 0; i < n && from < 0; ++i)
        if (perm[static_cast<std::size_t>(i)] == me) from = i;
    if (from == me) from = -1;
    const int to = perm[static_cast<std::size_t>(me)];
    const bool sends = to >= 0 && to != me;
    // Made in place (receive first: a braced list is evaluated in order), not assigned from a
    // temporary; an unused one stays inactive, and waitall passes over inactive requests.
    Request reqs[2] = {from >= 0 ? p.irecv(from, kExchangeTag, block(recv, from, size), g) : Request(),
                       sends ? p.isend(to, kExchangeTag, block(send, to, size), g) : Request()};
    if (from >= 0 || sends) p.waitall(reqs, {});  // statuses not needed: none allocated
  }
}

}  // namespace touchstone::algorithms
