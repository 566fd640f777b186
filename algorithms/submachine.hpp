// Submachines (paper 000, section 1): the partitions of the mesh that the k-level algorithms of
// sections 3 and 4 operate on, written once. A Submachine is a rectangle of the 2-D mesh (a 1-D
// mesh is 1 x C); it splits into rows, columns, about-square sub-meshes (3-lev-sq), two halves by
// cutting the longer side (logp-lev-sq), and the snake-like row-major order splits into a gamma
// part and the rest (logp-lev-rec(g)). A Team is the process group of a submachine: point-to-point
// inside it, addressed by ranks of the algorithm's group.
//
//   const Grid grid = grid_of(p, g);                  // 16 x 16 on mesh:16x16
//   for (const Submachine& row : split_rows(whole(grid))) ...
//   Team team(p, g, members(grid, row));              // every member of the row creates it
//   team.isend(dst, data);
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// The shape of an algorithm's group: group rank = row * cols + col. The machine's mesh when the
/// group is the whole machine in row-major order; otherwise a 1 x n linear array of group ranks.
struct Grid {
  int rows = 1, cols = 1;
  int rank(int row, int col) const { return row * cols + col; }
  int row_of(int rank) const { return rank / cols; }
  int col_of(int rank) const { return rank % cols; }
  /// Snake-like row-major index (section 3.2): even rows left to right, odd rows right to left.
  int snake_index(int rank) const;
  /// The rank at snake-like row-major index `index` (the inverse of snake_index).
  int snake_rank(int index) const;
};
Grid grid_of(const Proc& p, const Group& g);

/// One entry per part of a partition, the first two kept inline: logp-lev-sq and logp-lev-rec split
/// in halves at every level of their recursions, on every processor (16 levels on 65,536 VPs), and
/// a heap allocation for each of those lists cost such a run about a quarter of its user time
/// (gather/logp-lev-sq on 65,536 VPs: 0.78-0.81 s, 0.57-0.63 s with them inline).
template <class T>
using PerPart = boost::container::small_vector<T, 2>;

/// A rectangular sub-mesh of a Grid.
struct Submachine {
  int row0 = 0, col0 = 0, rows = 1, cols = 1;
  int size() const { return rows * cols; }
  bool contains(const Grid& grid, int rank) const;
};
Submachine whole(const Grid& grid);
/// Group ranks of the sub-mesh in row-major order.
std::vector<int> members(const Grid& grid, const Submachine& s);

/// A part of a partition: a sub-mesh, or a run [lo, hi) of the snake-like row-major order
/// (logp-lev-rec). Its members are listed only on demand, by the processors that need the list
/// (the holder of the blocks and the part's leader), so that every other processor keeps O(1) per
/// level of a recursion (the lists of both halves at every level would make logp-lev-sq cost
/// O(p) per processor and O(p^2) over the machine).
struct Part {
  Submachine rect{};
  int lo = -1, hi = -1;  ///< a snake run when lo >= 0
  static Part of(const Submachine& s) { return {s, -1, -1}; }
  static Part snake_run(int lo, int hi) { return {{}, lo, hi}; }
  int size() const { return lo >= 0 ? hi - lo : rect.size(); }
  /// Group ranks: row-major for a sub-mesh, in snake order for a run.
  std::vector<int> members(const Grid& grid) const;
};
PerPart<Part> parts_of(const PerPart<Submachine>& submachines);

/// One submachine per row (2-lev-rec) or per column.
PerPart<Submachine> split_rows(const Submachine& s);
PerPart<Submachine> split_columns(const Submachine& s);
/// About p^(1/2) about-square sub-meshes of about p^(1/2) processors each (3-lev-sq): on a
/// 16 x 16 mesh, 16 sub-meshes of 4 x 4. Sides that do not divide evenly get bands whose sizes
/// differ by at most one; a 1 x C mesh gets about C^(1/2) segments.
PerPart<Submachine> split_squares(const Submachine& s);
/// Two halves by cutting the longer side (logp-lev-sq): on a square mesh the cuts alternate
/// vertical, horizontal, ... The first half gets the extra row or column of an odd side.
PerPart<Submachine> split_halves(const Submachine& s);
/// Index of the part holding `rank`.
int part_of(const Grid& grid, const PerPart<Submachine>& parts, int rank);
/// Leader of `to` for a source in `from` (section 3.2, 3-lev-sq): the processor in the same row
/// and column of `to` as the source is in `from`, clamped to `to`'s extent.
int same_position(const Grid& grid, const Submachine& from, int source, const Submachine& to);
/// The leader of every part for `source` (3-lev-sq, logp-lev-sq): same_position from the part
/// that holds it.
PerPart<int> leaders_for(const Grid& grid, const PerPart<Submachine>& parts, int source);
/// The processor of `s` in the same column as `source` (2-lev-rec: "the leaders are the
/// processors in the same column as processor P_s"), clamped to the sub-mesh.
int in_column_of(const Grid& grid, const Submachine& s, int source);

/// A cut of a run of n processors in snake order (logp-lev-rec(g), sections 3.2 and 4): the part
/// [keep_lo, keep_hi) holds the key processor (source or destination), the part [other_lo,
/// other_hi) is served through `leader`, the processor of that part next to the cut.
struct SnakeCut {
  int keep_lo, keep_hi, other_lo, other_hi, leader;
};
/// Section 3.2: with k = floor(gamma * n) (at least ceil(n/2) when gamma >= 0.5, between 1 and n-1),
/// the key's part is the first k processors if key < k, else the last k. Section 4, gamma < 0.5,
/// key in neither: the first `key` processors form the other part (gathering to key - 1) and the
/// rest, starting with the key, continue. A run of at most 4 processors is cut in halves.
SnakeCut gamma_cut(int n, int key, double gamma);
/// One level of logp-lev-rec on the snake run [lo, hi) (at least 2 processors) whose key processor
/// (source or destination) is `key`, as processor `me` sees it: part 0 holds the key, which leads
/// it; part 1 is served through leaders[1]; `mine` is the part holding `me`.
struct SnakeLevel {
  PerPart<Part> parts;
  PerPart<int> leaders;
  int mine;
};
SnakeLevel snake_level(const Grid& grid, int lo, int hi, int key, int me, double gamma);

/// The process group of a submachine, for point-to-point addressed by ranks of the algorithm's
/// group `g`. Every member must create the same Teams in the same order (Proc::subgroup); a Team
/// of all of g's ranks uses g itself.
class Team {
 public:
  Team(Proc& p, const Group& g, const std::vector<int>& ranks);
  /// The Team of `part` of `grid` (g itself when the part is all of g).
  Team(Proc& p, const Group& g, const Grid& grid, const Part& part);
  Request isend(int grank, std::span<const std::byte> data) const;
  Request irecv(int grank, std::span<std::byte> buf) const;

 private:
  int local(int grank) const;
  Proc* p_;
  Group g_, sub_;
};

}  // namespace touchstone::algorithms
