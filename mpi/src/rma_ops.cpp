// The RMA operations (MPI-3.1 11.3): each is an active message to the target (docs/model.md 7),
// whose handler applies it to the target's window memory when it arrives, whatever the target is
// doing; a reply carries data back where the operation returns some (get, get-accumulate,
// fetch-and-op, compare-and-swap). Handlers of one node never overlap, so an accumulate is atomic
// as a whole, hence per element as MPI requires (docs/mpi.md "One-sided communication").
//
// On the wire, a request's argument words are the target's window handle, the displacement, the
// operation, its predefined type, the number of runs of the target's layout and the data bytes;
// its payload is the runs (two 8-byte words each, none for a contiguous target layout), then the
// origin's packed data.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "check.hpp"
#include "comm.hpp"
#include "request.hpp"
#include "rma.hpp"
#include "types.hpp"

namespace touchstone::mpi {

namespace {

using Runs = std::vector<std::int64_t>;  // (offset, length) pairs

// --- the target's side: handlers run inside the engine, on the target's behalf ---

Window& target_window(RankState& rs, std::int64_t handle) {
  Windows& ws = windows(rs);
  if (handle <= 0 || handle >= static_cast<std::int64_t>(ws.table.size()) ||
      !ws.table[static_cast<std::size_t>(handle)])
    throw UsageError(
        fmt::format("an RMA operation reached window {} of rank {}, which is freed", handle, rs.proc->rank()));
  return *ws.table[static_cast<std::size_t>(handle)];
}

std::byte* target_address(const Window& w, std::int64_t disp) {
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(disp));
  return static_cast<std::byte*>(w.base) + disp * w.disp_unit;
}

// The target's layout and the data behind it in a request's payload.
struct Layout {
  std::span<const std::int64_t> runs;  // empty: `bytes` contiguous bytes
  std::span<const std::byte> data;
};
Layout decode(std::span<const std::byte> payload, std::int64_t nruns) {
  const auto n = static_cast<std::size_t>(nruns) * 2;
  Layout l;
  l.runs = {reinterpret_cast<const std::int64_t*>(payload.data()), n};
  l.data = payload.subspan(n * 8);
  return l;
}

void gather(const std::byte* at, std::span<const std::int64_t> runs, std::span<std::byte> out) {
  if (runs.empty()) {
    if (!out.empty()) std::memcpy(out.data(), at, out.size());
    return;
  }
  std::size_t o = 0;
  for (std::size_t i = 0; i < runs.size(); i += 2) {
    std::memcpy(out.data() + o, at + runs[i], static_cast<std::size_t>(runs[i + 1]));
    o += static_cast<std::size_t>(runs[i + 1]);
  }
}

void scatter(std::byte* at, std::span<const std::int64_t> runs, std::span<const std::byte> in) {
  if (runs.empty()) {
    if (!in.empty()) std::memcpy(at, in.data(), in.size());
    return;
  }
  std::size_t o = 0;
  for (std::size_t i = 0; i < runs.size(); i += 2) {
    std::memcpy(at + runs[i], in.data() + o, static_cast<std::size_t>(runs[i + 1]));
    o += static_cast<std::size_t>(runs[i + 1]);
  }
}

// Applies `in` (op) to the target's elements behind l.runs: what an accumulate does there.
// Charges the handler the operator's cost per byte (nothing for MPI_REPLACE and MPI_NO_OP).
void apply(RankState& rs, AmContext& c, const NodeCosts& costs, std::byte* at, std::span<const std::int64_t> runs,
           MPI_Op op, MPI_Datatype base, std::span<const std::byte> in) {
  if (op == MPI_NO_OP) return;
  if (op == MPI_REPLACE) return scatter(at, runs, in);
  std::vector<std::byte> current(in.size());
  gather(at, runs, current);
  bool commutative = true;
  packed_reducer(rs, op, base, *predefined_type(base), commutative)(in, current);
  scatter(at, runs, current);
  c.compute(static_cast<Time>(in.size()) * costs.reduce_per_byte(operand_class(base)));
}

enum Arg { kHandle = 0, kDisp, kOp, kBase, kRuns, kBytes };

// The operation word of a request: the MPI_Op in its low 32 bits, and above them the access's
// kind, the kind of epoch it belongs to and, in a fence epoch, the origin's fence count, which the
// target's conflict check uses: no byte more on the wire. A lock taken with MPI_MODE_NOCHECK
// makes no epoch the target could see end (no unlock reaches it), so its accesses go unchecked.
std::int64_t op_word(const Window& w, int target, MPI_Op op, AccessKind kind) {
  EpochKind epoch = EpochKind::none;
  std::int64_t fences = 0;
  const int lock = w.locked[static_cast<std::size_t>(target)];
  if (lock != 0) {
    epoch = (lock & kNoCheckBit) ? EpochKind::none : EpochKind::lock;
  } else if (w.started) {
    epoch = EpochKind::post_start;
  } else if (w.fence_epoch) {
    epoch = EpochKind::fence;
    fences = w.fences;
  }
  return static_cast<std::int64_t>(static_cast<std::uint32_t>(op)) | static_cast<std::int64_t>(kind) << 32 |
         static_cast<std::int64_t>(epoch) << 34 | fences << 36;
}
MPI_Op op_of(std::int64_t word) { return static_cast<MPI_Op>(static_cast<std::int32_t>(word & 0xffffffff)); }

const char* kind_name(AccessKind k) {
  switch (k) {
    case AccessKind::put: return "put";
    case AccessKind::get: return "get";
    case AccessKind::accumulate: return "accumulate";
  }
  return "access";
}

const char* access_name(const AccessRecord& r) {
  if (!r.local) return kind_name(r.kind);
  return r.kind == AccessKind::get ? "MPI call reading its own window memory (a put's origin buffer)"
                                   : "MPI call writing its own window memory (a get's result buffer)";
}

// MPI-3.1 11.7: accesses of two origins to one location in one epoch conflict unless both are
// gets, or both accumulates (the atomic ones: accumulate, get-accumulate, fetch-and-op,
// compare-and-swap) on the same predefined type.
bool compatible(const AccessRecord& a, const AccessRecord& b) {
  if (a.kind == AccessKind::get && b.kind == AccessKind::get) return true;
  return a.kind == AccessKind::accumulate && b.kind == AccessKind::accumulate && a.base == b.base;
}

// The first byte both record, if any (both lists sorted).
std::optional<std::pair<std::uintptr_t, std::uintptr_t>> overlap(const AccessRecord& a, const AccessRecord& b) {
  std::size_t i = 0, j = 0;
  while (i < a.ranges.size() && j < b.ranges.size()) {
    const auto lo = std::max(a.ranges[i].first, b.ranges[j].first),
               hi = std::min(a.ranges[i].second, b.ranges[j].second);
    if (lo < hi) return std::pair{lo, hi};
    if (a.ranges[i].second < b.ranges[j].second)
      ++i;
    else
      ++j;
  }
  return std::nullopt;
}

const char* epoch_name(EpochKind e) {
  switch (e) {
    case EpochKind::fence: return "fence epoch";
    case EpochKind::post_start: return "exposure epoch (MPI_Win_post)";
    case EpochKind::lock: return "passive-target epoch (both held locks)";
    case EpochKind::none: break;
  }
  return "epoch";
}

// Records an access at the target and notes the first conflict with another origin's access of
// the same epoch: a fence epoch (the origin's fence count, the same on every rank), the target's
// exposure epoch (its MPI_Win_post count: an origin's access can only arrive while it is open),
// or a passive-target epoch (an access stays recorded until its origin's next flush or unlock
// reaches the target, so two recorded accesses of different origins were concurrent). The
// target's next fence or wait reports a conflict of its active-target epochs; the origin's
// next flush or unlock reports one its own access made in a passive-target epoch. Operations
// with a reply (gets, get-accumulates, fetch-and-ops, compare-and-swaps) of a passive-target
// epoch are checked but not recorded: they are complete when their reply comes, which no
// message tells the target, so a later access could not be told from a concurrent one. A window
// keeps at most kMaxRecorded accesses (later ones go unchecked).
constexpr std::size_t kMaxRecorded = 4096;
// Returns whether the access was recorded (at the back of w.epoch_accesses).
bool record_access(Window& w, int target, int origin, std::int64_t word, std::byte* at,
                   std::span<const std::int64_t> runs, std::size_t bytes, MPI_Datatype base, bool replies) {
  const auto epoch = static_cast<EpochKind>((word >> 34) & 3);
  if (epoch == EpochKind::none || bytes == 0 || w.epoch_accesses.size() >= kMaxRecorded) return false;
  const std::int64_t count = epoch == EpochKind::fence ? word >> 36 : epoch == EpochKind::post_start ? w.posts : 0;
  AccessRecord r{origin, epoch, count, static_cast<AccessKind>((word >> 32) & 3), base, {}};
  const auto start = reinterpret_cast<std::uintptr_t>(at);
  if (runs.empty()) r.ranges.emplace_back(start, start + bytes);
  for (std::size_t i = 0; i < runs.size(); i += 2)
    r.ranges.emplace_back(start + static_cast<std::uintptr_t>(runs[i]),
                          start + static_cast<std::uintptr_t>(runs[i] + runs[i + 1]));
  std::sort(r.ranges.begin(), r.ranges.end());
  std::string& report = epoch == EpochKind::lock ? w.lock_conflicts[origin] : w.conflict;
  if (report.empty())
    for (const AccessRecord& e : w.epoch_accesses) {
      if (e.epoch != epoch || e.count != count || e.origin == origin || compatible(e, r)) continue;
      const auto both = overlap(e, r);
      if (!both) continue;
      const std::uintptr_t from = w.flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : reinterpret_cast<std::uintptr_t>(w.base);
      report = fmt::format(
          "rank {}'s {} and rank {}'s {} (world ranks) both reach bytes [{}, {}) of rank {}'s window in one {}: "
          "conflicting accesses (MPI-3.1 11.7)",
          e.origin, access_name(e), origin, kind_name(r.kind), both->first - from, both->second - from, target,
          epoch_name(epoch));
      break;
    }
  if (report.empty() && epoch == EpochKind::lock) w.lock_conflicts.erase(origin);
  if (epoch == EpochKind::lock && replies) return false;
  w.epoch_accesses.push_back(std::move(r));
  return true;
}

// The hash of a record's bytes as they are now.
std::uint64_t ranges_hash(const AccessRecord& r) {
  std::uint64_t h = 0;
  for (const auto& [lo, hi] : r.ranges) h = h * 31 + bytes_hash(lo, hi);
  return h;
}

// After an RMA access reached bytes [lo, hi) of this rank's memory (mpirun --check): the record it
// made, if any (`made`: the back of w's records), takes the hash of its bytes as the access left
// them, and when it wrote them the other records whose bytes it reaches, in every window of the
// rank (windows may share memory), can no longer tell a store from it: they drop their hash. A
// change of a hashed record's bytes found when its epoch ends was then made by no RMA access.
void seal_access(RankState& rs, Window& w, bool made, bool writes, std::uintptr_t lo, std::uintptr_t hi) {
  if (!w.hash_accesses) return;
  AccessRecord* mine = made ? &w.epoch_accesses.back() : nullptr;
  if (writes)
    for (auto& wp : windows(rs).table) {
      if (!wp) continue;
      for (AccessRecord& r : wp->epoch_accesses)
        if (&r != mine && r.hashed && r.ranges.front().first < hi && lo < r.ranges.back().second) r.hashed = false;
    }
  if (mine && !mine->local) {
    mine->hash = ranges_hash(*mine);
    mine->hashed = true;
  }
}

// The bytes [lo, hi) an access at `at` reaches, holes included.
std::pair<std::uintptr_t, std::uintptr_t> span_of(std::byte* at, std::span<const std::int64_t> runs,
                                                  std::size_t bytes) {
  const auto start = reinterpret_cast<std::uintptr_t>(at);
  if (runs.empty()) return {start, start + bytes};
  std::uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (std::size_t i = 0; i < runs.size(); i += 2) {
    lo = std::min(lo, start + static_cast<std::uintptr_t>(runs[i]));
    hi = std::max(hi, start + static_cast<std::uintptr_t>(runs[i] + runs[i + 1]));
  }
  return {lo, hi};
}

}  // namespace

std::uint64_t bytes_hash(std::uintptr_t lo, std::uintptr_t hi) {
  return checksum(reinterpret_cast<const void*>(lo), hi - lo);
}

std::string end_records(Window& w, int target, const std::function<bool(const AccessRecord&)>& ends) {
  std::string changed;
  const std::uintptr_t from = w.flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : reinterpret_cast<std::uintptr_t>(w.base);
  std::erase_if(w.epoch_accesses, [&](const AccessRecord& r) {
    if (!ends(r)) return false;
    if (r.hashed && changed.empty() && ranges_hash(r) != r.hash)
      changed = fmt::format(
          "bytes [{}, {}) of rank {}'s window, which rank {}'s {} (world rank) reached in a {}, changed before the "
          "epoch ended by no RMA operation: a store of rank {} (or an MPI call other than RMA) into its window "
          "memory and the {}: conflicting accesses (MPI-3.1 11.7)",
          r.ranges.front().first - from, r.ranges.back().second - from, target, r.origin, kind_name(r.kind),
          epoch_name(r.epoch), target, kind_name(r.kind));
    return true;
  });
  return changed;
}

namespace {
// What check_against_rma calls the result buffer of a get (and of the fetching operations).
constexpr std::string_view kResultBuffer = "result buffer";
}  // namespace

void check_against_rma(RankState& rs, std::uintptr_t lo, std::uintptr_t hi, bool writes, const char* what,
                       bool window_memory) {
  if (!rs.windows || lo >= hi) return;
  const char* call = rs.last_call ? rs.last_call : "the call";
  for (auto& wp : rs.windows->table) {
    if (!wp) continue;
    Window& w = *wp;
    for (const OwnedBuffer& b : w.owned) {
      if ((b.op && b.op->complete) || !(writes || b.written) || b.hi <= lo || hi <= b.lo) continue;
      // Two gets into the same bytes write them concurrently, which leaves which value stays
      // undefined (MPI-3.1 11.7), as two puts to one target location do: a conflict, not a misuse
      // of the buffer (MPICH's rma/manyget does it a thousand times in one epoch).
      if (b.written && std::string_view(what) == kResultBuffer) {
        if (!w.conflicts_are_errors && w.warned_shared_results) continue;
        w.warned_shared_results = true;
        report_conflict(rs, w,
                        fmt::format("the result buffer of {}{} takes bytes that the result buffer of the pending {}{} "
                                    "(to rank {}) takes too: two gets write them concurrently, conflicting accesses",
                                    call, site_text(rs.caller), b.call, site_text(b.caller), b.target));
        continue;
      }
      throw MpiError{MPI_ERR_BUFFER,
                     fmt::format("the {} of {}{} {} bytes that the {} buffer of the {}{} (to rank {}) holds, which "
                                 "belongs to that operation until it completes (the epoch's synchronization or a "
                                 "flush, MPI-3.1 11.3)",
                                 what, call, site_text(rs.caller), writes ? "takes" : "reads",
                                 b.written ? "result" : "origin", b.call, site_text(b.caller), b.target)};
    }
    if (!window_memory) continue;
    for (const AccessRecord& r : w.epoch_accesses) {
      if (r.local || (!writes && r.kind == AccessKind::get)) continue;
      for (const auto& [a, z] : r.ranges) {
        if (z <= lo || hi <= a) continue;
        const std::uintptr_t from = w.flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : reinterpret_cast<std::uintptr_t>(w.base);
        report_conflict(
            rs, w,
            fmt::format("the {} of {}{} {} bytes [{}, {}) of rank {}'s window, which rank {}'s {} (world "
                        "rank) reaches in a {} not yet ended: conflicting accesses (MPI-3.1 11.7)",
                        what, call, site_text(rs.caller), writes ? "writes" : "reads", std::max(a, lo) - from,
                        std::min(z, hi) - from, rs.proc->rank(), r.origin, kind_name(r.kind), epoch_name(r.epoch)));
        return;
      }
    }
  }
}

namespace {
// The bytes count elements of t at buf occupy, when they are one span without holes (what the
// buffer checks compare: a hole may be written by anyone); nullopt otherwise.
std::optional<std::pair<std::uintptr_t, std::uintptr_t>> dense_span(const void* buf, int count, const Type& t) {
  if (count <= 0 || t.size == 0 || !buf || !t.contiguous() || t.true_lb < 0) return std::nullopt;
  const auto lo = reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(t.true_lb);
  return std::pair{lo, lo + static_cast<std::uintptr_t>(count) * t.size};
}
}  // namespace

void check_against_rma(RankState& rs, const void* buf, int count, const Type& t, bool writes, const char* what,
                       bool window_memory) {
  if (!rs.windows) return;
  if (const auto span = dense_span(buf, count, t))
    check_against_rma(rs, span->first, span->second, writes, what, window_memory);
}

namespace {
// A handler's record of an origin's passive-target conflicts (Window::lock_conflicts), kept in step
// with the origin's process when that is another one of a split run (tell_lock_conflict): what the
// origin read there is forgotten first, and a change is told after.
class ConflictsTold {
 public:
  ConflictsTold(Window& w, const AmContext& c, std::int64_t handle)
      : w_(w), target_(c.rank()), origin_(c.source()), handle_(static_cast<int>(handle)), afar_(!runs_here(origin_)) {
    if (!afar_) return;
    if (take_lock_conflict_read(target_, handle_, origin_)) w_.lock_conflicts.erase(origin_);
    before_ = now();
  }
  ~ConflictsTold() {
    if (afar_ && now() != before_) tell_lock_conflict(target_, handle_, origin_, now());
  }
  ConflictsTold(const ConflictsTold&) = delete;
  ConflictsTold& operator=(const ConflictsTold&) = delete;

 private:
  std::string now() const {
    const auto it = w_.lock_conflicts.find(origin_);
    return it == w_.lock_conflicts.end() ? std::string() : it->second;
  }
  Window& w_;
  int target_, origin_, handle_;
  bool afar_;
  std::string before_;
};
}  // namespace

void register_rma_handlers(RankState& rs) {
  Windows& ws = windows(rs);
  if (ws.handlers_registered) return;
  ws.handlers_registered = true;
  Proc& p = *rs.proc;
  RankState* self = &rs;
  const NodeCosts costs = p.machine().costs_of(p.rank());
  p.am_register(kRmaUpdate, [self, costs](AmContext& c) {
    const auto a = c.args();
    Window& w = target_window(*self, a[kHandle]);
    const ConflictsTold told(w, c, a[kHandle]);
    const Layout l = decode(c.payload(), a[kRuns]);
    std::byte* at = target_address(w, a[kDisp]);
    const bool made = record_access(w, c.rank(), c.source(), a[kOp], at, l.runs, static_cast<std::size_t>(a[kBytes]),
                                    static_cast<MPI_Datatype>(a[kBase]), false);
    apply(*self, c, costs, at, l.runs, op_of(a[kOp]), static_cast<MPI_Datatype>(a[kBase]), l.data);
    const auto [lo, hi] = span_of(at, l.runs, static_cast<std::size_t>(a[kBytes]));
    seal_access(*self, w, made, op_of(a[kOp]) != MPI_NO_OP, lo, hi);
  });
  p.am_register(kRmaFetch, [self, costs](AmContext& c) {
    const auto a = c.args();
    Window& w = target_window(*self, a[kHandle]);
    const ConflictsTold told(w, c, a[kHandle]);
    const Layout l = decode(c.payload(), a[kRuns]);
    std::byte* at = target_address(w, a[kDisp]);
    std::vector<std::byte> old(static_cast<std::size_t>(a[kBytes]));
    const bool made = record_access(w, c.rank(), c.source(), a[kOp], at, l.runs, old.size(),
                                    static_cast<MPI_Datatype>(a[kBase]), true);
    gather(at, l.runs, old);
    apply(*self, c, costs, at, l.runs, op_of(a[kOp]), static_cast<MPI_Datatype>(a[kBase]), l.data);
    const auto [lo, hi] = span_of(at, l.runs, old.size());
    seal_access(*self, w, made, op_of(a[kOp]) != MPI_NO_OP, lo, hi);
    c.reply({}, old);
  });
  p.am_register(kRmaSwap, [self](AmContext& c) {
    const auto a = c.args();
    Window& w = target_window(*self, a[kHandle]);
    const ConflictsTold told(w, c, a[kHandle]);
    const auto n = static_cast<std::size_t>(a[kBytes]);
    std::byte* at = target_address(w, a[kDisp]);
    const bool made =
        record_access(w, c.rank(), c.source(), a[kOp], at, {}, n, static_cast<MPI_Datatype>(a[kBase]), true);
    std::vector<std::byte> old(at, at + n);
    const std::span<const std::byte> compare = c.payload().first(n), desired = c.payload().subspan(n, n);
    if (std::memcmp(at, compare.data(), n) == 0) std::memcpy(at, desired.data(), n);
    seal_access(*self, w, made, true, reinterpret_cast<std::uintptr_t>(at), reinterpret_cast<std::uintptr_t>(at) + n);
    c.reply({}, old);
  });
  p.am_register(kRmaSync, [self](AmContext& c) {
    const auto a = c.args();
    Window& w = target_window(*self, a[0]);
    const ConflictsTold told(w, c, a[0]);
    std::int64_t granted = 1;
    const auto cmd = static_cast<SyncCommand>(a[1]);
    if (cmd == SyncCommand::flush || cmd == SyncCommand::unlock_shared || cmd == SyncCommand::unlock_exclusive) {
      // The origin's accesses are complete here: a store into their bytes meanwhile is reported by
      // its flush or unlock, as a conflict its accesses made.
      std::string stored = end_records(
          w, c.rank(), [&](const AccessRecord& r) { return r.epoch == EpochKind::lock && r.origin == c.source(); });
      if (!stored.empty() && w.lock_conflicts[c.source()].empty()) w.lock_conflicts[c.source()] = std::move(stored);
    }
    switch (cmd) {
      case SyncCommand::flush: break;  // arriving after the origin's updates, it finds them applied
      case SyncCommand::lock_shared:
        if (w.exclusive_holder < 0)
          ++w.shared_holders;
        else
          granted = 0;
        break;
      case SyncCommand::lock_exclusive:
        if (w.exclusive_holder < 0 && w.shared_holders == 0)
          w.exclusive_holder = c.source();
        else
          granted = 0;
        break;
      case SyncCommand::unlock_shared: --w.shared_holders; break;
      case SyncCommand::unlock_exclusive: w.exclusive_holder = -1; break;
    }
    c.reply(std::span<const std::int64_t>(&granted, 1));
  });
}

namespace {

// --- the origin's side ---

// An operation's target: its window, rank and what it reaches there, checked.
struct Access {
  Window* w = nullptr;
  int target = MPI_PROC_NULL;  // rank in the window's communicator
  const Type* ttype = nullptr;
  std::size_t bytes = 0;  // data bytes at the target
};

// The target's region against its window: MPI_ERR_RMA_RANGE when the operation would reach
// memory outside it. A dynamic window's regions are read from the target's own record (a check
// that costs no virtual time: a real implementation would find out at the target); in a split run,
// for a target in another process, as the window's start found them, and again at its end
// (check.hpp note_remote_access).
void check_range(RankState& rs, const Window& w, int target, MPI_Aint disp, int count, const Type& t) {
  if (count == 0 || t.size == 0) return;
  const WinPeer& p = w.peers[static_cast<std::size_t>(target)];
  const MPI_Aint lo = t.true_lb + (disp * (w.flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : p.disp_unit));
  const MPI_Aint hi = lo + static_cast<MPI_Aint>(count - 1) * t.extent + t.true_extent;
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    const int world = w.world[static_cast<std::size_t>(target)];
    const bool here = runs_here(world);
    const Regions& regions = here ? session()->rank(world).windows->table[static_cast<std::size_t>(p.handle)]->attached
                                  : attached_elsewhere(world, p.handle);
    const auto from = static_cast<std::uintptr_t>(lo), to = static_cast<std::uintptr_t>(hi);
    const bool covered = covers(regions, from, to);
    const auto outside = [&] {
      return MpiError{MPI_ERR_RMA_RANGE, fmt::format("address range [{:#x}, {:#x}) is not attached to rank {}'s "
                                                     "dynamic window",
                                                     lo, hi, target)};
    };
    if (!here) {
      // Outside the regions of the window's start, an access whose error would end the run goes on:
      // the target may have attached the memory since (a race: one process accepts it), and the
      // window's end decides. Its data reaches the target in a later window, which a failure at the
      // access keeps the run from reaching. An error returned to the call cannot wait for that.
      const MpiError e = outside();
      const bool fatal = ends_the_run(rs, w.errhandler);
      const bool accepted = covered || fatal;
      note_remote_access(rs, world, p.handle, from, to, accepted, e, fatal,
                         fatal ? window_fatal_text(rs.last_call, rs.proc->rank(), e) : std::string());
      if (accepted) return;
    }
    if (covered) return;
    throw outside();
  }
  if (disp < 0 || lo < 0 || hi > p.size)
    throw MpiError{MPI_ERR_RMA_RANGE, fmt::format("displacement {} (x {}) with {} element(s) reaches bytes [{}, {}) "
                                                  "of rank {}'s window of {} bytes",
                                                  disp, p.disp_unit, count, lo, hi, target, p.size)};
}

Access check_target(RankState& rs, MPI_Win win, int target, MPI_Aint disp, int count, MPI_Datatype dt) {
  Access a;
  a.w = &window_of(rs, win);
  const int n = static_cast<int>(a.w->peers.size());
  if (target != MPI_PROC_NULL && (target < 0 || target >= n))
    throw MpiError{MPI_ERR_RANK, fmt::format("target rank {} is out of range: the window has {} rank(s)", target, n)};
  check_count(count);
  a.ttype = &committed(rs, dt);
  a.target = target;
  if (target == MPI_PROC_NULL) return a;
  check_access(*a.w, target);
  check_range(rs, *a.w, target, disp, count, *a.ttype);
  note_fence_access(*a.w, target);
  a.bytes = static_cast<std::size_t>(count) * a.ttype->size;
  return a;
}

// An origin or result buffer: its count, its datatype, and that it can be memory (a NULL one with
// data is MPI_ERR_BUFFER before anything is posted, as for a send or a receive).
const Type& check_local(RankState& rs, const void* buf, int count, MPI_Datatype dt) {
  check_count(count);
  const Type& t = committed(rs, dt);
  check_buffer(buf, count, t);
  return t;
}

void check_same_size(std::size_t origin, std::size_t target, const char* what) {
  if (origin != target)
    throw MpiError{MPI_ERR_TYPE, fmt::format("the {} holds {} bytes but the target's datatype {}: the type signatures "
                                             "must match",
                                             what, origin, target)};
}

// The predefined type an accumulate works on: the target's, which the origin's must share
// (MPI-3.1 11.3.4); MPI_ERR_OP when op is not an accumulate's.
MPI_Datatype accumulate_base(RankState& rs, MPI_Op op, const Type& origin, const Type& target, bool origin_used) {
  if (op != MPI_REPLACE && op != MPI_NO_OP && (op < MPI_MAX || op > MPI_MAXLOC))
    throw MpiError{MPI_ERR_OP, fmt::format("operation {} is not a predefined one (user operations are not allowed "
                                           "in accumulates)",
                                           op)};
  if (target.base == MPI_DATATYPE_NULL)
    throw MpiError{MPI_ERR_TYPE, "an accumulate's target datatype must be made of one predefined type"};
  if (origin_used && origin.base != target.base)
    throw MpiError{MPI_ERR_TYPE, fmt::format("the origin's datatype is made of {} but the target's of {}",
                                             type_name(origin.base), type_name(target.base))};
  if (op != MPI_REPLACE && op != MPI_NO_OP) {
    bool commutative = true;
    packed_reducer(rs, op, target.base, *predefined_type(target.base), commutative);  // MPI_ERR_OP if undefined
  }
  return target.base;
}

// The request's payload: the target's runs (none when its layout is contiguous), then the data;
// `data` itself when there are no runs (the runtime copies it into the message).
std::vector<std::byte> payload(const Type& ttype, int tcount, std::span<const std::byte> data, std::int64_t& nruns,
                               std::span<const std::byte>& out) {
  Runs runs;
  if (!ttype.contiguous())
    for_each_run(ttype, static_cast<std::size_t>(tcount), [&](MPI_Aint offset, std::size_t length) {
      if (length == 0) return;
      if (!runs.empty() && runs[runs.size() - 2] + runs.back() == offset)
        runs.back() += static_cast<std::int64_t>(length);
      else
        runs.insert(runs.end(), {offset, static_cast<std::int64_t>(length)});
    });
  nruns = static_cast<std::int64_t>(runs.size() / 2);
  if (runs.empty()) {
    out = data;
    return {};
  }
  std::vector<std::byte> body(runs.size() * 8 + data.size());
  std::memcpy(body.data(), runs.data(), runs.size() * 8);
  if (!data.empty()) std::memcpy(body.data() + runs.size() * 8, data.data(), data.size());
  out = body;
  return body;
}

// The words an operation's active message carries: the target's window handle, the displacement,
// the operator word, the base type, the runs of the target's type map and the bytes it moves.
std::array<std::int64_t, 6> op_args(const Access& a, MPI_Aint disp, MPI_Op op, MPI_Datatype base, AccessKind kind,
                                    std::int64_t nruns) {
  return {a.w->peers[static_cast<std::size_t>(a.target)].handle,
          disp,
          op_word(*a.w, a.target, op, kind),
          base,
          nruns,
          static_cast<std::int64_t>(a.bytes)};
}

// A one-way update (put, accumulate): complete at the origin once sent, since the request
// carries a copy of the data.
// An RMA call's buffer in this rank's own memory of window w (the origin buffer of a put, read;
// the result buffer of a get, written) is an access to the window in the epoch the rank has open:
// recorded beside the other ranks' accesses (AccessRecord::local), so that a conflicting one is
// found whichever comes first. A conflict with one already recorded is reported by this call.
void record_local(RankState& rs, Window& w, std::uintptr_t lo, std::uintptr_t hi, bool written) {
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) return;
  const auto base = reinterpret_cast<std::uintptr_t>(w.base);
  lo = std::max(lo, base);
  hi = std::min(hi, base + static_cast<std::uintptr_t>(w.size));
  if (lo >= hi) return;
  EpochKind epoch = EpochKind::none;
  std::int64_t count = 0;
  if (w.fence_epoch) {
    epoch = EpochKind::fence;
    count = w.fences;
  } else if (std::any_of(w.locked.begin(), w.locked.end(), [](int l) { return l != 0 && !(l & kNoCheckBit); })) {
    epoch = EpochKind::lock;
  }
  if (epoch == EpochKind::none || w.epoch_accesses.size() >= kMaxRecorded) return;
  const int self = rs.proc->rank();
  AccessRecord r{self, epoch, count, written ? AccessKind::put : AccessKind::get, MPI_BYTE, {{lo, hi}}};
  r.local = true;
  for (const AccessRecord& e : w.epoch_accesses) {
    if (e.epoch != epoch || e.count != count || e.origin == self || compatible(e, r)) continue;
    if (const auto both = overlap(e, r))
      report_conflict(
          rs, w,
          fmt::format("the {} buffer of {}{} {} bytes [{}, {}) of rank {}'s window, which rank {}'s {} "
                      "(world rank) reaches in the same {}: conflicting accesses (MPI-3.1 11.7)",
                      written ? "result" : "origin", rs.last_call, site_text(rs.caller), written ? "takes" : "is",
                      both->first - base, both->second - base, self, e.origin, kind_name(e.kind), epoch_name(epoch)));
  }
  w.epoch_accesses.push_back(std::move(r));
}

// The origin buffer of an operation that the operation owns until it completes (OwnedBuffer).
void own(RankState& rs, const Access& a, const void* buf, int count, const Type& t, bool written,
         std::shared_ptr<PendingOp> op) {
  const auto span = dense_span(buf, count, t);
  if (!span) return;
  OwnedBuffer b{a.target, span->first, span->second, written, std::move(op), false, 0, rs.last_call, rs.caller};
  if (!written && a.w->hash_accesses) {
    b.hashed = true;
    b.hash = bytes_hash(b.lo, b.hi);
  }
  a.w->owned.push_back(std::move(b));
  record_local(rs, *a.w, span->first, span->second, written);
}

void update(RankState& rs, const Access& a, const void* origin, int ocount, const Type& otype, MPI_Aint disp,
            int tcount, MPI_Op op, MPI_Datatype base, AccessKind kind, bool owned) {
  if (a.target == MPI_PROC_NULL || a.bytes == 0) return;
  check_against_rma(rs, origin, ocount, otype, false, "origin buffer", false);
  std::vector<std::byte> scratch;
  const auto data = send_bytes(origin, ocount, otype, scratch);
  std::int64_t nruns = 0;
  std::span<const std::byte> body;
  const auto storage = payload(*a.ttype, tcount, data, nruns, body);
  const std::array<std::int64_t, 6> args = op_args(a, disp, op, base, kind, nruns);
  rs.proc->am_send(a.w->world[static_cast<std::size_t>(a.target)], kRmaUpdate, args, body);
  ++a.w->unflushed[static_cast<std::size_t>(a.target)];
  // A request-based operation (MPI_Rput, MPI_Raccumulate) is complete at once: its request
  // gives the buffer back.
  if (owned) own(rs, a, origin, ocount, otype, false, nullptr);
}

// A hash of the bytes count elements of t hold at buf (FNV-1a over 8-byte words, then the tail).
std::uint64_t contents_hash(const void* buf, int count, const Type& t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for_each_run(t, static_cast<std::size_t>(count), [&](MPI_Aint offset, std::size_t length) {
    const auto* p = static_cast<const unsigned char*>(buf) + offset;
    std::size_t i = 0;
    for (; i + 8 <= length; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, p + i, 8);
      h = (h ^ word) * 0x100000001b3ULL;
    }
    for (; i < length; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  });
  return h;
}

// An operation whose reply brings the target's old data into `result` (count elements of rtype).
std::shared_ptr<PendingOp> fetch(RankState& rs, const Access& a, std::span<const std::byte> data, MPI_Aint disp,
                                 int tcount, MPI_Op op, MPI_Datatype base, void* result, int rcount, const Type& rtype,
                                 AccessKind kind) {
  auto op_state = std::make_shared<PendingOp>();
  if (a.target == MPI_PROC_NULL || a.bytes == 0) {
    op_state->complete = true;
    return op_state;
  }
  check_against_rma(rs, result, rcount, rtype, true, kResultBuffer.data(), false);
  std::int64_t nruns = 0;
  std::span<const std::byte> body;
  const auto storage = payload(*a.ttype, tcount, data, nruns, body);
  const std::array<std::int64_t, 6> args = op_args(a, disp, op, base, kind, nruns);
  op_state->target = a.target;
  op_state->future =
      rs.proc->am_request(a.w->world[static_cast<std::size_t>(a.target)], kRmaFetch, args, body, a.bytes);
  // The result buffer belongs to the operation until it completes (MPI-3.1 11.3): a program that
  // writes into it meanwhile is told so (MPI_ERR_BUFFER) when the data arrive.
  const std::uint64_t before = contents_hash(result, rcount, rtype);
  op_state->on_reply = [result, rcount, type = shared_copy(rtype), before](const AmReply& r) {
    if (contents_hash(result, rcount, *type) != before)
      throw MpiError{MPI_ERR_BUFFER, fmt::format("the result buffer at {} was written to before the operation that "
                                                 "fills it completed",
                                                 result)};
    unpack(r.payload, result, static_cast<std::size_t>(rcount), *type);
  };
  a.w->pending.push_back(op_state);
  own(rs, a, result, rcount, rtype, true, op_state);
  return op_state;
}

// Completes a request-based operation's reply (MPI_Wait, MPI_Test) if it has come, or blocking.
bool settle(RankState& rs, PendingOp& op, bool block) {
  if (op.complete) return true;
  AmReply r;
  if (block)
    r = rs.proc->am_wait(op.future);
  else if (!rs.proc->am_test(op.future, &r))
    return false;
  op.complete = true;
  op.on_reply(r);
  return true;
}

MPI_Request request_for(RankState& rs, std::shared_ptr<PendingOp> op) {
  auto q = std::make_unique<Req>();
  RankState* at = &rs;
  q->completes = [at, op = std::move(op)](bool block, MPI_Status&) { return settle(*at, *op, block); };
  return new_req(rs, std::move(q));
}

MPI_Request completed_request(RankState& rs) {
  auto q = std::make_unique<Req>();
  q->done = true;
  q->status = empty_status();
  return new_req(rs, std::move(q));
}

void put(RankState& rs, const void* origin, int ocount, MPI_Datatype odt, int target, MPI_Aint disp, int tcount,
         MPI_Datatype tdt, MPI_Win win, bool owned) {
  const Type& ot = check_local(rs, origin, ocount, odt);
  const Access a = check_target(rs, win, target, disp, tcount, tdt);
  if (a.target == MPI_PROC_NULL) return;
  check_same_size(static_cast<std::size_t>(ocount) * ot.size, a.bytes, "origin buffer");
  update(rs, a, origin, ocount, ot, disp, tcount, MPI_REPLACE, MPI_BYTE, AccessKind::put, owned);
}

std::shared_ptr<PendingOp> get(RankState& rs, void* origin, int ocount, MPI_Datatype odt, int target, MPI_Aint disp,
                               int tcount, MPI_Datatype tdt, MPI_Win win) {
  const Type& ot = check_local(rs, origin, ocount, odt);
  const Access a = check_target(rs, win, target, disp, tcount, tdt);
  if (a.target != MPI_PROC_NULL) check_same_size(static_cast<std::size_t>(ocount) * ot.size, a.bytes, "origin buffer");
  return fetch(rs, a, {}, disp, tcount, MPI_NO_OP, MPI_BYTE, origin, ocount, ot, AccessKind::get);
}

void accumulate(RankState& rs, const void* origin, int ocount, MPI_Datatype odt, int target, MPI_Aint disp, int tcount,
                MPI_Datatype tdt, MPI_Op op, MPI_Win win, bool owned) {
  const Type& ot = check_local(rs, origin, ocount, odt);
  const Access a = check_target(rs, win, target, disp, tcount, tdt);
  const std::size_t obytes = static_cast<std::size_t>(ocount) * ot.size;
  if (a.target == MPI_PROC_NULL || (a.bytes == 0 && obytes == 0)) return;  // nothing moves: no type to agree on
  const MPI_Datatype base = accumulate_base(rs, op, ot, *a.ttype, true);
  check_same_size(static_cast<std::size_t>(ocount) * ot.size, a.bytes, "origin buffer");
  update(rs, a, origin, ocount, ot, disp, tcount, op, base, AccessKind::accumulate, owned);
}

std::shared_ptr<PendingOp> get_accumulate(RankState& rs, const void* origin, int ocount, MPI_Datatype odt, void* result,
                                          int rcount, MPI_Datatype rdt, int target, MPI_Aint disp, int tcount,
                                          MPI_Datatype tdt, MPI_Op op, MPI_Win win) {
  const bool origin_used = op != MPI_NO_OP;  // MPI_NO_OP ignores the origin buffer (MPI-3.1 11.3.4)
  const Type& ot = origin_used ? check_local(rs, origin, ocount, odt) : *predefined_type(MPI_BYTE);
  const Type& rt = check_local(rs, result, rcount, rdt);
  const Access a = check_target(rs, win, target, disp, tcount, tdt);
  const bool empty = a.bytes == 0 && static_cast<std::size_t>(rcount) * rt.size == 0 &&
                     (!origin_used || static_cast<std::size_t>(ocount) * ot.size == 0);
  if (a.target == MPI_PROC_NULL || empty)
    return fetch(rs, a, {}, disp, tcount, op, MPI_BYTE, result, rcount, rt, AccessKind::accumulate);
  const MPI_Datatype base = accumulate_base(rs, op, ot, *a.ttype, origin_used);
  check_same_size(static_cast<std::size_t>(rcount) * rt.size, a.bytes, "result buffer");
  std::vector<std::byte> scratch;
  std::span<const std::byte> data;
  if (origin_used) {
    check_same_size(static_cast<std::size_t>(ocount) * ot.size, a.bytes, "origin buffer");
    data = send_bytes(origin, ocount, ot, scratch);
  }
  return fetch(rs, a, data, disp, tcount, op, base, result, rcount, rt, AccessKind::accumulate);
}

}  // namespace

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return win_call("MPI_Put", win, [&](RankState& rs) {
    put(rs, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
        true);
  });
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return win_call("MPI_Get", win, [&](RankState& rs) {
    get(rs, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
  });
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return win_call("MPI_Accumulate", win, [&](RankState& rs) {
    accumulate(rs, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
               op, win, true);
  });
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return win_call("MPI_Get_accumulate", win, [&](RankState& rs) {
    get_accumulate(rs, origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                   target_rank, target_disp, target_count, target_datatype, op, win);
  });
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return win_call("MPI_Fetch_and_op", win, [&](RankState& rs) {
    if (!predefined_type(datatype)) throw MpiError{MPI_ERR_TYPE, "MPI_Fetch_and_op takes a predefined datatype"};
    get_accumulate(rs, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op,
                   win);
  });
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
  return win_call("MPI_Compare_and_swap", win, [&](RankState& rs) {
    const Type* t = predefined_type(datatype);
    if (!t || t->base == MPI_DATATYPE_NULL || !t->contiguous())
      throw MpiError{MPI_ERR_TYPE, "MPI_Compare_and_swap takes a predefined integer, logical or byte datatype"};
    const Access a = check_target(rs, win, target_rank, target_disp, 1, datatype);
    for (const void* buf : {origin_addr, compare_addr, static_cast<const void*>(result_addr)}) check_buffer(buf, 1, *t);
    if (a.target == MPI_PROC_NULL) return;
    std::vector<std::byte> body(2 * t->size);
    std::memcpy(body.data(), compare_addr, t->size);
    std::memcpy(body.data() + t->size, origin_addr, t->size);
    const std::array<std::int64_t, 6> args{a.w->peers[static_cast<std::size_t>(a.target)].handle,
                                           target_disp,
                                           op_word(*a.w, a.target, MPI_OP_NULL, AccessKind::accumulate),
                                           datatype,
                                           0,
                                           static_cast<std::int64_t>(t->size)};
    auto op = std::make_shared<PendingOp>();
    op->target = a.target;
    op->future = rs.proc->am_request(a.w->world[static_cast<std::size_t>(a.target)], kRmaSwap, args, body, t->size);
    const std::uint64_t before = contents_hash(result_addr, 1, *t);
    op->on_reply = [result_addr, before, t](const AmReply& r) {
      if (contents_hash(result_addr, 1, *t) != before)
        throw MpiError{MPI_ERR_BUFFER, fmt::format("the result buffer at {} was written to before the "
                                                   "MPI_Compare_and_swap that fills it completed",
                                                   result_addr)};
      std::memcpy(result_addr, r.payload.data(), r.payload.size());
    };
    a.w->pending.push_back(std::move(op));
  });
}

int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return win_call("MPI_Rput", win, [&](RankState& rs) {
    check_out(request, "request");
    if (target_rank != MPI_PROC_NULL) check_passive(window_of(rs, win), "MPI_Rput");
    put(rs, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
        false);
    *request = completed_request(rs);
  });
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return win_call("MPI_Rget", win, [&](RankState& rs) {
    check_out(request, "request");
    if (target_rank != MPI_PROC_NULL) check_passive(window_of(rs, win), "MPI_Rget");
    *request = request_for(rs, get(rs, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                   target_count, target_datatype, win));
  });
}

int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
  return win_call("MPI_Raccumulate", win, [&](RankState& rs) {
    check_out(request, "request");
    if (target_rank != MPI_PROC_NULL) check_passive(window_of(rs, win), "MPI_Raccumulate");
    accumulate(rs, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
               op, win, false);
    *request = completed_request(rs);
  });
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return win_call("MPI_Rget_accumulate", win, [&](RankState& rs) {
    check_out(request, "request");
    if (target_rank != MPI_PROC_NULL) check_passive(window_of(rs, win), "MPI_Rget_accumulate");
    *request = request_for(
        rs, get_accumulate(rs, origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                           target_rank, target_disp, target_count, target_datatype, op, win));
  });
}
