// Paper 000 (Hambrusch, Hameed, Khokhar), section 5: all-to-all algorithms.
#include "families.hpp"
#include "alltoall.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "combine.hpp"
#include "common.hpp"
#include "exchange.hpp"
#include "harness.hpp"
#include "permutations.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
// The tag of the MPI libraries' all-to-alls (the papers' use theirs).
constexpr int kBruckTag = 9;
}  // namespace

// Section 5.3: "Algorithm 1-lev-dir, in which each processor simply issues its p - 1 sends and
// p - 1 receives". Receives are posted first so that arriving messages land in place; the sends
// follow the section 3.2 rule, farthest destination first; all are non-blocking (Figure 9 reports
// non-blocking sends).
void alltoall_1lev_dir(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  copy_own_block(p, me, send, recv, size);
  std::vector<int> others;
  for (int r = 0; r < n; ++r)
    if (r != me) others.push_back(r);
  std::vector<Request> reqs;
  reqs.reserve(2 * others.size());
  for (int src : others) reqs.push_back(p.irecv(src, kExchangeTag, block(recv, src, size), g));
  for (int dst : farthest_first(p, g, others)) reqs.push_back(p.isend(dst, kExchangeTag, block(send, dst, size), g));
  p.waitall(reqs);
}

// Section 5.1: "When partitioning into linear permutations, processor P_j sends a message to
// processor P_((i+j) mod (p-1)) in the i-th permutation" (read mod p: see linear_schedule).
void alltoall_1lev_lin(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size) {
  const Group g = resolve(p, g0);
  alltoall_by_schedule(p, g, shared_schedule("linear", {g.size()}), send, recv, size);
}

// Section 5.1: "in the i-th permutation processor P_j sends a message to P_(i xor j)". Each
// permutation is an exchange between partners; a processor moves to permutation i + 1 once its
// exchange of permutation i is complete.
void alltoall_1lev_xor(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size) {
  const Group g = resolve(p, g0);
  alltoall_by_schedule(p, g, shared_schedule("xor", {g.size()}), send, recv, size);
}

// Section 5.1: balanced permutations, "the permutations for the mesh are obtained by performing a
// cross product" of those of its linear arrays. On the whole machine of a grid the schedule follows
// the machine's dimensions; any other group is treated as a linear array.
void alltoall_1lev_bal(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t size) {
  const Group g = resolve(p, g0);
  std::vector<int> shape{g.size()};
  if (is_whole_machine(p, g) && !p.machine().topology->dims().empty()) shape = p.machine().topology->dims();
  alltoall_by_schedule(p, g, shared_schedule("balanced", shape), send, recv, size);
}

namespace {
// The sub-meshes of 2-lev-sq: sqrt(p) tiles of a x b = sqrt(p) processors, numbered row-major over
// the mesh; processors numbered row-major inside their tile.
struct Tiling {
  int rows, cols, a, b;  // mesh R x C, tiles a x b
  int tiles_per_row() const { return cols / b; }
  int tile_of(int rank) const { return (rank / cols / a) * tiles_per_row() + (rank % cols) / b; }
  int index_in_tile(int rank) const { return (rank / cols % a) * b + rank % cols % b; }
  int member(int tile, int i) const {
    return ((tile / tiles_per_row()) * a + i / b) * cols + (tile % tiles_per_row()) * b + i % b;
  }
};

Tiling square_tiling(const MeshShape& m, int n) {
  int s = 0;
  while ((s + 1) * (s + 1) <= n) ++s;
  if (s * s != n) throw UsageError(fmt::format("2-lev-sq needs p to be a perfect square (p = {})", n));
  // The most square a x b with a * b = sqrt(p) that tiles the mesh: p^(1/4) x p^(1/4) when it can.
  int best_a = 0;
  for (int a = 1; a <= s; ++a)
    if (s % a == 0 && m.rows % a == 0 && m.cols % (s / a) == 0 &&
        (!best_a || std::abs(a - s / a) < std::abs(best_a - s / best_a)))
      best_a = a;
  if (!best_a)
    throw UsageError(fmt::format("2-lev-sq needs the {}x{} mesh to split into sqrt(p) = {} sub-meshes of {} processors",
                                 m.rows, m.cols, s, s));
  return Tiling{m.rows, m.cols, best_a, s / best_a};
}
}  // namespace

// Sections 5.2 and 5.3, the 3-step algorithm: "each submachine is a square submesh of size
// p^(1/4) x p^(1/4)"; P_i of submachine S_j
//   step 1: gathers, by a 1-level all-to-all (1-lev-xor) within S_j, "the p messages originating
//           within submachine S_j and destined for the processors in submachine S_i" (combined
//           messages of sqrt(p) L bytes);
//   step 2: "sends a concatenation of the sqrt(p) messages it received in the first step to
//           processor P_j in submachine S_i" (one message of p L bytes);
//   step 3: splits what it received into sqrt(p) messages, one per processor of S_j, and delivers
//           them by a second all-to-all within S_j.
void alltoall_2lev_sq(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                      std::size_t size) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  const Tiling t = square_tiling(mesh_shape_of(p, g, "2-lev-sq"), n);
  const int s = t.a * t.b, j = t.tile_of(me), i = t.index_in_tile(me);
  const std::size_t L = size, total = static_cast<std::size_t>(n) * L;
  std::vector<int> members;
  for (int k = 0; k < s; ++k) members.push_back(t.member(j, k));
  const Group S = p.subgroup(g, members);
  // x is a scratch buffer and y the receive buffer itself (one p L scratch per processor, not two,
  // so that large machines fit in host memory); the last copy goes from x into recv.
  Scratch scratch(total);
  const std::span<std::byte> x = scratch.span(), y = recv.first(total);
  // Step 1: x[i'][m] = my block for processor m of S_i'; afterwards y[k][m] is what processor k
  // of S_j sends to processor m of S_i.
  copy_charged(p, [&](Copier& copy) {
    for (int i2 = 0; i2 < s; ++i2)
      for (int m = 0; m < s; ++m) copy(block(x, i2 * s + m, L), block(send, t.member(i2, m), L));
  });
  alltoall_1lev_xor(p, S, x, y, static_cast<std::size_t>(s) * L);
  end_superstep(p, g);
  // Step 2: the transpose; x[k][m] = from processor k of S_i to processor m of S_j.
  exchange(p, g, t.member(i, j), y, x);
  end_superstep(p, g);
  // Step 3: y[m][k] = x[k][m] goes to processor m of S_j; afterwards x[m'][k] is the block that
  // processor k of S_m' sent to this processor.
  transpose_blocks(p, x, y, s, s, L);
  alltoall_1lev_xor(p, S, y, x, static_cast<std::size_t>(s) * L);
  copy_charged(p, [&](Copier& copy) {
    for (int m = 0; m < s; ++m)
      for (int k = 0; k < s; ++k) copy(block(recv, t.member(m, k), L), block(std::span<const std::byte>(x), m * s + k, L));
  });
}

// Sections 5.2 and 5.3, the 2-step algorithm: "submachine S_i corresponds to the i-th column and
// submachine T_j corresponds to the j-th row of the mesh. We use Algorithm 1-lev-xor as the
// 1-level algorithm within the columns (and then the rows)." After the first step P_(r,c) holds
// the messages from column c to row r; the second step delivers them within row r. The rows and
// columns of any R x C mesh meet in exactly one processor, so any shape works.
void alltoall_2lev_cr(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                      std::size_t size) {
  const Group g = resolve(p, g0);
  const auto [R, C] = mesh_shape_of(p, g, "2-lev-c,r");
  const int me = g.local_rank(p.rank()), r = me / C, c = me % C;
  const std::size_t L = size, total = static_cast<std::size_t>(R) * static_cast<std::size_t>(C) * L;
  std::vector<int> column, row;
  for (int k = 0; k < R; ++k) column.push_back(k * C + c);
  for (int k = 0; k < C; ++k) row.push_back(r * C + k);
  const Group S = p.subgroup(g, column), T = p.subgroup(g, row);
  // x is a scratch buffer and y the receive buffer itself (one p L scratch per processor, not two).
  Scratch scratch(total);
  const std::span<std::byte> x = scratch.span(), y = recv.first(total);
  // Step 1, within column c: my blocks for row r' are contiguous in send (row-major ranks), one
  // combined message of C L bytes. x[r'][c'] = from (r', c) to (r, c').
  alltoall_1lev_xor(p, S, send, x, static_cast<std::size_t>(C) * L);
  end_superstep(p, g);
  // Step 2, within row r: to (r, c') go the R blocks x[*][c']. x[c'][r'] = from (r', c') to me.
  transpose_blocks(p, x, y, R, C, L);
  alltoall_1lev_xor(p, T, y, x, static_cast<std::size_t>(R) * L);
  transpose_blocks(p, x, recv, C, R, L);
}

// Section 5.3, after [12]: "processor P_ij does not wait until all sqrt(p) large messages have
// been received, but sends out messages of size L to the destination processors in submachine T_j
// as soon as they are received." The column step is 1-lev-xor with combined messages; as each
// exchange completes, the L-byte pieces of the message just received leave along the row
// (farthest first, non-blocking), tagged with their source row so that they land in place.
// Interleaving the steps removes the superstep boundary, so no barrier separates them.
void alltoall_2lev_cr_int(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                          std::size_t size) {
  const Group g = resolve(p, g0);
  const auto [R, C] = mesh_shape_of(p, g, "2-lev-c,r-int");
  const int me = g.local_rank(p.rank()), r = me / C, c = me % C;
  const std::size_t L = size, row_bytes = static_cast<std::size_t>(C) * L;
  std::vector<int> column, row, mates;
  for (int k = 0; k < R; ++k) column.push_back(k * C + c);
  for (int k = 0; k < C; ++k) row.push_back(r * C + k);
  const Group S = p.subgroup(g, column), T = p.subgroup(g, row);
  for (int k = 0; k < C; ++k)
    if (k != c) mates.push_back(k);
  mates = farthest_first(p, T, mates);
  std::vector<Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(R) * mates.size());
  // Every piece of step 2 lands in place: the one from row mate c' with tag r' comes from (r', c').
  for (int c2 : mates)
    for (int r2 = 0; r2 < R; ++r2) reqs.push_back(p.irecv(c2, r2, block(recv, r2 * C + c2, L), T));
  // Forwards the combined message from (r2, c): its piece for (r, c') goes to row mate c'.
  auto forward = [&](int r2, std::span<const std::byte> combined) {
    copy_charged(p, [&](Copier& copy) { copy(block(recv, r2 * C + c, L), block(combined, c, L)); });
    for (int c2 : mates) reqs.push_back(p.isend(c2, r2, block(combined, c2, L), T));
  };
  forward(r, block(send, r, row_bytes));
  Scratch x(static_cast<std::size_t>(R) * row_bytes);
  for (int i = 1; i < ceil_pow2(R); ++i) {
    const int partner = r ^ i;
    if (partner >= R) continue;
    exchange(p, S, partner, block(send, partner, row_bytes), block(x.span(), partner, row_bytes));
    forward(partner, block(x.span(), partner, row_bytes));
  }
  p.waitall(reqs);
}

// Section 5.2: "In the first superstep of this algorithm every processor P_i sends the p/2 messages
// destined for the p/2 processors not in its half to processor P_((i+p/2) mod p). After the
// received messages are combined with the messages that remained in a processor, all-to-all is
// performed on two p/2-processor submachines." The halves stay aligned, so the partner in a
// submachine of 2h processors is P_(i xor h). A processor holds p blocks throughout, kept in
// (destination, source) order, which both partners of an exchange can compute. In that order the
// p/2 blocks that leave form one contiguous run, sent as it lies; combining the received blocks
// with those that remained is a local copy (charged), the last one straight into recv.
void alltoall_logp_lev_bfly(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                            std::size_t size) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  if (n & (n - 1))
    throw UsageError(fmt::format("logp-lev-bfly needs a power-of-two number of processors (p = {})", n));
  const std::size_t L = size, un = static_cast<std::size_t>(n);
  struct Key {
    int dst, src;
    auto operator<=>(const Key&) const = default;
  };
  std::vector<Key> keys(un);
  for (int d = 0; d < n; ++d) keys[static_cast<std::size_t>(d)] = {d, me};
  if (n == 1) return copy_own_block(p, me, send, recv, L);
  // The blocks held move between two buffers, the receive buffer and one scratch, alternating so
  // that the last superstep writes recv (one p L scratch per processor, not two).
  Scratch a(un * L), in(un / 2 * L);
  std::span<const std::byte> data = send.first(un * L);  // the blocks held, in key order
  int steps_left = 0;
  for (int half = n / 2; half >= 1; half /= 2) ++steps_left;
  for (int half = n / 2; half >= 1; half /= 2, --steps_left) {
    std::vector<std::pair<Key, std::span<const std::byte>>> merged;
    std::vector<Key> incoming;
    std::size_t first_out = un, last_out = 0;  // the leaving blocks: [first_out, first_out + n/2)
    for (std::size_t idx = 0; idx < un; ++idx) {
      if ((keys[idx].dst & half) != (me & half)) {
        first_out = std::min(first_out, idx);
        last_out = idx;
      } else {
        merged.emplace_back(keys[idx], block(data, static_cast<int>(idx), L));
        incoming.push_back({keys[idx].dst, keys[idx].src ^ half});  // the partner's sources
      }
    }
    if (last_out + 1 - first_out != un / 2) throw std::logic_error("logp-lev-bfly: the leaving blocks are not one run");
    exchange(p, g, me ^ half, data.subspan(first_out * L, un / 2 * L), in);
    std::sort(incoming.begin(), incoming.end());
    for (std::size_t idx = 0; idx < incoming.size(); ++idx)
      merged.emplace_back(incoming[idx], block(std::span<const std::byte>(in), static_cast<int>(idx), L));
    std::sort(merged.begin(), merged.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    // Every block left after the last exchange is for this processor, in source order.
    const std::span<std::byte> next = steps_left % 2 == 1 ? recv.first(un * L) : a.span();
    copy_charged(p, [&](Copier& copy) {
      for (std::size_t idx = 0; idx < un; ++idx) {
        keys[idx] = merged[idx].first;
        copy(block(next, static_cast<int>(idx), L), merged[idx].second);
      }
    });
    data = next;
    if (half > 1) end_superstep(p, g);
  }
}

// --- The MPI libraries' all-to-alls (alltoall.hpp), on any group ---

void alltoall_bruck(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                    std::size_t L) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  // tmp block k: first the block for rank me + k; after the rounds, the block from rank me - k.
  ScratchBytes tmp(static_cast<std::size_t>(n) * L), out, in;
  auto slot = [&](int k) { return std::span(tmp).subspan(static_cast<std::size_t>(k) * L, L); };
  copy_charged(p, [&](Copier& copy) {
    for (int k = 0; k < n; ++k) copy(slot(k), block(send, (me + k) % n, L));
  });
  for (int d = 1; d < n; d *= 2) {
    std::vector<int> moving;
    for (int k = 1; k < n; ++k)
      if (k & d) moving.push_back(k);
    out.resize(moving.size() * L);
    in.resize(out.size());
    copy_charged(p, [&](Copier& copy) {
      for (std::size_t i = 0; i < moving.size(); ++i) copy(std::span(out).subspan(i * L, L), slot(moving[i]));
    });
    p.sendrecv((me + d) % n, kBruckTag, out, (me - d + n) % n, kBruckTag, in, g);
    copy_charged(p, [&](Copier& copy) {
      for (std::size_t i = 0; i < moving.size(); ++i)
        copy(slot(moving[i]), std::span<const std::byte>(in).subspan(i * L, L));
    });
  }
  copy_charged(p, [&](Copier& copy) {
    for (int k = 0; k < n; ++k) copy(block(recv, (me - k + n) % n, L), slot(k));
  });
}

void alltoall_pairwise(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                       std::size_t L) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  copy_charged(p, [&](Copier& copy) { copy(block(recv, me, L), block(send, me, L)); });
  const bool pof2 = (n & (n - 1)) == 0;
  for (int i = 1; i < n; ++i) {
    const int to = pof2 ? me ^ i : (me + i) % n, from = pof2 ? me ^ i : (me - i + n) % n;
    p.sendrecv(to, kBruckTag, block(send, to, L), from, kBruckTag, block(recv, from, L), g);
  }
}

void alltoall_linear(Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::size_t L) {
  const Group g = resolve(p, g0);
  const int n = g.size(), me = g.local_rank(p.rank());
  copy_charged(p, [&](Copier& copy) { copy(block(recv, me, L), block(send, me, L)); });
  std::vector<Request> rs;
  for (int i = 1; i < n; ++i) rs.push_back(p.irecv((me - i + n) % n, kBruckTag, block(recv, (me - i + n) % n, L), g));
  for (int i = 1; i < n; ++i) rs.push_back(p.isend((me + i) % n, kBruckTag, block(send, (me + i) % n, L), g));
  p.waitall(rs);
}

void add_alltoall_algorithms(Catalog& c) {
  c.push_back(alltoall_entry("alltoall/1-lev-dir", "p-1 direct sends, farthest first (paper 000, sec. 5.1, 5.3)",
                             alltoall_1lev_dir, {.scratch_halves = 0, .in_flight_halves = 2, .all_sends_at_once = true}));
  c.push_back(alltoall_entry("alltoall/1-lev-lin", "p-1 linear permutations (paper 000, sec. 5.1)",
                             alltoall_1lev_lin));
  c.push_back(alltoall_entry("alltoall/1-lev-xor", "p-1 exclusive-or permutations (paper 000, sec. 5.1)",
                             alltoall_1lev_xor));
  c.push_back(alltoall_entry("alltoall/1-lev-bal", "balanced permutations, rows x columns (paper 000, sec. 5.1)",
                             alltoall_1lev_bal));
  c.push_back(alltoall_entry("alltoall/2-lev-sq", "3-step algorithm on sqrt(p) square sub-meshes (paper 000, sec. 5.2, 5.3)",
                             alltoall_2lev_sq, {.scratch_halves = 2, .in_flight_halves = 2}));
  c.push_back(alltoall_entry("alltoall/2-lev-c,r", "2-step algorithm, 1-lev-xor in columns then rows (paper 000, sec. 5.2, 5.3)",
                             alltoall_2lev_cr, {.scratch_halves = 2, .in_flight_halves = 2}));
  c.push_back(alltoall_entry("alltoall/2-lev-c,r-int", "2-lev-c,r with the steps interleaved (paper 000, sec. 5.3)",
                             alltoall_2lev_cr_int, {.scratch_halves = 2, .in_flight_halves = 2, .all_sends_at_once = true}));
  c.push_back(alltoall_entry("alltoall/logp-lev-bfly", "log p butterfly supersteps (paper 000, sec. 5.2)",
                             alltoall_logp_lev_bfly, {.scratch_halves = 3, .in_flight_halves = 1}));
  c.push_back(alltoall_entry("alltoall/bruck",
                             "Bruck et al. 1997: ceil(log p) rounds of combined blocks (MPICH, short messages)",
                             alltoall_bruck, {.scratch_halves = 4, .in_flight_halves = 2}));
  c.push_back(alltoall_entry("alltoall/pairwise",
                             "pairwise exchange, xor or shifted partners (Thakur et al. 2005; MPICH, long)",
                             alltoall_pairwise));
  c.push_back(alltoall_entry("alltoall/linear", "all sends and receives posted at once (Open MPI's basic linear)",
                             alltoall_linear, {.scratch_halves = 0, .in_flight_halves = 2, .all_sends_at_once = true}));
}

}  // namespace touchstone::algorithms
