// Paper 001: the binary-tree broadcast, scatter and gather inside a mesh (sections 3, 4, 5 and
// ref. [3]) and the hybrid algorithms of a two-level HPAM machine with one processor in level 1
// (sections 3.1, 4.1, 5): the level-1 processor sends to the root of each p2 x q2 initial sub-mesh
// of level 2 one after the other ("brute force"), farthest root first, and every sub-mesh goes on
// with the binary tree. p2 x q2 = 1 x 1 is brute force; r2 x c2 is "send to (0,0)_2, then the tree".
#include "families.hpp"
#include "hpam.hpp"

#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "combine.hpp"
#include "common.hpp"
#include "harness.hpp"
#include "hpam_model.hpp"
#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/topologies/hpam.hpp"

namespace touchstone::algorithms {

namespace {

constexpr int kInterTag = 1;  // between the levels
constexpr int kTreeTag = 2;   // inside a sub-mesh

// Splits a rectangle into the half its corner keeps and the half it gives away: columns first.
std::pair<Rect, Rect> halve(const Rect& r) {
  if (r.w > 1) {
    const int keep = (r.w + 1) / 2;
    return {{r.r0, r.c0, r.h, keep}, {r.r0, r.c0 + keep, r.h, r.w - keep}};
  }
  const int keep = (r.h + 1) / 2;
  return {{r.r0, r.c0, keep, r.w}, {r.r0 + keep, r.c0, r.h - keep, r.w}};
}

// The blocks of `sub` out of data laid out as the blocks of `of`, row-major, L bytes each, into
// `out` (sub.size() L bytes). Under phantom payloads no byte is read for its value: nothing is
// copied, and the buffers are never touched (a sub-mesh root's band is megabytes on a 64x64 level).
void pack_into(const Proc& p, std::span<std::byte> out, std::span<const std::byte> data, const Rect& of, const Rect& sub,
               std::size_t L) {
  const std::size_t run = static_cast<std::size_t>(sub.w) * L;
  if (run == 0 || p.phantom_payloads()) return;
  for (int k = 0; k < sub.h; ++k) {
    const std::size_t from = (static_cast<std::size_t>(sub.r0 + k - of.r0) * static_cast<std::size_t>(of.w) +
                              static_cast<std::size_t>(sub.c0 - of.c0)) * L;
    std::memcpy(out.data() + static_cast<std::size_t>(k) * run, data.data() + from, run);
  }
}

ScratchBytes pack(const Proc& p, std::span<const std::byte> data, const Rect& of, const Rect& sub, std::size_t L) {
  ScratchBytes out(static_cast<std::size_t>(sub.size()) * L);
  pack_into(p, out, data, of, sub, L);
  return out;
}

// The inverse of pack: writes sub's blocks into data laid out as `of`.
void unpack(const Proc& p, std::span<const std::byte> blocks, std::span<std::byte> data, const Rect& of, const Rect& sub,
            std::size_t L) {
  const std::size_t run = static_cast<std::size_t>(sub.w) * L;
  if (run == 0 || p.phantom_payloads()) return;
  for (int k = 0; k < sub.h; ++k) {
    const std::size_t to = (static_cast<std::size_t>(sub.r0 + k - of.r0) * static_cast<std::size_t>(of.w) +
                            static_cast<std::size_t>(sub.c0 - of.c0)) * L;
    std::memcpy(data.data() + to, blocks.data() + static_cast<std::size_t>(k) * run, run);
  }
}

// Where a processor of a mesh (a plain 2-D grid, or one level of an HPAM) is: its rank as a
// function of (row, column).
struct Mesh {
  std::function<int(int, int)> rank_of;
};

// The inter-level step of a gather (section 5): every sub-mesh's root sends its sub-mesh's blocks
// in one message; the receives are all posted at once, so they complete in arrival order, and
// their blocks are unpacked into `out`, laid out as the blocks of `whole`.
void receive_submeshes(Proc& p, const Mesh& level2, const std::vector<Rect>& subs, std::span<std::byte> out,
                       const Rect& whole, std::size_t L) {
  std::vector<ScratchBytes> parts(subs.size());
  std::vector<Request> rs;
  for (std::size_t k = 0; k < subs.size(); ++k) {
    parts[k].resize(static_cast<std::size_t>(subs[k].size()) * L);
    rs.push_back(p.irecv(level2.rank_of(subs[k].r0, subs[k].c0), kInterTag, parts[k]));
  }
  p.waitall(rs);
  for (std::size_t k = 0; k < subs.size(); ++k) unpack(p, parts[k], out, whole, subs[k], L);
}

// Section 3's binary-tree broadcast of `whole`, whose corner already holds buf.
void tree_bcast(Proc& p, const Mesh& m, const Rect& whole, int r, int c, std::span<std::byte> buf) {
  const TreeRole t = tree_role(whole, r, c);
  if (t.has_parent) p.recv(m.rank_of(t.parent_r, t.parent_c), kTreeTag, buf);
  for (const Rect& ch : t.children) p.send(m.rank_of(ch.r0, ch.c0), kTreeTag, buf);
}

// Section 4's binary-tree scatter of `whole`: the corner holds the blocks of every processor of
// `whole` (row-major, L bytes each) in `data`; each holder sends a child the blocks of the half it
// gives away. Every processor's own block lands in `own`.
void tree_scatter(Proc& p, const Mesh& m, const Rect& whole, int r, int c, std::span<const std::byte> data,
                  std::span<std::byte> own, std::size_t L) {
  const TreeRole t = tree_role(whole, r, c);
  ScratchBytes got;
  if (t.has_parent) {
    got.resize(static_cast<std::size_t>(t.mine.size()) * L);
    p.recv(m.rank_of(t.parent_r, t.parent_c), kTreeTag, got);
    data = got;
  }
  for (const Rect& ch : t.children) p.send(m.rank_of(ch.r0, ch.c0), kTreeTag, pack(p, data, t.mine, ch, L));
  const auto at = static_cast<std::size_t>((r - t.mine.r0) * t.mine.w + (c - t.mine.c0)) * L;
  Copier(p.phantom_payloads())(own, data.subspan(at, L));  // nothing under phantom payloads (shared buffers)
}

// Section 5: the gather is the scatter run backwards. Each holder receives the halves it gave away
// in the scatter, last one first, then sends its rectangle's blocks to its parent. Returns the
// blocks of `whole` on its corner (empty elsewhere).
ScratchBytes tree_gather(Proc& p, const Mesh& m, const Rect& whole, int r, int c, std::span<const std::byte> own,
                         std::size_t L) {
  const TreeRole t = tree_role(whole, r, c);
  ScratchBytes mine(static_cast<std::size_t>(t.mine.size()) * L);
  unpack(p, own, mine, t.mine, {r, c, 1, 1}, L);
  ScratchBytes part;
  for (auto ch = t.children.rbegin(); ch != t.children.rend(); ++ch) {
    part.resize(static_cast<std::size_t>(ch->size()) * L);
    p.recv(m.rank_of(ch->r0, ch->c0), kTreeTag, part);
    unpack(p, part, mine, t.mine, *ch, L);
  }
  if (!t.has_parent) return mine;
  p.send(m.rank_of(t.parent_r, t.parent_c), kTreeTag, mine);
  return {};
}

// A two-level HPAM machine with one processor in level 1, partitioned into p2 x q2 initial
// sub-meshes (section 3.1). UsageError names what does not fit.
struct Hybrid {
  const Hpam* hpam;
  SubMesh sub;
  Mesh level2;
  Rect whole2;

  Hybrid(const Proc& p, const std::string& name, SubMesh s, int root) : hpam(as_hpam(p.machine())), sub(s) {
    if (!hpam || hpam->levels() != 2 || hpam->rows(1) != 1 || hpam->cols(1) != 1)
      throw UsageError(fmt::format("{}: needs a two-level HPAM machine with one level-1 processor, such as hpam:1x1/16x16 (got {})",
                                   name, p.machine().name));
    const int r2 = hpam->rows(2), c2 = hpam->cols(2);
    if (s.p > r2 || s.q > c2 || r2 % s.p || c2 % s.q)
      throw UsageError(fmt::format("{}: the {}x{} initial sub-mesh does not tile the {}x{} second level", name, s.p, s.q, r2, c2));
    if (root != 0) throw UsageError(fmt::format("{}: the source must be the level-1 processor, rank 0 (got --root {})", name, root));
    const Hpam* h = hpam;
    level2.rank_of = [h](int r, int c) { return h->node(2, r, c); };
    whole2 = {0, 0, r2, c2};
  }
  // The roots (i p2, j q2) of the initial sub-meshes, farthest first (highest row first).
  std::vector<Rect> submeshes() const {
    std::vector<Rect> out;
    for (int i = whole2.h / sub.p - 1; i >= 0; --i)
      for (int j = 0; j < whole2.w / sub.q; ++j) out.push_back({i * sub.p, j * sub.q, sub.p, sub.q});
    return out;
  }
  Rect submesh_of(const HpamPos& at) const { return {at.row / sub.p * sub.p, at.col / sub.q * sub.q, sub.p, sub.q}; }
};

// Section 3.2 (eq. 7): several level-1 processors, source (0,0)_1 (the paper's worst case, first
// row), destinations in both levels, level 2 in the two r2 x c2/2 sub-meshes the paper finds best.
// 1- the first step of level 1's binary tree: (0,0)_1 sends to (0, c1/2)_1; 2- the two level-1
// holders send to the roots (0,0)_2 and (0, c2/2)_2 of level 2's halves (eq. 1 puts both right
// under them: r1 hops); 3- the rest of level 1's tree in each half, concurrently with the trees of
// level 2's halves.
void multi_bcast(Proc& p, const std::string& name, SubMesh s, int root, std::span<std::byte> buf) {
  const Hpam& t = *as_hpam(p.machine());
  const int r1 = t.rows(1), c1 = t.cols(1), r2 = t.rows(2), c2 = t.cols(2);
  if (c1 < 2)
    throw UsageError(fmt::format("{}: section 3.2's broadcast halves level 1's columns first: needs c1 >= 2 (got {}x{})", name, r1, c1));
  if (s.p != r2 || s.q != c2 / 2)
    throw UsageError(fmt::format("{}: with several level-1 processors the broadcast of section 3.2 uses the two {}x{} sub-meshes", name,
                                 r2, c2 / 2));
  if (root != 0) throw UsageError(fmt::format("{}: the source must be (0,0)_1, rank 0 (got --root {})", name, root));
  const Mesh level1{[&t](int r, int c) { return t.node(1, r, c); }}, level2{[&t](int r, int c) { return t.node(2, r, c); }};
  const Rect left1{0, 0, r1, c1 / 2}, right1{0, c1 / 2, r1, c1 / 2}, left2{0, 0, r2, c2 / 2}, right2{0, c2 / 2, r2, c2 / 2};
  const HpamPos at = t.pos(p.rank());
  if (at.level == 1) {
    const bool right_holder = at.row == 0 && at.col == c1 / 2;
    if (p.rank() == 0) p.send(level1.rank_of(0, c1 / 2), kTreeTag, buf);
    if (right_holder) p.recv(0, kTreeTag, buf);
    if (p.rank() == 0) p.send(level2.rank_of(0, 0), kInterTag, buf);
    if (right_holder) p.send(level2.rank_of(0, c2 / 2), kInterTag, buf);
    tree_bcast(p, level1, left1.contains(at.row, at.col) ? left1 : right1, at.row, at.col, buf);
    return;
  }
  const Rect& half = left2.contains(at.row, at.col) ? left2 : right2;
  if (at.row == half.r0 && at.col == half.c0) p.recv(level1.rank_of(0, half.c0 == 0 ? 0 : c1 / 2), kInterTag, buf);
  tree_bcast(p, level2, half, at.row, at.col, buf);
}

bool several_level1(const Proc& p) {
  const Hpam* t = as_hpam(p.machine());
  return t && t->levels() == 2 && t->rows(1) * t->cols(1) > 1;
}

void hybrid_bcast(Proc& p, const std::string& name, SubMesh s, int root, std::span<std::byte> buf) {
  if (several_level1(p)) return multi_bcast(p, name, s, root, buf);
  const Hybrid h(p, name, s, root);
  if (p.rank() == 0) {
    for (const Rect& m : h.submeshes()) p.send(h.level2.rank_of(m.r0, m.c0), kInterTag, buf);
    return;
  }
  const HpamPos at = h.hpam->pos(p.rank());
  const Rect m = h.submesh_of(at);
  if (at.row == m.r0 && at.col == m.c0) p.recv(0, kInterTag, buf);
  tree_bcast(p, h.level2, m, at.row, at.col, buf);
}

void hybrid_scatter(Proc& p, const std::string& name, SubMesh s, int root, std::span<const std::byte> send,
                    std::span<std::byte> recv, std::size_t L) {
  const Hybrid h(p, name, s, root);
  if (p.rank() == 0) {
    // send holds one block per world rank: rank 0's, then level 2 row-major (= whole2's layout).
    const auto level2 = send.subspan(L);
    for (const Rect& m : h.submeshes()) p.send(h.level2.rank_of(m.r0, m.c0), kInterTag, pack(p, level2, h.whole2, m, L));
    Copier(p.phantom_payloads())(recv, send.first(L));
    return;
  }
  const HpamPos at = h.hpam->pos(p.rank());
  const Rect m = h.submesh_of(at);
  ScratchBytes data;
  if (at.row == m.r0 && at.col == m.c0) {
    data.resize(static_cast<std::size_t>(m.size()) * L);
    p.recv(0, kInterTag, data);
  }
  tree_scatter(p, h.level2, m, at.row, at.col, data, recv, L);
}

void hybrid_gather(Proc& p, const std::string& name, SubMesh s, int root, std::span<const std::byte> send,
                   std::span<std::byte> recv, std::size_t L) {
  const Hybrid h(p, name, s, root);
  if (p.rank() == 0) {
    receive_submeshes(p, h.level2, h.submeshes(), recv.subspan(L), h.whole2, L);
    Copier(p.phantom_payloads())(recv, send.first(L));
    return;
  }
  const HpamPos at = h.hpam->pos(p.rank());
  const Rect m = h.submesh_of(at);
  const auto mine = tree_gather(p, h.level2, m, at.row, at.col, send.first(L), L);
  if (at.row == m.r0 && at.col == m.c0) p.send(0, kInterTag, mine);
}

// Inter-level multicast (sections 3.1, 3.2, 4.1; docs/model.md 2.11): the router of a level-1
// processor (r1 - 1, b)_1 replicates a message onto its f2 inter-level channels, so one multicast
// reaches the processors of one level-2 row under its f2 child columns. Level 2 is cut into p2 x 1
// sub-meshes (q2 = 1, "to fully utilize the hardware support"); their roots are the rows i p2.
void check_multicast(const Proc& p, const std::string& name, SubMesh s) {
  if (!p.machine().net.multicast)
    throw UsageError(fmt::format("{}: needs the inter-level multicast hardware, e.g. hpam:1x1/16x16,Q=8,multicast (got {})", name,
                                 p.machine().name));
  if (s.q != 1) throw UsageError(fmt::format("{}: the multicast's sub-meshes are one column wide, p2 x 1 (got {}x{})", name, s.p, s.q));
}

// The level-2 processors of row `row` under level-1 column b: one multicast's destinations.
std::vector<int> row_under(const Hpam& t, int b, int row) {
  const int f = t.fanout(2);
  std::vector<int> d(static_cast<std::size_t>(f));
  for (int k = 0; k < f; ++k) d[static_cast<std::size_t>(k)] = t.node(2, row, b * f + k);
  return d;
}

// Section 3.1 (eq. 6) with one level-1 processor; section 3.2 (eq. 8) with several: source
// (0,0)_1, 1- level 1's row 0 broadcasts along the row (log c1 steps); 2- each (0,b)_1 multicasts
// to the sub-mesh roots under its column, farthest row first (r2/p2 multicasts); 3- level 1's
// columns finish the tree while level 2's p2 x 1 sub-meshes run theirs.
void multicast_bcast(Proc& p, const std::string& name, SubMesh s, int root, std::span<std::byte> buf) {
  check_multicast(p, name, s);
  const Hpam* t = as_hpam(p.machine());
  if (!t || t->levels() != 2) throw UsageError(fmt::format("{}: needs a two-level HPAM machine (got {})", name, p.machine().name));
  const int r1 = t->rows(1), c1 = t->cols(1), r2 = t->rows(2), c2 = t->cols(2);
  if (s.p > r2 || r2 % s.p)
    throw UsageError(fmt::format("{}: the {}x1 initial sub-mesh does not tile the {}x{} second level", name, s.p, r2, c2));
  if (root != 0) throw UsageError(fmt::format("{}: the source must be (0,0)_1, rank 0 (got --root {})", name, root));
  const Mesh level1{[t](int r, int c) { return t->node(1, r, c); }}, level2{[t](int r, int c) { return t->node(2, r, c); }};
  const HpamPos at = t->pos(p.rank());
  if (at.level == 1) {
    if (at.row == 0) {
      tree_bcast(p, level1, {0, 0, 1, c1}, 0, at.col, buf);
      for (int i = r2 / s.p - 1; i >= 0; --i) p.multicast(row_under(*t, at.col, i * s.p), kInterTag, buf);
    }
    tree_bcast(p, level1, {0, at.col, r1, 1}, at.row, at.col, buf);
    return;
  }
  const Rect m{at.row / s.p * s.p, at.col, s.p, 1};
  if (at.row == m.r0) p.recv(level1.rank_of(0, at.col / t->fanout(2)), kInterTag, buf);
  tree_bcast(p, level2, m, at.row, at.col, buf);
}

// A sub-mesh root's part of a replicated band: it receives all of `band`'s blocks and keeps those
// of its own p2 x 1 sub-mesh m.
ScratchBytes recv_band(Proc& p, int from, const Rect& band, const Rect& m, std::size_t L) {
  ScratchBytes all(static_cast<std::size_t>(band.size()) * L);
  p.recv(from, kInterTag, all);
  return pack(p, all, band, m, L);
}

// Section 4.1 (eq. 11), one level-1 processor: the router replicates whole messages only, so
// multicast i carries the blocks of level 2's rows i p2 .. i p2 + p2 - 1 (p2 c2 blocks) to every
// root of that band, which keeps its column's p2 blocks and scatters them down its p2 x 1 sub-mesh.
void multicast_scatter(Proc& p, const std::string& name, SubMesh s, int root, std::span<const std::byte> send,
                       std::span<std::byte> recv, std::size_t L) {
  check_multicast(p, name, s);
  const Hybrid h(p, name, s, root);
  const Rect& whole2 = h.whole2;
  if (p.rank() == 0) {
    const auto level2 = send.subspan(L);
    for (int i = whole2.h / s.p - 1; i >= 0; --i)
      p.multicast(row_under(*h.hpam, 0, i * s.p), kInterTag, pack(p, level2, whole2, {i * s.p, 0, s.p, whole2.w}, L));
    Copier(p.phantom_payloads())(recv, send.first(L));
    return;
  }
  const HpamPos at = h.hpam->pos(p.rank());
  const Rect m = h.submesh_of(at), band{m.r0, 0, s.p, whole2.w};
  ScratchBytes data;
  if (at.row == m.r0) data = recv_band(p, 0, band, m, L);
  tree_scatter(p, h.level2, m, at.row, at.col, data, recv, L);
}

// Section 4.2, destinations in level 2 only, source (0,0)_1 (the paper's worst case, first row).
// 1- a partial scatter along the source's row: k = min(c1, c2/q2) of its processors (every
// (c1/k)-th) each get the blocks of c2/k whole columns of level 2 (case a, q2 <= f2: all c1 of
// them, r2 f2 S bytes each; case b: c2/q2 of them, r2 q2 S bytes each); 2- each sends its
// sub-mesh roots their p2 q2 blocks, farthest first; 3- binary-tree scatters in the sub-meshes.
struct RowPlan {
  const Hpam* t;
  int r2, c2, k, stride, width;  // row processors taking part, their spacing, level-2 columns each
  Mesh row, level2;
  Rect whole2, row_rect;

  RowPlan(const Proc& p, const std::string& name, SubMesh s, int root) : t(as_hpam(p.machine())) {
    if (!t || t->levels() != 2)
      throw UsageError(fmt::format("{}: needs a two-level HPAM machine such as hpam:4x4/16x16 (got {})", name, p.machine().name));
    const int c1 = t->cols(1);
    r2 = t->rows(2), c2 = t->cols(2);
    if (s.p > r2 || s.q > c2 || r2 % s.p || c2 % s.q)
      throw UsageError(fmt::format("{}: the {}x{} initial sub-mesh does not tile the {}x{} second level", name, s.p, s.q, r2, c2));
    if (root != 0) throw UsageError(fmt::format("{}: the source must be (0,0)_1, rank 0 (got --root {})", name, root));
    k = std::min(c1, c2 / s.q), stride = c1 / k, width = c2 / k;
    const Hpam* h = t;
    const int st = stride;
    row.rank_of = [h, st](int, int v) { return h->node(1, 0, v * st); };
    level2.rank_of = [h](int r, int c) { return h->node(2, r, c); };
    whole2 = {0, 0, r2, c2}, row_rect = {0, 0, 1, k};
  }
  // The row processor serving level-2 column c.
  int server(int c) const { return t->node(1, 0, c / width * stride); }
};

// Step 1 of section 4.2's scatters: the binary-tree partial scatter along the source's row; row
// processor v gets "block" v, the level-2 columns [v width, (v+1) width) (returned, laid out as
// `cols`).
ScratchBytes row_partial_scatter(Proc& p, const RowPlan& rp, int v, std::span<const std::byte> send, std::size_t L,
                                 Rect& cols) {
  const std::size_t chunk = static_cast<std::size_t>(rp.r2) * static_cast<std::size_t>(rp.width) * L;
  ScratchBytes chunks, mine(chunk);
  if (p.rank() == 0) {
    chunks.resize(static_cast<std::size_t>(rp.k) * chunk);
    for (int u = 0; u < rp.k; ++u)
      pack_into(p, std::span(chunks).subspan(static_cast<std::size_t>(u) * chunk, chunk), send, rp.whole2,
                {0, u * rp.width, rp.r2, rp.width}, L);
  }
  tree_scatter(p, rp.row, rp.row_rect, 0, v, chunks, mine, chunk);
  cols = {0, v * rp.width, rp.r2, rp.width};
  return mine;
}

// Step 2 of section 4.2's scatters, the inter-level transfer from a row processor holding the
// level-2 columns `cols` (blocks laid out as `cols`), farthest band first. Hybrid (eqs. 12, 13):
// one message per p2 x q2 sub-mesh root under those columns. Multicast (eq. 14, and the scatter to
// both levels: "the multicast is used for the inter-level transfer"): the router replicates whole
// messages only, so one multicast per band of p2 rows carries the band's p2 f2 blocks to its f2
// roots (q2 = 1).
enum class Transfer { hybrid, multicast };

void inter_level_send(Proc& p, const RowPlan& rp, SubMesh s, Transfer how, std::span<const std::byte> blocks, const Rect& cols,
                      std::size_t L) {
  for (int i = rp.r2 / s.p - 1; i >= 0; --i) {
    if (how == Transfer::multicast) {
      p.multicast(row_under(*rp.t, cols.c0 / rp.t->fanout(2), i * s.p), kInterTag, pack(p, blocks, cols, {i * s.p, cols.c0, s.p, cols.w}, L));
      continue;
    }
    for (int j = cols.c0; j < cols.c0 + cols.w; j += s.q)
      p.send(rp.level2.rank_of(i * s.p, j), kInterTag, pack(p, blocks, cols, {i * s.p, j, s.p, s.q}, L));
  }
}

// Steps 2-3 on a level-2 processor: a sub-mesh root receives its blocks from its row processor
// (hybrid: its own p2 q2; multicast: the whole band under the row processor, of which it keeps its
// p2 x 1 column), then every sub-mesh runs its binary-tree scatter.
void level2_receive_and_scatter(Proc& p, const RowPlan& rp, SubMesh s, Transfer how, const HpamPos& at, std::span<std::byte> recv,
                                std::size_t L) {
  const Rect m{at.row / s.p * s.p, at.col / s.q * s.q, s.p, s.q};
  ScratchBytes data;
  if (at.row == m.r0 && at.col == m.c0) {
    if (how == Transfer::multicast) {
      data = recv_band(p, rp.server(at.col), {m.r0, at.col / rp.width * rp.width, s.p, rp.width}, m, L);
    } else {
      data.resize(static_cast<std::size_t>(m.size()) * L);
      p.recv(rp.server(at.col), kInterTag, data);
    }
  }
  tree_scatter(p, rp.level2, m, at.row, at.col, data, recv, L);
}

void level2_scatter(Proc& p, const std::string& name, SubMesh s, int root, std::span<const std::byte> send,
                    std::span<std::byte> recv, std::size_t L) {
  const RowPlan rp(p, name, s, root);
  const HpamPos at = rp.t->pos(p.rank());
  if (at.level == 2) return level2_receive_and_scatter(p, rp, s, Transfer::hybrid, at, recv, L);
  if (at.row != 0 || at.col % rp.stride) return;  // not in the partial scatter
  Rect cols;
  const auto mine = row_partial_scatter(p, rp, at.col / rp.stride, send, L, cols);
  inter_level_send(p, rp, s, Transfer::hybrid, mine, cols, L);
}

// Section 4.2 with the multicast hardware, destinations in level 2 only (eq. 14, Figure 9): the
// row's partial scatter gives each (0,b)_1 the r2 f2 blocks under its column (q2 = 1 <= f2: case
// a, every row processor takes part); it then multicasts, farthest band first, the p2 f2 blocks of
// each band of p2 rows to the f2 roots of that band under it; then the p2 x 1 trees.
void level2_multicast_scatter(Proc& p, const std::string& name, SubMesh s, int root, std::span<const std::byte> send,
                              std::span<std::byte> recv, std::size_t L) {
  check_multicast(p, name, s);
  const RowPlan rp(p, name, s, root);
  const HpamPos at = rp.t->pos(p.rank());
  if (at.level == 2) return level2_receive_and_scatter(p, rp, s, Transfer::multicast, at, recv, L);
  if (at.row != 0) return;
  Rect cols;
  const auto mine = row_partial_scatter(p, rp, at.col, send, L, cols);
  inter_level_send(p, rp, s, Transfer::multicast, mine, cols, L);
}

// Section 4.2, destinations in both levels with equal final sizes: the source's row gets, per
// processor (0,b)_1, the r1 blocks of level 1's column b and the r2 f2 blocks of the level-2
// columns under it ("r1 S + r2 f2 S"); each then makes the inter-level transfer first ("as early
// as possible"), and the scatters down level 1's columns and in level 2's sub-meshes proceed
// concurrently. Needs q2 <= f2 (the paper's finding: all the row's processors take part). The
// same steps serve the hybrid and the multicast transfer ("the scatter operation follows similar
// steps to the hybrid-based scatter operation. However, the multicast is used for the inter-level
// transfer").
//
// L1 is the size of a level-1 processor's final block: L (equal sizes) or Q L, the paper's second
// scenario ("the final message size of the processors in the first level is Q S", for load
// balancing: level 1's processors are the faster ones). Then each row processor's chunk is
// r1 Q S + r2 f2 S; the level-2 part, and so the inter-level transfer, is unchanged.
void both_levels_scatter(Proc& p, const std::string& name, SubMesh s, Transfer how, int root, std::span<const std::byte> send,
                         std::span<std::byte> recv, std::size_t L1, std::size_t L) {
  if (how == Transfer::multicast) check_multicast(p, name, s);
  const RowPlan rp(p, name, s, root);
  const Hpam& t = *rp.t;
  const int r1 = t.rows(1), c1 = t.cols(1);
  if (rp.k != c1)
    throw UsageError(fmt::format("{}: the scatter to both levels needs q2 <= f2 = {} (section 4.2)", name, rp.c2 / c1));
  const HpamPos at = t.pos(p.rank());
  if (at.level == 2) return level2_receive_and_scatter(p, rp, s, how, at, recv, L);
  const Mesh level1{[&t](int r, int c) { return t.node(1, r, c); }};
  const Rect column{0, at.col, r1, 1};
  ScratchBytes col_blocks;  // level 1's column blocks, on its top processor
  if (at.row == 0) {
    // Chunk b: level 1's column b (r1 blocks), then the level-2 columns under b (r2 f2 blocks).
    const std::size_t c1_bytes = static_cast<std::size_t>(r1) * L1, c2_bytes = static_cast<std::size_t>(rp.r2 * rp.width) * L;
    const std::size_t chunk = c1_bytes + c2_bytes;
    ScratchBytes chunks, mine(chunk);
    if (p.rank() == 0) {
      const auto level1_blocks = send.first(static_cast<std::size_t>(r1 * c1) * L1);
      const auto level2_blocks = send.subspan(static_cast<std::size_t>(r1 * c1) * L1);
      chunks.resize(static_cast<std::size_t>(c1) * chunk);
      for (int b = 0; b < c1; ++b) {
        const auto at_b = std::span(chunks).subspan(static_cast<std::size_t>(b) * chunk, chunk);
        pack_into(p, at_b.first(c1_bytes), level1_blocks, {0, 0, r1, c1}, {0, b, r1, 1}, L1);
        pack_into(p, at_b.subspan(c1_bytes), level2_blocks, rp.whole2, {0, b * rp.width, rp.r2, rp.width}, L);
      }
    }
    tree_scatter(p, rp.row, rp.row_rect, 0, at.col, chunks, mine, chunk);
    inter_level_send(p, rp, s, how, std::span<const std::byte>(mine).subspan(c1_bytes), {0, at.col * rp.width, rp.r2, rp.width}, L);
    col_blocks.assign(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(c1_bytes));
  }
  tree_scatter(p, level1, column, at.row, at.col, col_blocks, recv, L1);
}

// Section 5: level2_scatter backwards. The sub-meshes gather to their roots, the roots send to
// their row processor (which receives them in arrival order), and the row gathers to (0,0)_1.
void level2_gather(Proc& p, const std::string& name, SubMesh s, int root, std::span<const std::byte> send,
                   std::span<std::byte> recv, std::size_t L) {
  const RowPlan rp(p, name, s, root);
  const HpamPos at = rp.t->pos(p.rank());
  if (at.level == 1) {
    if (at.row != 0 || at.col % rp.stride) return;
    const int v = at.col / rp.stride;
    const Rect cols{0, v * rp.width, rp.r2, rp.width};
    std::vector<Rect> subs;
    for (int i = rp.r2 / s.p - 1; i >= 0; --i)
      for (int j = cols.c0; j < cols.c0 + rp.width; j += s.q) subs.push_back({i * s.p, j, s.p, s.q});
    ScratchBytes mine(static_cast<std::size_t>(cols.size()) * L);
    receive_submeshes(p, rp.level2, subs, mine, cols, L);
    const std::size_t chunk = mine.size();
    const auto all = tree_gather(p, rp.row, rp.row_rect, 0, v, mine, chunk);
    if (p.rank() != 0) return;
    for (int u = 0; u < rp.k; ++u)
      unpack(p, std::span<const std::byte>(all).subspan(static_cast<std::size_t>(u) * chunk, chunk), recv, rp.whole2,
             {0, u * rp.width, rp.r2, rp.width}, L);
    return;
  }
  const Rect m{at.row / s.p * s.p, at.col / s.q * s.q, s.p, s.q};
  const auto mine = tree_gather(p, rp.level2, m, at.row, at.col, send.first(L), L);
  if (at.row == m.r0 && at.col == m.c0) p.send(rp.server(at.col), kInterTag, mine);
}

// Harness of the broadcast: the root's buffer holds fill_pattern(root, root); every processor
// checks that it holds the same bytes at the end.
using BcastFn = std::function<void(Proc&, int root, std::span<std::byte> buf)>;
using AnalyticFn = std::function<std::optional<double>(const Machine&, std::size_t)>;

Algorithm bcast_entry(std::string name, std::string summary, BcastFn fn, AnalyticFn analytic) {
  auto program = [name, fn](Proc& p, const Args& a) {
    ScratchBytes mem(a.size);
    const std::span<std::byte> buf(mem);
    if (a.check) (p.rank() == a.root ? fill_pattern : mark_undelivered)(a.root, a.root, buf);
    fn(p, a.root, buf);
    p.leave();
    if (a.check) check_pattern(name, a.root, a.root, buf);
  };
  // Every processor's buffer and up to one copy of it in flight per processor.
  auto footprint = [](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps);
    return Footprint{p * size, p * size, 8 * p};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.analytic_us = std::move(analytic);
  alg.raw.bcast_world = std::move(fn);
  return alg;
}

std::string submesh_name(const SubMesh& s) { return fmt::format("{}x{}", s.p, s.q); }

// The first rank of level 2 on a two-level HPAM machine, for the harnesses of level 2 only; p.size()
// on any other machine (the algorithm then refuses it).
int first_level2(const Proc& p) {
  const Hpam* t = as_hpam(p.machine());
  return t && t->levels() == 2 ? t->first(2) : p.size();
}

// The level-2 harnesses' memory: scatter_entry's bound without the levels.
Footprint level2_footprint(int vps, std::size_t size) {
  const auto p = static_cast<std::size_t>(vps);
  return Footprint{2 * p * size, 2 * p * size, 8 * p};
}

// Harness of a gather from level 2 only: every level-2 processor sends fill_pattern(me, root); the
// root's buffer holds one block per level-2 processor, each checked.
Algorithm gather_level2_entry(std::string name, std::string summary, RootedFn fn) {
  auto program = gather_program(name, std::move(fn), first_level2);
  return Algorithm{std::move(name), std::move(summary), std::move(program), level2_footprint};
}

// Harness of a scatter to level 2 only (section 4.2): the root holds one block per level-2
// processor, in level 2's row-major order; every level-2 processor checks its block.
Algorithm scatter_level2_entry(std::string name, std::string summary, RootedFn fn) {
  auto program = scatter_program(name, std::move(fn), first_level2);
  return Algorithm{std::move(name), std::move(summary), std::move(program), level2_footprint};
}

}  // namespace

TreeRole tree_role(const Rect& whole, int r, int c) {
  TreeRole t;
  t.mine = whole;
  Rect cur = whole;
  bool holder = r == whole.r0 && c == whole.c0;
  while (cur.size() > 1) {
    const auto [keep, give] = halve(cur);
    if (holder) {
      t.children.push_back(give);
      cur = keep;
    } else if (give.contains(r, c)) {
      if (r == give.r0 && c == give.c0) {
        t.has_parent = true;
        t.parent_r = cur.r0, t.parent_c = cur.c0;
        t.mine = give;
        holder = true;
      }
      cur = give;
    } else {
      cur = keep;
    }
  }
  return t;
}

SubMesh parse_submesh(const std::string& name, const std::string& param) {
  const auto x = param.find('x');
  auto num = [&](const std::string& s) {
    const auto v = number_in_range(s, 1, 1 << 20);
    if (!v || (*v & (*v - 1)))
      throw UsageError(fmt::format("'{}': the initial sub-mesh must be P2xQ2 with powers of two, e.g. (4x2)", name));
    return *v;
  };
  if (x == std::string::npos) num("");
  return {num(param.substr(0, x)), num(param.substr(x + 1))};
}

static Algorithm bcast_hybrid_named(std::string name, std::string summary, SubMesh s) {
  return bcast_entry(
      name, std::move(summary),
      [name, s](Proc& p, int root, std::span<std::byte> buf) { hybrid_bcast(p, name, s, root, buf); },
      [s](const Machine& m, std::size_t size) -> std::optional<double> {
        const HpamModel h = HpamModel::of(m);
        return to_us(h.r1 * h.c1 > 1 ? h.eq7_hybrid_bcast_multi(size, true) : h.eq5_hybrid_bcast(s.p, s.q, size));
      });
}

Algorithm bcast_hybrid_entry(SubMesh s) {
  return bcast_hybrid_named(fmt::format("bcast/hybrid({})", submesh_name(s)),
                            "paper 001 section 3.1: brute force to the roots of p2 x q2 sub-meshes, then binary trees (eq. 5)", s);
}

// One of the paper's rooted algorithms on sub-meshes of shape s: `entry` is the harness that runs
// it (scatter_entry, gather_entry or their level-2 forms), `run` the algorithm, `eq` the equation
// that predicts it.
using SubMeshRooted = void (*)(Proc&, const std::string&, SubMesh, int, std::span<const std::byte>, std::span<std::byte>,
                               std::size_t);
using SubMeshEquation = Time (*)(const HpamModel&, SubMesh, std::size_t);
static Algorithm submesh_rooted_entry(Algorithm (*entry)(std::string, std::string, RootedFn), const char* kind, SubMesh s,
                                      std::string summary, SubMeshRooted run, SubMeshEquation eq) {
  const std::string name = fmt::format("{}({})", kind, submesh_name(s));
  Algorithm a = entry(name, std::move(summary),
                      [name, s, run](Proc& p, const Group&, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                                     std::size_t L) { run(p, name, s, root, send, recv, L); });
  a.analytic_us = [s, eq](const Machine& m, std::size_t size) -> std::optional<double> { return to_us(eq(HpamModel::of(m), s, size)); };
  return a;
}

static Algorithm scatter_harness(std::string name, std::string summary, RootedFn fn) {
  return scatter_entry(std::move(name), std::move(summary), std::move(fn));
}

Algorithm scatter_hybrid_entry(SubMesh s) {
  return submesh_rooted_entry(scatter_harness, "scatter/hybrid", s,
                              "paper 001 section 4.1: one long message per p2 x q2 sub-mesh root, then binary-tree scatters (eq. 10)",
                              hybrid_scatter, [](const HpamModel& h, SubMesh sm, std::size_t size) { return h.eq10_hybrid_scatter(sm.p, sm.q, size); });
}

Algorithm gather_hybrid_entry(SubMesh s) {
  return submesh_rooted_entry(gather_entry, "gather/hybrid", s, "paper 001 section 5: the hybrid scatter run backwards (eq. 10)", hybrid_gather,
                              [](const HpamModel& h, SubMesh sm, std::size_t size) { return h.eq10_hybrid_scatter(sm.p, sm.q, size); });
}

Algorithm bcast_multicast_entry(SubMesh s) {
  const std::string name = fmt::format("bcast/multicast({})", submesh_name(s));
  return bcast_entry(
      name, "paper 001 sections 3.1, 3.2: inter-level multicast to the roots of p2 x 1 sub-meshes, then binary trees (eqs. 6, 8)",
      [name, s](Proc& p, int root, std::span<std::byte> buf) { multicast_bcast(p, name, s, root, buf); },
      [s](const Machine& m, std::size_t size) -> std::optional<double> {
        const HpamModel h = HpamModel::of(m);
        // Eq. 8 is written for the r2/2 x 1 sub-mesh only.
        if (h.r1 * h.c1 > 1) return s.p * 2 == h.r2 ? std::optional(to_us(h.eq8_multicast_bcast_multi(size, true))) : std::nullopt;
        return to_us(h.eq6_multicast_bcast(s.p, size));
      });
}

Algorithm scatter_multicast_entry(SubMesh s) {
  return submesh_rooted_entry(scatter_harness, "scatter/multicast", s,
                              "paper 001 section 4.1: one replicated message per band of p2 rows, then binary-tree scatters (eq. 11)",
                              multicast_scatter, [](const HpamModel& h, SubMesh sm, std::size_t size) { return h.eq11_multicast_scatter(sm.p, size); });
}

Algorithm scatter_level2_hybrid_entry(SubMesh s) {
  return submesh_rooted_entry(scatter_level2_entry, "scatter/hybrid-level2", s,
                              "paper 001 section 4.2: partial scatter in the source's row, inter-level, binary-tree scatters (eqs. 12, 13)",
                              level2_scatter,
                              [](const HpamModel& h, SubMesh sm, std::size_t size) { return h.eq12_13_hybrid_scatter_multi(sm.p, sm.q, size); });
}

Algorithm scatter_level2_multicast_entry(SubMesh s) {
  return submesh_rooted_entry(
      scatter_level2_entry, "scatter/multicast-level2", s,
      "paper 001 section 4.2: partial scatter in the source's row, one multicast per band of p2 rows, binary-tree scatters (eq. 14)",
      level2_multicast_scatter, [](const HpamModel& h, SubMesh sm, std::size_t size) { return h.eq14_multicast_scatter_multi(sm.p, size); });
}

// Harness of section 4.2's scatters to both levels: the root (0,0)_1 holds level 1's blocks
// (row-major, L1 bytes each: L, or Q L with `qs`) then level 2's (row-major, L bytes each), each
// fill_pattern(root, destination); every processor checks the block it received.
static Algorithm scatter_both_entry(std::string name, std::string summary, SubMesh s, Transfer how, bool qs) {
  auto program = [name, s, how, qs](Proc& p, const Args& a) {
    const HpamModel h = HpamModel::of(p.machine());
    const int n1 = h.r1 * h.c1, n = p.size(), me = p.rank();
    const std::size_t L = a.size, L1 = qs ? static_cast<std::size_t>(h.q_ratio()) * L : L;
    auto size_of = [&](int r) { return r < n1 ? L1 : L; };
    auto offset_of = [&](int r) { return r < n1 ? static_cast<std::size_t>(r) * L1 : static_cast<std::size_t>(n1) * L1 + static_cast<std::size_t>(r - n1) * L; };
    const std::size_t total = me == a.root ? offset_of(n) : 0;
    ScratchBytes send_mem(total), recv_mem(size_of(me));
    const std::span<std::byte> send(send_mem), recv(recv_mem);
    if (a.check && me == a.root)
      for (int dst = 0; dst < n; ++dst) fill_pattern(a.root, dst, send.subspan(offset_of(dst), size_of(dst)));
    if (a.check) mark_undelivered(a.root, me, recv);
    both_levels_scatter(p, name, s, how, a.root, send, recv, L1, L);
    p.leave();
    if (a.check) check_pattern(name, a.root, me, recv);
  };
  // scatter_entry's bound (each block copied at most once per level of the partition and once in
  // flight), with level 1's blocks at most 32 S with `qs` (the largest Q of the paper's tests; the
  // machine, and so Q, is not known here).
  auto footprint = [qs](int vps, std::size_t size) {
    const std::size_t pl = static_cast<std::size_t>(vps) * size * (qs ? 32 : 1);
    return Footprint{(rooted_levels(vps) + 2) * pl, rooted_levels(vps) * pl, 8 * static_cast<std::size_t>(vps)};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  return alg;
}

Algorithm scatter_both_hybrid_entry(SubMesh s, bool qs) {
  return scatter_both_entry(fmt::format("scatter/hybrid-both{}({})", qs ? "-qs" : "", submesh_name(s)),
                            qs ? "paper 001 section 4.2: to both levels, Q S bytes per level-1 processor, S per level-2 one; hybrid transfer"
                               : "paper 001 section 4.2: to both levels, equal sizes: row partial scatter, inter-level first, then both levels' trees",
                            s, Transfer::hybrid, qs);
}

Algorithm scatter_both_multicast_entry(SubMesh s, bool qs) {
  return scatter_both_entry(fmt::format("scatter/multicast-both{}({})", qs ? "-qs" : "", submesh_name(s)),
                            qs ? "paper 001 section 4.2: to both levels, Q S bytes per level-1 processor, S per level-2 one; multicast transfer"
                               : "paper 001 section 4.2: to both levels, equal sizes: row partial scatter, one multicast per band, then both levels' trees",
                            s, Transfer::multicast, qs);
}

Algorithm gather_level2_hybrid_entry(SubMesh s) {
  return submesh_rooted_entry(gather_level2_entry, "gather/hybrid-level2", s, "paper 001 section 5: scatter/hybrid-level2 run backwards (eqs. 12, 13)",
                              level2_gather,
                              [](const HpamModel& h, SubMesh sm, std::size_t size) { return h.eq12_13_hybrid_scatter_multi(sm.p, sm.q, size); });
}

void add_hpam_algorithms(Catalog& catalog) {
  catalog.push_back(bcast_entry(
      "bcast/binary-tree", "paper 001 section 3 (ref. [3]): binary-tree broadcast in a 2-D mesh from its corner, log r + log c steps (eq. 4)",
      [](Proc& p, int root, std::span<std::byte> buf) {
        const auto dims = p.machine().topology->dims();
        if (dims.size() != 2) throw UsageError("bcast/binary-tree: needs a 2-D mesh machine such as mesh:8x8");
        if (root != 0) throw UsageError(fmt::format("bcast/binary-tree: the source must be the corner, rank 0 (got --root {})", root));
        const int cols = dims[1];
        const Mesh m{[cols](int r, int c) { return r * cols + c; }};
        tree_bcast(p, m, {0, 0, dims[0], dims[1]}, p.rank() / cols, p.rank() % cols, buf);
      },
      nullptr));
  catalog.push_back(bcast_hybrid_named(
      "bcast/brute-force", "paper 001 section 3.1: the level-1 processor sends to every level-2 processor in turn (eq. 5 with 1 x 1)", {1, 1}));
  // The sub-mesh families: "bcast/hybrid(4x2)" and the like (SubMesh p2 x q2, parse_submesh).
  const std::pair<const char*, Algorithm (*)(SubMesh)> families[] = {
      {"bcast/hybrid(", bcast_hybrid_entry},
      {"scatter/hybrid(", scatter_hybrid_entry},
      {"bcast/multicast(", bcast_multicast_entry},
      {"scatter/multicast(", scatter_multicast_entry},
      {"scatter/multicast-level2(", scatter_level2_multicast_entry},
      {"scatter/hybrid-level2(", scatter_level2_hybrid_entry},
      {"scatter/hybrid-both(", [](SubMesh s) { return scatter_both_hybrid_entry(s); }},
      {"scatter/multicast-both(", [](SubMesh s) { return scatter_both_multicast_entry(s); }},
      {"scatter/hybrid-both-qs(", [](SubMesh s) { return scatter_both_hybrid_entry(s, true); }},
      {"scatter/multicast-both-qs(", [](SubMesh s) { return scatter_both_multicast_entry(s, true); }},
      {"gather/hybrid-level2(", gather_level2_hybrid_entry},
      {"gather/hybrid(", gather_hybrid_entry},
  };
  for (const auto& [prefix, make] : families)
    catalog.add_family(prefix, [make = make](const std::string& name, const std::string& param) {
      return make(parse_submesh(name, param));
    });
}

}  // namespace touchstone::algorithms
