// HPAM topology and machine (paper 001, section 2). Link ids: six per node, node * 6 + direction:
// east, west, south, north inside the node's level (unused at the borders, as in grid.cpp), then
// `up` (from a row-0 processor of level l >= 2 to its eq. 1 parent in level l - 1) and `down`
// (from that parent to it). A parent at (r_{l-1} - 1, b) thus has f_l downward channels, one per
// child, which is what lets the inter-level multicast of section 3.1 reach them all at once.
#include "touchstone/topologies/hpam.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone {
namespace {

bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

}  // namespace

Hpam::Hpam(std::vector<std::pair<int, int>> levels) : levels_(std::move(levels)) {
  if (levels_.empty()) throw UsageError("hpam needs at least one level, e.g. hpam:1x1/16x16");
  offset_.push_back(0);
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const auto [r, c] = levels_[l];
    if (r < 1 || c < 1) throw UsageError(fmt::format("hpam: level {} is {}x{}; rows and columns must be at least 1", l + 1, r, c));
    // Eq. 1: "c_{l-1} <= c_l. Furthermore, both parameters are powers of two."
    if (!is_pow2(c)) throw UsageError(fmt::format("hpam: level {} has {} columns; eq. 1 needs a power of two", l + 1, c));
    if (l > 0 && c < levels_[l - 1].second)
      throw UsageError(fmt::format("hpam: level {} has fewer columns ({}) than level {} ({}); eq. 1 needs c_(l-1) <= c_l",
                                   l + 1, c, l, levels_[l - 1].second));
    if (static_cast<long long>(r) * c > (1 << 22) - offset_.back()) throw UsageError("hpam: too large (more than 4M nodes)");
    offset_.push_back(offset_.back() + r * c);
  }
}

std::string Hpam::name() const {
  std::string s = "hpam:";
  for (std::size_t l = 0; l < levels_.size(); ++l) s += fmt::format("{}{}x{}", l ? "/" : "", levels_[l].first, levels_[l].second);
  return s;
}

HpamPos Hpam::pos(int node) const {
  if (node < 0 || node >= nodes()) throw UsageError(fmt::format("hpam: node {} out of range", node));
  int l = 1;
  while (node >= first(l + 1)) ++l;
  const int i = node - first(l);
  return {l, i / cols(l), i % cols(l)};
}

int Hpam::chi(int level_below, int n, int j) const {
  const int f = fanout(level_below);  // eq. 2
  if (n < j * f) return j * f;
  if (n > (j + 1) * f - 1) return (j + 1) * f - 1;
  return n;
}

void Hpam::walk_row(int level, int row, int from_col, int to_col, std::vector<LinkId>& out) const {
  for (int c = from_col; c != to_col; c += (to_col > c ? 1 : -1)) out.push_back(link(node(level, row, c), to_col > c ? east : west));
}

void Hpam::walk_col(int level, int col, int from_row, int to_row, std::vector<LinkId>& out) const {
  for (int r = from_row; r != to_row; r += (to_row > r ? 1 : -1)) out.push_back(link(node(level, r, col), to_row > r ? south : north));
}

void Hpam::route(int src, int dst, std::vector<LinkId>& out) const {
  HpamPos at = pos(src);
  const HpamPos to = pos(dst);
  // Down, one level at a time (eq. 2, first path): (i,j)_l ~> (i, floor(n/f))_l ~> (r_l - 1,
  // floor(n/f))_l -> (0, n)_{l+1}, where n is the column of level l+1 above the destination.
  while (at.level < to.level) {
    const int below = at.level + 1;
    const int n = to.col / (cols(to.level) / cols(below));
    const int b = parent_col(below, n);
    walk_row(at.level, at.row, at.col, b, out);
    walk_col(at.level, b, at.row, rows(at.level) - 1, out);
    out.push_back(link(node(below, 0, n), down));
    at = {below, 0, n};
  }
  // Up, one level at a time (eq. 2, second path): (m,n)_{l+1} ~> (m, chi)_{l+1} ~> (0, chi)_{l+1}
  // -> (r_l - 1, j)_l. Above an intermediate level, j is the column of that level nearest to n
  // among those under the destination's column.
  while (at.level > to.level) {
    const int above = at.level - 1;
    int j = to.col;
    if (above != to.level) {
      const int span = cols(above) / cols(to.level);
      j = std::clamp(parent_col(at.level, at.col), to.col * span, (to.col + 1) * span - 1);
    }
    const int x = chi(at.level, at.col, j);
    walk_row(at.level, at.row, at.col, x, out);
    walk_col(at.level, x, at.row, 0, out);
    out.push_back(link(node(at.level, 0, x), up));
    at = {above, rows(above) - 1, j};
  }
  // Inside the destination's level: X-Y dimension order, along the row first (Figure 3a).
  walk_row(at.level, at.row, at.col, to.col, out);
  walk_col(at.level, to.col, at.row, to.row, out);
}

int Hpam::distance(int src, int dst) const {
  std::vector<LinkId> path;
  route(src, dst, path);
  return static_cast<int>(path.size());
}

std::pair<int, int> Hpam::link_ends(LinkId id) const {
  const int n = static_cast<int>(id / 6);
  const HpamPos p = pos(n);
  switch (static_cast<Dir>(id % 6)) {
    case east: return {n, n + 1};
    case west: return {n, n - 1};
    case south: return {n, n + cols(p.level)};
    case north: return {n, n - cols(p.level)};
    case up: return {n, node(p.level - 1, rows(p.level - 1) - 1, parent_col(p.level, p.col))};
    case down: return {node(p.level - 1, rows(p.level - 1) - 1, parent_col(p.level, p.col)), n};
  }
  return {n, n};
}

void Hpam::replicating_channels(LinkId id, std::vector<LinkId>& out) const {
  if (id % 6 != down) return;
  const HpamPos child = pos(static_cast<int>(id / 6));
  const int f = fanout(child.level), first_child = parent_col(child.level, child.col) * f;
  for (int k = 0; k < f; ++k) out.push_back(link(node(child.level, 0, first_child + k), down));
}

std::string Hpam::pos_name(int node) const {
  const HpamPos p = pos(node);
  return fmt::format("({},{})_{}", p.row, p.col, p.level);
}

std::string Hpam::link_name(LinkId id) const {
  const auto [a, b] = link_ends(id);
  return pos_name(a) + "->" + pos_name(b);
}

std::shared_ptr<const Hpam> make_hpam(std::vector<std::pair<int, int>> levels) {
  return std::make_shared<Hpam>(std::move(levels));
}

const Hpam* as_hpam(const Machine& m) { return dynamic_cast<const Hpam*>(m.topology.get()); }

}  // namespace touchstone
