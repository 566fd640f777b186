#include "submachine.hpp"

#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/topology.hpp"

namespace touchstone::algorithms {

namespace {
constexpr int kTag = 0;

// Splits a side of `len` into `k` bands whose sizes differ by at most one, larger bands first.
std::vector<std::pair<int, int>> bands(int start, int len, int k) {
  std::vector<std::pair<int, int>> out;
  int at = start;
  for (int i = 0; i < k; ++i) {
    const int n = len / k + (i < len % k ? 1 : 0);
    out.emplace_back(at, n);
    at += n;
  }
  return out;
}
}  // namespace

int Grid::snake_index(int r) const {
  const int row = row_of(r), col = col_of(r);
  return row * cols + (row % 2 ? cols - 1 - col : col);
}

int Grid::snake_rank(int index) const {
  const int row = index / cols, c = index % cols;
  return rank(row, row % 2 ? cols - 1 - c : c);
}

std::vector<int> Part::members(const Grid& grid) const {
  if (lo < 0) return algorithms::members(grid, rect);
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(hi - lo));
  for (int i = lo; i < hi; ++i) out.push_back(grid.snake_rank(i));
  return out;
}

PerPart<Part> parts_of(const PerPart<Submachine>& submachines) {
  PerPart<Part> out;
  out.reserve(submachines.size());
  for (const auto& s : submachines) out.push_back(Part::of(s));
  return out;
}

Grid grid_of(const Proc& p, const Group& g) {
  if (is_whole_machine(p, g)) {
    const auto d = p.machine().topology->dims();
    if (d.size() == 2) return {d[0], d[1]};
    if (d.size() == 1) return {1, d[0]};
  }
  return {1, resolve(p, g).size()};
}

bool Submachine::contains(const Grid& grid, int rank) const {
  const int r = grid.row_of(rank), c = grid.col_of(rank);
  return r >= row0 && r < row0 + rows && c >= col0 && c < col0 + cols;
}

Submachine whole(const Grid& grid) { return {0, 0, grid.rows, grid.cols}; }

std::vector<int> members(const Grid& grid, const Submachine& s) {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(s.size()));
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.cols; ++c) out.push_back(grid.rank(s.row0 + r, s.col0 + c));
  return out;
}

PerPart<Submachine> split_rows(const Submachine& s) {
  PerPart<Submachine> out;
  for (int r = 0; r < s.rows; ++r) out.push_back({s.row0 + r, s.col0, 1, s.cols});
  return out;
}

PerPart<Submachine> split_columns(const Submachine& s) {
  PerPart<Submachine> out;
  for (int c = 0; c < s.cols; ++c) out.push_back({s.row0, s.col0 + c, s.rows, 1});
  return out;
}

// Section 3.2: "the p-processor machine is logically partitioned into sqrt(p) submachines, each
// being an array of size p^(1/4) x p^(1/4)". A band of about t = p^(1/4) rows and columns makes
// about-square sub-meshes; the number of column bands is chosen so that there are about sqrt(p)
// sub-meshes, which also covers thin meshes (1 x C: about sqrt(C) segments).
PerPart<Submachine> split_squares(const Submachine& s) {
  const double p = s.size(), t = std::pow(p, 0.25);
  const int br = std::clamp(static_cast<int>(std::lround(s.rows / t)), 1, s.rows);
  const int bc = std::clamp(static_cast<int>(std::lround(std::sqrt(p) / br)), 1, s.cols);
  PerPart<Submachine> out;
  for (auto [r0, nr] : bands(s.row0, s.rows, br))
    for (auto [c0, nc] : bands(s.col0, s.cols, bc)) out.push_back({r0, c0, nr, nc});
  return out;
}

PerPart<Submachine> split_halves(const Submachine& s) {
  if (s.size() < 2) throw std::logic_error("split_halves: a single processor has no halves");
  if (s.cols >= s.rows) {  // vertical cut
    const int left = (s.cols + 1) / 2;
    return {{s.row0, s.col0, s.rows, left}, {s.row0, s.col0 + left, s.rows, s.cols - left}};
  }
  const int top = (s.rows + 1) / 2;  // horizontal cut
  return {{s.row0, s.col0, top, s.cols}, {s.row0 + top, s.col0, s.rows - top, s.cols}};
}

int part_of(const Grid& grid, const PerPart<Submachine>& parts, int rank) {
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (parts[i].contains(grid, rank)) return static_cast<int>(i);
  throw std::logic_error(fmt::format("part_of: rank {} is in no part", rank));
}

int same_position(const Grid& grid, const Submachine& from, int source, const Submachine& to) {
  const int i = grid.row_of(source) - from.row0, j = grid.col_of(source) - from.col0;
  return grid.rank(to.row0 + std::min(i, to.rows - 1), to.col0 + std::min(j, to.cols - 1));
}

PerPart<int> leaders_for(const Grid& grid, const PerPart<Submachine>& parts, int source) {
  const Submachine& home = parts[static_cast<std::size_t>(part_of(grid, parts, source))];
  PerPart<int> leaders;
  for (const auto& part : parts) leaders.push_back(same_position(grid, home, source, part));
  return leaders;
}

int in_column_of(const Grid& grid, const Submachine& s, int source) {
  const int c = std::clamp(grid.col_of(source), s.col0, s.col0 + s.cols - 1);
  return grid.rank(s.row0, c);
}

SnakeCut gamma_cut(int n, int key, double gamma) {
  if (n < 2 || key < 0 || key >= n) throw std::logic_error("gamma_cut: needs 2 or more processors and the key among them");
  if (!(gamma > 0.0 && gamma < 1.0)) throw UsageError(fmt::format("logp-lev-rec: gamma must lie in (0, 1), got {}", gamma));
  int k = static_cast<int>(std::floor(gamma * n));
  if (gamma >= 0.5) k = std::max(k, (n + 1) / 2);
  if (n <= 4) k = (n + 1) / 2;
  k = std::clamp(k, 1, n - 1);
  if (key < k) return {0, k, k, n, k};
  if (key >= n - k) return {n - k, n, 0, n - k, n - k - 1};
  // Section 4: "one submachine contains the first d-1 processors and executes an all-to-one
  // communication with P_(d-1) as destination" (counting from 1: processors 0 .. key-1 here).
  return {key, n, 0, key, key - 1};
}

SnakeLevel snake_level(const Grid& grid, int lo, int hi, int key, int me, double gamma) {
  const SnakeCut cut = gamma_cut(hi - lo, grid.snake_index(key) - lo, gamma);
  const int at = grid.snake_index(me) - lo;
  return {{Part::snake_run(lo + cut.keep_lo, lo + cut.keep_hi), Part::snake_run(lo + cut.other_lo, lo + cut.other_hi)},
          {key, grid.snake_rank(lo + cut.leader)},
          at >= cut.keep_lo && at < cut.keep_hi ? 0 : 1};
}

Team::Team(Proc& p, const Group& g, const std::vector<int>& ranks)
    : p_(&p), g_(resolve(p, g)) {
  sub_ = static_cast<int>(ranks.size()) == g_.size() ? g_ : p.subgroup(g_, ranks);
}

Team::Team(Proc& p, const Group& g, const Grid& grid, const Part& part) : p_(&p), g_(resolve(p, g)) {
  sub_ = part.size() == g_.size() ? g_ : p.subgroup(g_, part.members(grid));
}

int Team::local(int grank) const { return sub_.local_rank(g_.world_rank(grank)); }

Request Team::isend(int grank, std::span<const std::byte> data) const { return p_->isend(local(grank), kTag, data, sub_); }

Request Team::irecv(int grank, std::span<std::byte> buf) const { return p_->irecv(local(grank), kTag, buf, sub_); }

}  // namespace touchstone::algorithms
