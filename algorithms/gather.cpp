// Paper 000 (Hambrusch, Hameed, Khokhar), section 4: all-to-one communication. "All one-to-all
// algorithms, except the algorithms based on broadcasting, have corresponding all-to-one
// algorithms": the same partitions as scatter.cpp, with every superstep reversed. A submachine
// first gathers to its leader with a lower-level algorithm; the leader combines the blocks it
// collected into one long message and sends it to the destination.
#include "families.hpp"
#include "gather.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "combine.hpp"
#include "common.hpp"
#include "harness.hpp"
#include "submachine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {

// What one processor knows while an all-to-one runs. Sends are non-blocking (Figure 6 reports
// non-blocking sends) and are completed once, at the end; their long messages live until then.
struct Gather {
  Proc& p;
  Group g;
  Grid grid;
  int me;
  std::size_t size;
  std::span<const std::byte> mine;  // this processor's block
  std::vector<Request> sends;
  std::vector<Blocks> messages;

  Gather(Proc& proc, const Group& group, std::span<const std::byte> send, std::size_t L)
      : p(proc), g(resolve(proc, group)), grid(grid_of(proc, g)),
        me(g.local_rank(proc.rank())), size(L), mine(send.first(L)) {}

  Blocks own() const {
    Blocks b({me}, size);
    copy_charged(p, [&](Copier& copy) { copy(b.at(me), mine); });
    return b;
  }
  void finish() { p.waitall(sends); }
};

void check_args(const char* name, const Proc& p, const Group& g, int root, std::span<const std::byte> send,
                std::span<std::byte> recv, std::size_t size) {
  check_rooted_args(name, p, g, root, send.size(), "send", recv.size(), "receive", size);
}

// The superstep of every k-level all-to-one, reversed from scatter.cpp: every part gathers to its
// leader with `inner` (the destination leads its own part), and each other leader sends its part's
// blocks to `dest` as one long message. The destination posts its receives for the long messages
// first, so that they land while it collects its own part. `inner(part)` gathers the part on its
// own and returns its blocks on the part's leader (a template, as in scatter.cpp).
//
// The destination's part is a function of its own, not inlined: its lists and requests would
// otherwise sit in the frame of every level of the recursive algorithms on every processor, several
// stack pages per VP at log2 p levels.
template <class Inner>
[[gnu::noinline]] Blocks collect_at_destination(Gather& s, const PerPart<Part>& parts, const PerPart<int>& leaders,
                                                int mine, const Team* team, const Inner& inner) {
  std::vector<Blocks> got;
  std::vector<Request> reqs;
  got.reserve(parts.size());
  std::vector<int> all;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::vector<int> members = parts[i].members(s.grid);
    all.insert(all.end(), members.begin(), members.end());
    if (static_cast<int>(i) == mine) continue;
    got.emplace_back(std::move(members), s.size);
    reqs.push_back(team->irecv(leaders[i], got.back().bytes()));
  }
  std::optional<Blocks> own = inner(mine);
  Blocks out(std::move(all), s.size);
  extract(s.p, own->view(), out);
  s.p.waitall(reqs);
  for (const Blocks& b : got) extract(s.p, b.view(), out);
  return out;
}

template <class Inner>
std::optional<Blocks> via_leaders(Gather& s, int dest, const PerPart<Part>& parts,
                                  const PerPart<int>& leaders, int mine, const Inner& inner) {
  const int leader = leaders[static_cast<std::size_t>(mine)];
  std::optional<Team> team;
  if ((s.me == dest || s.me == leader) && parts.size() > 1) {
    std::vector<int> team_ranks{dest};
    for (int l : leaders)
      if (l != dest) team_ranks.push_back(l);
    team.emplace(s.p, s.g, team_ranks);
  }
  if (s.me == dest) return collect_at_destination(s, parts, leaders, mine, team ? &*team : nullptr, inner);
  std::optional<Blocks> own = inner(mine);
  if (s.me == leader && team) {
    s.messages.push_back(std::move(*own));
    s.sends.push_back(team->isend(dest, s.messages.back().bytes()));
  }
  return std::nullopt;
}

// Algorithm 1-lev-dir for all-to-one: "every processor issues a send to processor P_d (and P_d
// issues p - 1 receives)".
std::optional<Blocks> one_level_dir(Gather& s, const Part& part, int dest) {
  if (part.size() == 1) return s.own();
  const Team team(s.p, s.g, s.grid, part);
  if (s.me != dest) {
    s.sends.push_back(team.isend(dest, s.mine));
    return std::nullopt;
  }
  const std::vector<int> members = part.members(s.grid);
  Blocks out(members, s.size);
  copy_charged(s.p, [&](Copier& copy) { copy(out.at(s.me), s.mine); });
  std::vector<Request> reqs;
  for (int src : members)
    if (src != dest) reqs.push_back(team.irecv(src, out.at(src)));
  s.p.waitall(reqs);
  return out;
}

// 2-lev-rec reversed: every row gathers to its processor in the destination's column with
// 1-lev-dir, then those processors send one long message each to the destination.
std::optional<Blocks> two_lev_rec(Gather& s, const Submachine& m, int dest) {
  const auto rows = split_rows(m);
  const auto parts = parts_of(rows);
  PerPart<int> leaders;
  for (const auto& row : rows) leaders.push_back(in_column_of(s.grid, row, dest));
  return via_leaders(s, dest, parts, leaders, part_of(s.grid, rows, s.me), [&](int i) {
    return one_level_dir(s, parts[static_cast<std::size_t>(i)], leaders[static_cast<std::size_t>(i)]);
  });
}

// 3-lev-sq reversed: about p^(1/2) square submachines gather with 2-lev-rec to their leaders, the
// processors in the destination's row and column of their submachine.
std::optional<Blocks> three_lev_sq(Gather& s, const Submachine& m, int dest) {
  const auto squares = split_squares(m);
  const auto parts = parts_of(squares);
  const auto leaders = leaders_for(s.grid, squares, dest);
  return via_leaders(s, dest, parts, leaders, part_of(s.grid, squares, s.me), [&](int i) {
    return two_lev_rec(s, squares[static_cast<std::size_t>(i)], leaders[static_cast<std::size_t>(i)]);
  });
}

// logp-lev-sq reversed: "partitioning the mesh into two submachines by alternating horizontal
// and vertical cuts" (section 4); each half gathers recursively.
//
// A processor that is neither the destination nor its half's leader does nothing at a level but
// go on in its half, and its half's gather returns it nothing (only a destination gets blocks):
// it goes down such levels in the loop, and only the levels it acts in keep a frame on its stack.
// On 65,536 VPs that is about 2 of the 16 levels on average, two stack pages fewer per VP, each a
// fault (docs/performance.md, "65,536 VPs"). The same calls are made in the same order.
std::optional<Blocks> logp_lev_sq(Gather& s, Submachine m, int dest) {
  for (; m.size() > 1;) {
    const auto halves = split_halves(m);
    const auto leaders = leaders_for(s.grid, halves, dest);
    const auto mine = static_cast<std::size_t>(part_of(s.grid, halves, s.me));
    if (s.me == dest || s.me == leaders[mine])
      return via_leaders(s, dest, parts_of(halves), leaders, static_cast<int>(mine), [&](int i) {
        return logp_lev_sq(s, halves[static_cast<std::size_t>(i)], leaders[static_cast<std::size_t>(i)]);
      });
    m = halves[mine];
    dest = leaders[mine];
  }
  return s.own();
}

// logp-lev-rec(gamma) reversed, on runs [lo, hi) of the snake-like row-major order. Section 4:
// for gamma < 0.5 the destination may lie in neither the first nor the last gamma p processors;
// then "one submachine contains the first d-1 processors and executes an all-to-one communication
// with P_(d-1) as destination. The remaining processors belong to the second submachine and they
// continue with P_d as the destination" (gamma_cut; this happens at most once).
// A processor that neither receives nor leads at a level goes on in its part in the loop, as in
// logp_lev_sq.
std::optional<Blocks> logp_lev_rec(Gather& s, int lo, int hi, int dest, double gamma) {
  for (; hi - lo > 1;) {
    const SnakeLevel level = snake_level(s.grid, lo, hi, dest, s.me, gamma);
    const auto mine = static_cast<std::size_t>(level.mine);
    if (s.me == dest || s.me == level.leaders[mine])
      return via_leaders(s, dest, level.parts, level.leaders, level.mine, [&](int i) {
        const auto part = static_cast<std::size_t>(i);
        return logp_lev_rec(s, level.parts[part].lo, level.parts[part].hi, level.leaders[part], gamma);
      });
    lo = level.parts[mine].lo;
    hi = level.parts[mine].hi;
    dest = level.leaders[mine];
  }
  return s.own();
}

// Runs one algorithm and leaves the root's blocks in recv.
template <class Algo>
void run_gather(const char* name, Proc& p, const Group& g, int root, std::span<const std::byte> send,
                std::span<std::byte> recv, std::size_t size, Algo algo) {
  check_args(name, p, g, root, send, recv, size);
  Gather s(p, g, send, size);
  std::optional<Blocks> all = algo(s);
  if (s.me == root) extract(p, all->view(), recv);
  s.finish();
}

}  // namespace

void gather_1lev_dir(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::size_t size) {
  run_gather("gather/1-lev-dir", p, g, root, send, recv, size,
             [&](Gather& s) { return one_level_dir(s, Part::of(whole(s.grid)), root); });
}

void gather_2lev_rec(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::size_t size) {
  run_gather("gather/2-lev-rec", p, g, root, send, recv, size, [&](Gather& s) { return two_lev_rec(s, whole(s.grid), root); });
}

void gather_3lev_sq(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                    std::size_t size) {
  run_gather("gather/3-lev-sq", p, g, root, send, recv, size, [&](Gather& s) { return three_lev_sq(s, whole(s.grid), root); });
}

void gather_logp_lev_sq(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                        std::size_t size) {
  run_gather("gather/logp-lev-sq", p, g, root, send, recv, size, [&](Gather& s) { return logp_lev_sq(s, whole(s.grid), root); });
}

void gather_logp_lev_rec(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                         std::size_t size, double gamma) {
  if (!(gamma > 0.0 && gamma < 1.0))
    throw UsageError(fmt::format("gather/logp-lev-rec: gamma must satisfy 0 < gamma < 1 (paper 000, section 4), got {}", gamma));
  run_gather("gather/logp-lev-rec", p, g, root, send, recv, size,
             [&](Gather& s) { return logp_lev_rec(s, 0, s.g.size(), root, gamma); });
}

Algorithm gather_logp_lev_rec_entry(double gamma) {
  const bool is_default = gamma == kGatherGamma;
  return gather_entry(is_default ? "gather/logp-lev-rec" : fmt::format("gather/logp-lev-rec({})", gamma),
                      fmt::format("two snake-order submachines of gamma = {} and 1 - gamma, recursively (paper 000, sec. 4)", gamma),
                      [gamma](Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                              std::size_t size) { gather_logp_lev_rec(p, g, root, send, recv, size, gamma); });
}

void add_gather_algorithms(Catalog& c) {
  c.push_back(gather_entry("gather/1-lev-dir", "every processor sends to the destination (paper 000, sec. 4)", gather_1lev_dir));
  c.push_back(gather_entry("gather/2-lev-rec", "1-lev-dir in rows, long messages up the destination's column (paper 000, sec. 4)",
                           gather_2lev_rec));
  c.push_back(gather_entry("gather/3-lev-sq", "2-lev-rec in sqrt(p) square submachines, long messages to the destination (paper 000, sec. 4)",
                           gather_3lev_sq));
  c.push_back(gather_entry("gather/logp-lev-sq", "halves by alternating vertical and horizontal cuts (paper 000, sec. 4)",
                           gather_logp_lev_sq));
  c.push_back(gather_logp_lev_rec_entry(kGatherGamma));
  c.add_family("gather/logp-lev-rec(", [](const std::string& name, const std::string& param) {
    return gather_logp_lev_rec_entry(
        parse_real_param(name, param, false, 0.0, 1.0, "gamma must satisfy 0 < gamma < 1 (paper 000, section 4)"));
  });
}

}  // namespace touchstone::algorithms
