// Paper 000 (Hambrusch, Hameed, Khokhar), section 3: one-to-all communication, the algorithms of
// Figure 1. Every k-level algorithm is the same superstep applied to a partition: the source
// combines the blocks of each submachine into one long message, sends it to the submachine's
// leader (section 3.2: "higher priority to destinations further away"), and every submachine
// continues on its own with a lower-level algorithm.
#include "families.hpp"
#include "scatter.hpp"

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

// What one processor knows while a one-to-all runs. Sends are non-blocking (Figure 2 reports
// non-blocking sends) and are completed once, at the end; their long messages live until then.
struct Scatter {
  Proc& p;
  Group g;
  Grid grid;
  int me;
  std::size_t size;
  std::span<std::byte> recv;
  std::vector<Request> sends;
  std::vector<Blocks> messages;

  Scatter(Proc& proc, const Group& group, std::span<std::byte> r, std::size_t L)
      : p(proc), g(resolve(proc, group)), grid(grid_of(proc, g)),
        me(g.local_rank(proc.rank())), size(L), recv(r) {}

  void keep_own(const BlockView& data) {
    copy_charged(p, [&](Copier& copy) { copy(recv.first(size), data.at(me)); });
  }
  void finish() { p.waitall(sends); }
};

void check_args(const char* name, const Proc& p, const Group& g, int root, std::span<const std::byte> send,
                std::span<std::byte> recv, std::size_t size) {
  check_rooted_args(name, p, g, root, recv.size(), "receive", send.size(), "send", size);
}

// The superstep of every k-level one-to-all (Figure 1, "sends one long message to each leader"):
// `holder` holds the blocks of all parts; it combines the blocks of every other part into one long
// message and sends it to that part's leader, farthest leader first. Then every processor goes
// on in its own part `mine`, whose leader now holds the part's blocks (the holder leads its own):
// `inner(part, data)` continues in the part on its own, `data` set on the processor holding its
// blocks. A template, not a std::function: every processor makes one per level of a recursion
// (logp-lev-sq: 16 on 65,536 VPs), and a std::function of its captures is an allocation each.
//
// The holder and the leaders exchange in a function of their own, not inlined: its lists and
// requests would otherwise sit in the frame of every level of the recursive algorithms on every
// processor, a stack page more per VP over log2 p levels. It returns where the leader's part's
// blocks are now (`view`, the long message it received, lives in the caller's frame).
[[gnu::noinline]] const BlockView* leaders_superstep(Scatter& s, int holder, const BlockView* data,
                                                    const PerPart<Part>& parts, const PerPart<int>& leaders,
                                                    int mine, std::optional<BlockView>& view) {
  std::vector<int> team_ranks{holder};
  for (int l : leaders)
    if (l != holder) team_ranks.push_back(l);
  const Team team(s.p, s.g, team_ranks);
  if (s.me == holder) {
    std::vector<int> others(team_ranks.begin() + 1, team_ranks.end());
    for (int leader : farthest_first(s.p, s.g, others)) {
      const auto i = static_cast<std::size_t>(std::find(leaders.begin(), leaders.end(), leader) - leaders.begin());
      s.messages.push_back(combine(s.p, *data, parts[i].members(s.grid)));
      s.sends.push_back(team.isend(leader, s.messages.back().bytes()));
    }
    return data;
  }
  // The long message received is kept with the sent ones: the sends of the lower levels read
  // their blocks from it until they complete, at the end (docs/model.md 1.5).
  s.messages.emplace_back(parts[static_cast<std::size_t>(mine)].members(s.grid), s.size);
  Request r = team.irecv(holder, s.messages.back().bytes());
  s.p.wait(r);
  view = s.messages.back().view();  // its bytes stay where they are when the vector grows
  return &*view;
}

template <class Inner>
void via_leaders(Scatter& s, int holder, const BlockView* data, const PerPart<Part>& parts,
                 const PerPart<int>& leaders, int mine, const Inner& inner) {
  std::optional<BlockView> view;
  const bool in_team = s.me == holder || s.me == leaders[static_cast<std::size_t>(mine)];
  if (in_team && parts.size() > 1) data = leaders_superstep(s, holder, data, parts, leaders, mine, view);
  inner(mine, s.me == leaders[static_cast<std::size_t>(mine)] ? data : nullptr);
}

// Algorithm 1-lev-dir(p): "The source processor issues p-1 sends, one to each distinct destination."
void one_level_dir(Scatter& s, const Part& part, int holder, const BlockView* data) {
  if (part.size() == 1) {
    s.keep_own(*data);
    return;
  }
  const Team team(s.p, s.g, s.grid, part);
  if (s.me == holder) {
    std::vector<int> others;
    for (int r : part.members(s.grid))
      if (r != holder) others.push_back(r);
    for (int dst : farthest_first(s.p, s.g, others)) s.sends.push_back(team.isend(dst, data->at(dst)));
    s.keep_own(*data);
  } else {
    Request r = team.irecv(holder, s.recv.first(s.size));
    s.p.wait(r);
  }
}

// Algorithm 2-lev-rec(p): "1. The source processor prepares p^(1/2)-1 long messages, each
// containing p^(1/2) messages, and sends one long message to each processor in its column.
// 2. A processor that received a long message, applies Algorithm 1-lev-dir(p^(1/2)) within its row."
void two_lev_rec(Scatter& s, const Submachine& m, int holder, const BlockView* data) {
  const auto rows = split_rows(m);
  const auto parts = parts_of(rows);
  PerPart<int> leaders;
  for (const auto& row : rows) leaders.push_back(in_column_of(s.grid, row, holder));
  via_leaders(s, holder, data, parts, leaders, part_of(s.grid, rows, s.me),
              [&](int i, const BlockView* d) { one_level_dir(s, parts[static_cast<std::size_t>(i)], leaders[static_cast<std::size_t>(i)], d); });
}

// Algorithm 3-lev-sq(p): "1. The machine is partitioned into p^(1/2) square submachines. 2. The
// source processor ... sends one long message to each leader processor in the submachine.
// 3. Each submachine applies Algorithm 2-lev-rec(p^(1/2))." Leaders sit in the source's row and
// column of their submachine, so the source sends nothing inside its own submachine twice.
void three_lev_sq(Scatter& s, const Submachine& m, int holder, const BlockView* data) {
  const auto squares = split_squares(m);
  const auto parts = parts_of(squares);
  const auto leaders = leaders_for(s.grid, squares, holder);
  via_leaders(s, holder, data, parts, leaders, part_of(s.grid, squares, s.me), [&](int i, const BlockView* d) {
    two_lev_rec(s, squares[static_cast<std::size_t>(i)], leaders[static_cast<std::size_t>(i)], d);
  });
}

// Algorithm logp-lev-sq(p): "1. The machine is partitioned into 2 submachines, alternating
// partitions along the columns and rows. 2. The source processor concatenates p/2 messages into
// one long message and sends the long message to the leader processor in the other submachine.
// 3. Each submachine applies Algorithm logp-lev-sq(p/2)."
//
// A processor that neither holds the blocks nor leads its half does nothing at a level but go on in
// its half: it goes down such levels in the loop, and only the levels it acts in keep a frame on
// its stack (on 65,536 VPs about 2 of the 16 on average: two stack pages fewer per VP, each a
// fault; docs/performance.md, "65,536 VPs"). The same calls are made in the same order.
void logp_lev_sq(Scatter& s, Submachine m, int holder, const BlockView* data) {
  for (; m.size() > 1;) {
    const auto halves = split_halves(m);
    const auto leaders = leaders_for(s.grid, halves, holder);
    const auto mine = static_cast<std::size_t>(part_of(s.grid, halves, s.me));
    if (s.me == holder || s.me == leaders[mine]) {
      via_leaders(s, holder, data, parts_of(halves), leaders, static_cast<int>(mine), [&](int i, const BlockView* d) {
        logp_lev_sq(s, halves[static_cast<std::size_t>(i)], leaders[static_cast<std::size_t>(i)], d);
      });
      return;
    }
    m = halves[mine];
    holder = leaders[mine];
    data = nullptr;
  }
  s.keep_own(*data);
}

// Algorithm logp-lev-rec(p, gamma): "1. The machine is partitioned into 2 submachines, one
// containing gamma p processors including the source processor, and the other containing
// (1-gamma)p processors. 2. The source processor concatenates (1-gamma)p messages into one long
// message and sends it to the leader processor in the other submachine. 3. [Both recurse.]"
// Submachines are runs [lo, hi) of the snake-like row-major order (section 3.2).
// A processor that neither holds nor leads at a level goes on in its part in the loop, as in
// logp_lev_sq.
void logp_lev_rec(Scatter& s, int lo, int hi, int holder, const BlockView* data, double gamma) {
  for (; hi - lo > 1;) {
    const SnakeLevel level = snake_level(s.grid, lo, hi, holder, s.me, gamma);
    const auto mine = static_cast<std::size_t>(level.mine);
    if (s.me == holder || s.me == level.leaders[mine]) {
      via_leaders(s, holder, data, level.parts, level.leaders, level.mine, [&](int i, const BlockView* d) {
        const auto part = static_cast<std::size_t>(i);
        logp_lev_rec(s, level.parts[part].lo, level.parts[part].hi, level.leaders[part], d, gamma);
      });
      return;
    }
    lo = level.parts[mine].lo;
    hi = level.parts[mine].hi;
    holder = level.leaders[mine];
    data = nullptr;
  }
  s.keep_own(*data);
}

std::vector<int> all_but(int n, int skip) {
  std::vector<int> out;
  for (int r = 0; r < n; ++r)
    if (r != skip) out.push_back(r);
  return out;
}

}  // namespace

void scatter_1lev_dir(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                      std::size_t size) {
  check_args("scatter/1-lev-dir", p, g, root, send, recv, size);
  Scatter s(p, g, recv, size);
  const BlockView all = s.me == root ? BlockView::all(s.g.size(), send, size) : BlockView();
  one_level_dir(s, Part::of(whole(s.grid)), root, &all);
  s.finish();
}

// Algorithm 1-lev-sys-br(p): "The source processor concatenates the p-1 messages into one long
// message which is broadcast. 2. Each processor extracts its message from the long message."
// What the paper says of the system's broadcast (section 3.2): it runs on the data network ("the
// absence of a dedicated fast broadcasting network in the Delta"), "the effective message size ...
// remains Lp throughout", and it performs "significantly worse than our own broadcast" (the
// binomial heap of 1-lev-our-br). The paper does not say how NX forwards it; we model the plainest
// broadcast a system can run on a mesh's data network: store-and-forward along nearest-neighbour
// links, out along the source's row in both directions and from every node of that row out along
// its column in both directions, each node receiving the whole long message before it forwards it
// (farther subtree first: the row before the column). On a 16 x 16 mesh with a corner source the
// last node is 30 forwards deep, against the binomial heap's 8, so the system broadcast is several
// times slower than 1-lev-our-br, as the paper reports, without being p-1 sends from one node.
void scatter_1lev_sys_br(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                         std::size_t size) {
  check_args("scatter/1-lev-sys-br", p, g, root, send, recv, size);
  Scatter s(p, g, recv, size);
  const int n = s.g.size();
  if (n == 1) {
    s.keep_own(BlockView::all(n, send, size));
    return;
  }
  const auto others = all_but(n, root);
  const Grid& grid = s.grid;
  const int r0 = grid.row_of(root), c0 = grid.col_of(root), r = grid.row_of(s.me), c = grid.col_of(s.me);
  auto step_toward = [](int from, int to) { return from + (to > from ? 1 : -1); };
  std::optional<Blocks> held;
  if (s.me == root) {
    held = combine(p, BlockView::all(n, send, size), others);
    s.keep_own(BlockView::all(n, send, size));
  } else {
    held.emplace(others, size);
    // The parent: the next node toward the source along the column, or along the source's row.
    const int parent = r != r0 ? grid.rank(step_toward(r, r0), c) : grid.rank(r0, step_toward(c, c0));
    p.recv(parent, 0, held->bytes(), s.g);
    s.keep_own(held->view());
  }
  // The children: onward along the source's row (both ways from the source), then onward along the
  // column (both ways from the row), larger subtrees first.
  std::vector<std::pair<int, int>> children;  // (subtree size, rank)
  if (r == r0) {
    if (c >= c0 && c + 1 < grid.cols) children.emplace_back((grid.cols - 1 - c) * grid.rows, grid.rank(r, c + 1));
    if (c <= c0 && c > 0) children.emplace_back(c * grid.rows, grid.rank(r, c - 1));
  }
  if (r >= r0 && r + 1 < grid.rows) children.emplace_back(grid.rows - 1 - r, grid.rank(r + 1, c));
  if (r <= r0 && r > 0) children.emplace_back(r, grid.rank(r - 1, c));
  std::stable_sort(children.begin(), children.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [subtree, child] : children) s.sends.push_back(p.isend(child, 0, held->bytes(), s.g));
  s.finish();  // before `held` goes away
}

// Algorithm 1-lev-our-br(p): the long message of 1-lev-sys-br broadcast along a binomial heap:
// in ranks relative to the source, processor r receives from r minus its lowest set bit and sends
// to r + 2^j for every 2^j below that bit, the largest subtree first (for a corner source these are
// also the farthest destinations first).
void scatter_1lev_our_br(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                         std::size_t size) {
  check_args("scatter/1-lev-our-br", p, g, root, send, recv, size);
  Scatter s(p, g, recv, size);
  const int n = s.g.size(), rel = (s.me - root + n) % n;
  const auto others = all_but(n, root);
  std::optional<Blocks> held;
  int span = ceil_pow2(n);
  if (rel == 0) {
    held = combine(p, BlockView::all(n, send, size), others);
    s.keep_own(BlockView::all(n, send, size));
  } else {
    span = rel & -rel;
    held.emplace(others, size);
    p.recv((rel - span + root) % n, 0, held->bytes(), s.g);
    s.keep_own(held->view());
  }
  for (int m = span / 2; m >= 1; m /= 2)
    if (rel + m < n) s.sends.push_back(p.isend((rel + m + root) % n, 0, held->bytes(), s.g));
  s.finish();  // before `held` goes away
}

namespace {
// The k-level one-to-alls share their frame: check, the root's view of all blocks, the first
// superstep on the whole machine, and completing the sends.
template <class Step>
void run_scatter(const char* name, Proc& p, const Group& g, int root, std::span<const std::byte> send,
                 std::span<std::byte> recv, std::size_t size, Step&& step) {
  check_args(name, p, g, root, send, recv, size);
  Scatter s(p, g, recv, size);
  const BlockView all = s.me == root ? BlockView::all(s.g.size(), send, size) : BlockView();
  step(s, &all);
  s.finish();
}
}  // namespace

void scatter_2lev_rec(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                      std::size_t size) {
  run_scatter("scatter/2-lev-rec", p, g, root, send, recv, size,
              [&](Scatter& s, const BlockView* all) { two_lev_rec(s, whole(s.grid), root, all); });
}

void scatter_3lev_sq(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::size_t size) {
  run_scatter("scatter/3-lev-sq", p, g, root, send, recv, size,
              [&](Scatter& s, const BlockView* all) { three_lev_sq(s, whole(s.grid), root, all); });
}

void scatter_logp_lev_sq(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                         std::size_t size) {
  run_scatter("scatter/logp-lev-sq", p, g, root, send, recv, size,
              [&](Scatter& s, const BlockView* all) { logp_lev_sq(s, whole(s.grid), root, all); });
}

void scatter_logp_lev_rec(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                          std::size_t size, double gamma) {
  // Section 3.1: "since data cannot be received faster than it is sent out, a value of gamma < 0.5
  // cannot give a better performance for one-to-all communication."
  if (!(gamma >= 0.5 && gamma < 1.0))
    throw UsageError(fmt::format("scatter/logp-lev-rec: gamma must satisfy 0.5 <= gamma < 1 (paper 000, section 3.1), got {}", gamma));
  run_scatter("scatter/logp-lev-rec", p, g, root, send, recv, size, [&](Scatter& s, const BlockView* all) {
    logp_lev_rec(s, 0, s.g.size(), root, all, gamma);
  });
}

Algorithm scatter_logp_lev_rec_entry(double gamma) {
  const bool is_default = gamma == kScatterGamma;
  return scatter_entry(is_default ? "scatter/logp-lev-rec" : fmt::format("scatter/logp-lev-rec({})", gamma),
                       fmt::format("two snake-order submachines of gamma = {} and 1 - gamma, recursively (paper 000, sec. 3.2, Fig. 1)", gamma),
                       [gamma](Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                               std::size_t size) { scatter_logp_lev_rec(p, g, root, send, recv, size, gamma); });
}

void add_scatter_algorithms(Catalog& c) {
  c.push_back(scatter_entry("scatter/1-lev-dir", "p-1 direct sends from the source, farthest first (paper 000, sec. 3, Fig. 1)",
                            scatter_1lev_dir));
  c.push_back(scatter_entry("scatter/1-lev-sys-br", "one long message, system broadcast store-and-forward along the source's row, then columns (paper 000, sec. 3.2)",
                            scatter_1lev_sys_br, true));
  c.push_back(scatter_entry("scatter/1-lev-our-br", "one long message, binomial-heap broadcast tree (paper 000, Fig. 1)",
                            scatter_1lev_our_br, true));
  c.push_back(scatter_entry("scatter/2-lev-rec", "long messages down the source's column, 1-lev-dir in rows (paper 000, Fig. 1)",
                            scatter_2lev_rec));
  c.push_back(scatter_entry("scatter/3-lev-sq", "long messages to sqrt(p) square submachines, 2-lev-rec in each (paper 000, Fig. 1)",
                            scatter_3lev_sq));
  c.push_back(scatter_entry("scatter/logp-lev-sq", "halves by alternating vertical and horizontal cuts (paper 000, Fig. 1)",
                            scatter_logp_lev_sq));
  c.push_back(scatter_logp_lev_rec_entry(kScatterGamma));
  c.add_family("scatter/logp-lev-rec(", [](const std::string& name, const std::string& param) {
    return scatter_logp_lev_rec_entry(
        parse_real_param(name, param, true, 0.5, 1.0, "gamma must satisfy 0.5 <= gamma < 1 (paper 000, section 3.1)"));
  });
}

}  // namespace touchstone::algorithms
