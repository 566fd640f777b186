// HPAM: a Hierarchy of Processor-And-Memory levels (paper 001, Ben Miled, Fortes, Eigenmann,
// Taylor, section 2). Level l is an r_l x c_l mesh; level 1 is the top (few fast processors).
// Processor (0, a) of level l is joined to (r_{l-1} - 1, floor(a / f_l)) of level l - 1 with
// f_l = c_l / c_{l-1} (eq. 1). Routing is the extended X-Y routing of eq. 2 (Figure 3).
//
//   auto t = make_hpam({{1, 1}, {16, 16}});   // "hpam:1x1/16x16"
//   t->node(2, 3, 5);                         // rank of processor (3,5) of level 2 = 1 + 3*16 + 5
//
// Levels are numbered from 1 as in the paper; ranks are level-major, then row-major.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "touchstone/machine.hpp"
#include "touchstone/topology.hpp"

namespace touchstone {

/// A processor's place in the hierarchy: (row, column) of level `level` (1 = top).
struct HpamPos {
  int level = 1, row = 0, col = 0;
  bool operator==(const HpamPos&) const = default;
};

class Hpam final : public Topology {
 public:
  /// levels[l-1] = {r_l, c_l}. Columns must be powers of two and non-decreasing from the top
  /// (eq. 1 needs c_{l-1} <= c_l); rows any positive number. UsageError otherwise.
  explicit Hpam(std::vector<std::pair<int, int>> levels);

  std::string name() const override;
  int nodes() const override { return offset_.back(); }
  std::size_t link_channels() const override { return static_cast<std::size_t>(nodes()) * 6; }
  void route(int src, int dst, std::vector<LinkId>& out) const override;
  int distance(int src, int dst) const override;
  std::string link_name(LinkId id) const override;
  /// The downward inter-level channels of the router of (r_{l-1} - 1, b)_{l-1}, one per child
  /// (0, b f_l + k)_l, when `id` is one of them (section 3.1's replication hardware).
  void replicating_channels(LinkId id, std::vector<LinkId>& out) const override;

  int levels() const { return static_cast<int>(levels_.size()); }
  int rows(int level) const { return levels_.at(static_cast<std::size_t>(level - 1)).first; }
  int cols(int level) const { return levels_.at(static_cast<std::size_t>(level - 1)).second; }
  /// f_l = c_l / c_{l-1} (eq. 1), for 2 <= l <= levels().
  int fanout(int level) const { return cols(level) / cols(level - 1); }
  /// First rank of a level.
  int first(int level) const { return offset_.at(static_cast<std::size_t>(level - 1)); }
  int node(int level, int row, int col) const { return first(level) + row * cols(level) + col; }
  int node(const HpamPos& p) const { return node(p.level, p.row, p.col); }
  HpamPos pos(int node) const;
  /// Eq. 1: the column b of level l-1 to which processor (0, a) of level l is joined.
  int parent_col(int level, int a) const { return a / fanout(level); }
  /// Eq. 2: the column chi of level l+1 where a message from column n of level l+1 to column j of
  /// level l climbs (the nearest column of j's children).
  int chi(int level_below, int n, int j) const;
  /// The two nodes a link channel joins (from, to).
  std::pair<int, int> link_ends(LinkId id) const;
  std::string pos_name(int node) const;

 private:
  enum Dir { east = 0, west = 1, south = 2, north = 3, up = 4, down = 5 };
  LinkId link(int node, Dir d) const { return static_cast<LinkId>(node) * 6 + d; }
  // Appends the links of a straight walk inside one level from `at` to column/row targets.
  void walk_row(int level, int row, int from_col, int to_col, std::vector<LinkId>& out) const;
  void walk_col(int level, int col, int from_row, int to_row, std::vector<LinkId>& out) const;

  std::vector<std::pair<int, int>> levels_;
  std::vector<int> offset_;  // offset_[l-1] = first rank of level l; back() = nodes
};

/// An HPAM of levels {r_l, c_l}, top first.
std::shared_ptr<const Hpam> make_hpam(std::vector<std::pair<int, int>> levels);

/// True when the machine's topology is an HPAM (the algorithms of paper 001 need one).
const Hpam* as_hpam(const Machine& m);

}  // namespace touchstone
