// Synchronization of one-sided communication (MPI-3.1 11.5): fence, post/start/complete/wait,
// lock/unlock and flush, over the runtime's messages (docs/mpi.md "One-sided communication";
// costs in docs/model.md 7.1).
//
// Completion rests on one property of the network: messages between one pair never overtake
// (docs/model.md 2.2), and a node runs its handlers in arrival order. So a request sent after an
// origin's one-way updates to a target finds them applied: a flush, an unlock or a complete
// message is the only round trip an origin needs for all of them.
#include <algorithm>
#include <cstdio>
#include <array>
#include <utility>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "check.hpp"
#include "coll.hpp"
#include "comm.hpp"
#include "rma.hpp"

namespace touchstone::mpi {

namespace {
constexpr int kPostTag = 1;      // target to origin: the exposure epoch is open
constexpr int kCompleteTag = 2;  // origin to target: its access epoch is over

constexpr int kAllAssertions =
    MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

void check_assert(int assert, int allowed, const char* call) {
  if (assert & ~kAllAssertions)
    throw MpiError{MPI_ERR_ASSERT,
                   fmt::format("{}: assertion {:#x} has bits that name no MPI_MODE_ value", call, assert)};
  if (assert & ~allowed)
    throw MpiError{MPI_ERR_ASSERT, fmt::format("{}: assertion {:#x} is not one this call takes", call, assert)};
}

void check_rank(const Window& w, int rank) {
  const int n = static_cast<int>(w.peers.size());
  if (rank < 0 || rank >= n)
    throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is out of range: the window has {} rank(s)", rank, n)};
}

bool passive_to(const Window& w, int target) { return w.lock_all || w.locked[static_cast<std::size_t>(target)] != 0; }

// The rank a flush of `call` names: false for MPI_PROC_NULL (nothing to flush), true for a rank of
// w that this process has locked; MPI_ERR_RANK or MPI_ERR_RMA_SYNC otherwise.
bool locked_target(const Window& w, int rank, const char* call) {
  if (rank == MPI_PROC_NULL) return false;
  check_rank(w, rank);
  if (!passive_to(w, rank))
    throw MpiError{MPI_ERR_RMA_SYNC, fmt::format("{}: rank {} is not locked", call, rank)};
  return true;
}

AmFuture sync_request(RankState& rs, Window& w, int target, SyncCommand cmd) {
  const std::array<std::int64_t, 2> args{w.peers[static_cast<std::size_t>(target)].handle,
                                         static_cast<std::int64_t>(cmd)};
  return rs.proc->am_request(w.world[static_cast<std::size_t>(target)], kRmaSync, args);
}

// Sends `cmd` to every target at once and waits for the replies; returns those whose reply said
// no (a lock that is held).
std::vector<int> sync_all(RankState& rs, Window& w, const std::vector<int>& targets, SyncCommand cmd) {
  std::vector<AmFuture> f;
  f.reserve(targets.size());
  for (int t : targets) f.push_back(sync_request(rs, w, t, cmd));
  std::vector<int> refused;
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (rs.proc->am_wait(f[i]).args.at(0) == 0) refused.push_back(targets[i]);
  return refused;
}

// Takes the lock of every target: a refused request is sent again at once until it is granted
// (the target cannot answer later: a handler replies when it runs), so a waiting origin polls
// with one round trip per attempt.
void acquire(RankState& rs, Window& w, std::vector<int> targets, int lock_type) {
  const SyncCommand cmd = lock_type == MPI_LOCK_EXCLUSIVE ? SyncCommand::lock_exclusive : SyncCommand::lock_shared;
  while (!targets.empty()) targets = sync_all(rs, w, targets, cmd);
}

// The exposure epoch is over: every access of it has arrived (before its origin's complete
// message). Its records go, and a conflict among them is reported.
void end_exposure(RankState& rs, Window& w) {
  std::string stored =
      end_records(w, rs.proc->rank(), [](const AccessRecord& r) { return r.epoch == EpochKind::post_start; });
  if (w.conflict.empty()) w.conflict = std::move(stored);
  if (!w.conflict.empty()) report_conflict(rs, w, std::exchange(w.conflict, {}));
}

// MPI-3.1 11.5.1: a fence starts an access epoch when it is followed by RMA calls and another
// fence, and a passive-target epoch may not be inside one. A lock after the fence is an error at
// once when this rank made RMA calls since the fence outside a lock (those need the closing
// fence); otherwise it is noted, and the next fence is the error if RMA calls came in between. A
// fence that ends the last epoch and begins none (MPI_MODE_NOSUCCEED, or the last before
// MPI_Win_free) may precede locks.
void check_lock_in_fence(RankState& rs, Window& w, const char* call) {
  if (!w.fence_epoch) return;
  if (w.fence_accessed)
    throw MpiError{MPI_ERR_RMA_SYNC, fmt::format("{} inside the access epoch that MPI_Win_fence began (this rank made "
                                                 "RMA calls in it): end it with a fence first "
                                                 "(MPI_MODE_NOSUCCEED when no epoch is to follow)",
                                                 call)};
  if (!w.lock_in_fence) {
    w.lock_in_fence = call;
    w.lock_in_fence_caller = rs.caller;
  }
}

}  // namespace

void flush_targets(RankState& rs, Window& w, const std::vector<int>& targets) {
  std::vector<int> behind;
  for (int t : targets) {
    complete_pending(rs, w, t);
    if (w.unflushed[static_cast<std::size_t>(t)] > 0) behind.push_back(t);
  }
  sync_all(rs, w, behind, SyncCommand::flush);
  for (int t : behind) w.unflushed[static_cast<std::size_t>(t)] = 0;
  for (int t : targets) report_lock_conflict(rs, w, t);
}

void report_lock_conflict(RankState& rs, Window& w, int target) {
  const auto world = static_cast<std::size_t>(w.world[static_cast<std::size_t>(target)]);
  if (!runs_here(static_cast<int>(world))) {  // what the target's process told (tell_lock_conflict)
    std::string what = take_told_lock_conflict(
        static_cast<int>(world), static_cast<int>(w.peers[static_cast<std::size_t>(target)].handle), rs.proc->rank());
    if (!what.empty()) report_conflict(rs, w, std::move(what));
    return;
  }
  RankState& at = session()->rank(world);
  if (!at.windows) return;
  Window& tw = *at.windows->table[static_cast<std::size_t>(w.peers[static_cast<std::size_t>(target)].handle)];
  const auto it = tw.lock_conflicts.find(rs.proc->rank());
  if (it == tw.lock_conflicts.end()) return;
  std::string what = std::move(it->second);
  tw.lock_conflicts.erase(it);
  report_conflict(rs, w, std::move(what));
}

void report_conflict(RankState& rs, const Window& w, std::string what) {
  if (w.conflicts_are_errors) throw MpiError{MPI_ERR_RMA_CONFLICT, std::move(what)};
  std::fprintf(stderr, "warning: rank %d: %s; MPI-3.1 leaves their outcome undefined\n", rs.proc->rank(),
               what.c_str());
}

std::vector<int> all_ranks(const Window& w) {
  std::vector<int> v(w.peers.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
  return v;
}

namespace {

// The ranks in the window's communicator of a group's members; MPI_ERR_GROUP for one outside it.
std::vector<int> group_ranks(RankState& rs, const Window& w, MPI_Group group) {
  std::vector<int> out;
  for (int world : group_of(rs, group)) {
    const auto it = std::find(w.world.begin(), w.world.end(), world);
    if (it == w.world.end())
      throw MpiError{MPI_ERR_GROUP, fmt::format("world rank {} of the group is not in the window", world)};
    out.push_back(static_cast<int>(it - w.world.begin()));
  }
  return out;
}

}  // namespace

void note_fence_access(Window& w, int target) {
  if (!w.fence_epoch) return;
  if (w.lock_in_fence) w.lock_in_fence_used = true;
  if (!passive_to(w, target)) w.fence_accessed = true;
}

void check_access(const Window& w, int target) {
  if (w.fence_epoch || passive_to(w, target)) return;
  if (w.started && std::find(w.start_group.begin(), w.start_group.end(), target) != w.start_group.end()) return;
  throw MpiError{MPI_ERR_RMA_SYNC, fmt::format("no access epoch to rank {} is open (MPI_Win_fence, MPI_Win_start "
                                               "or MPI_Win_lock first)",
                                               target)};
}

void check_passive(const Window& w, const char* call) {
  if (w.lock_all || std::any_of(w.locked.begin(), w.locked.end(), [](int l) { return l != 0; })) return;
  throw MpiError{MPI_ERR_RMA_SYNC,
                 fmt::format("{} needs a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all)", call)};
}

namespace {

// The origin buffers of this origin's puts and accumulates at `target` (every target when -1) are
// free again, and the result buffers of the gets whose reply has come; MPI_ERR_BUFFER when a put's
// bytes, hashed when it was issued, changed meanwhile.
void release_owned(Window& w, int target) {
  std::string changed;
  std::erase_if(w.owned, [&](const OwnedBuffer& b) {
    if (target >= 0 && b.target != target) return false;
    if (b.op && !b.op->complete) return false;
    // Its record as an access to this rank's own window memory in a passive-target epoch ends
    // with it (a fence's records end at the fence).
    const auto rec = std::find_if(w.epoch_accesses.begin(), w.epoch_accesses.end(), [&](const AccessRecord& r) {
      return r.local && r.epoch == EpochKind::lock && r.ranges.front().first >= b.lo && r.ranges.front().second <= b.hi;
    });
    if (rec != w.epoch_accesses.end()) w.epoch_accesses.erase(rec);
    if (b.op) return true;
    if (b.hashed && changed.empty() && bytes_hash(b.lo, b.hi) != b.hash)
      changed = fmt::format(
          "the origin buffer of the {}{} was written to before the operation completed "
          "(it belongs to the operation until the epoch's synchronization or a flush, MPI-3.1 11.3)",
          b.call, site_text(b.caller));
    return true;
  });
  if (!changed.empty()) throw MpiError{MPI_ERR_BUFFER, changed};
}

}  // namespace

void complete_pending(RankState& rs, Window& w, int target) {
  complete_pending_replies(rs, w, target);
  release_owned(w, target);
}

void complete_pending_replies(RankState& rs, Window& w, int target) {
  for (auto& op : w.pending)
    if (!op->complete && (target < 0 || op->target == target)) {
      const AmReply reply = rs.proc->am_wait(op->future);
      op->complete = true;
      try {
        op->on_reply(reply);
      } catch (const MpiError&) {  // the others still complete; the error is reported after
        std::erase_if(w.pending, [](const auto& o) { return o->complete; });
        complete_pending_replies(rs, w, target);
        release_owned(w, target);
        throw;
      }
    }
  std::erase_if(w.pending, [](const auto& op) { return op->complete; });
}

void flush_target(RankState& rs, Window& w, int target) { flush_targets(rs, w, {target}); }

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

// Completes this origin's operations (unless MPI_MODE_NOPRECEDE says there are none), then waits
// for every member to have done so: a barrier, after which every operation of the epoch is
// complete at its target.
int MPI_Win_fence(int assert, MPI_Win win) {
  return win_call("MPI_Win_fence", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_assert(assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, "MPI_Win_fence");
    if (w.started || w.posted || w.lock_all || std::any_of(w.locked.begin(), w.locked.end(), [](int l) { return l; }))
      throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_fence inside a post/start or lock epoch"};
    if (assert & MPI_MODE_NOPRECEDE) {
      if (!w.pending.empty() || std::any_of(w.unflushed.begin(), w.unflushed.end(), [](int n) { return n; }))
        throw MpiError{MPI_ERR_RMA_SYNC,
                       "MPI_Win_fence with MPI_MODE_NOPRECEDE, but this rank has RMA operations "
                       "since the previous fence"};
    } else {
      flush_targets(rs, w, all_ranks(w));
    }
    barrier(rs, comm_of(rs, w.comm));
    // This fence closes the epoch the previous one began if RMA calls came in between: a lock
    // taken there was inside it. Reported after the barrier, so that every member has left it.
    const char* lock = w.lock_in_fence_used ? w.lock_in_fence : nullptr;
    const void* lock_caller = w.lock_in_fence_caller;
    w.fence_epoch = !(assert& MPI_MODE_NOSUCCEED);
    w.fence_accessed = w.lock_in_fence_used = false;
    w.lock_in_fence = nullptr;
    // Every access of the epoch that ends here has reached this rank by now: its record goes,
    // and a conflict among them, or a store into their bytes, is reported.
    ++w.fences;
    std::string stored = end_records(
        w, rs.proc->rank(), [&](const AccessRecord& r) { return r.epoch == EpochKind::fence && r.count < w.fences; });
    if (w.conflict.empty()) w.conflict = std::move(stored);
    if (!w.conflict.empty()) report_conflict(rs, w, std::exchange(w.conflict, {}));
    if (lock)
      throw MpiError{MPI_ERR_RMA_SYNC,
                     fmt::format("the previous MPI_Win_fence began an access epoch (RMA calls followed it before this "
                                 "fence, MPI-3.1 11.5.1), and {}{} took a lock inside it: a passive-target epoch may "
                                 "not be inside an active-target one (end it with MPI_Win_fence(MPI_MODE_NOSUCCEED) "
                                 "before the lock)",
                                 lock, site_text(lock_caller))};
  });
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  return win_call("MPI_Win_post", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, "MPI_Win_post");
    if (w.posted) throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_post while an exposure epoch is already open"};
    w.post_group = group_ranks(rs, w, group);
    w.posted = true;
    ++w.posts;
    if (assert & MPI_MODE_NOCHECK) return;
    const Comm& c = comm_of(rs, w.comm);
    for (int origin : w.post_group) rs.proc->send(origin, kPostTag, {}, c.pt2pt);
  });
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  return win_call("MPI_Win_start", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_assert(assert, MPI_MODE_NOCHECK, "MPI_Win_start");
    if (w.started) throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_start while an access epoch is already open"};
    w.start_group = group_ranks(rs, w, group);
    if (!(assert& MPI_MODE_NOCHECK)) {
      const Comm& c = comm_of(rs, w.comm);
      for (int target : w.start_group) rs.proc->recv(target, kPostTag, {}, c.pt2pt);
    }
    w.started = true;
  });
}

// The replies of the epoch's operations, then a message to each target: it arrives after the
// origin's one-way updates, so the target's MPI_Win_wait finds them applied.
int MPI_Win_complete(MPI_Win win) {
  return win_call("MPI_Win_complete", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (!w.started) throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start"};
    const Comm& c = comm_of(rs, w.comm);
    for (int target : w.start_group) {
      complete_pending(rs, w, target);
      w.unflushed[static_cast<std::size_t>(target)] = 0;
      rs.proc->send(target, kCompleteTag, {}, c.pt2pt);
    }
    w.started = false;
    w.start_group.clear();
  });
}

int MPI_Win_wait(MPI_Win win) {
  return win_call("MPI_Win_wait", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (!w.posted) throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post"};
    const Comm& c = comm_of(rs, w.comm);
    for (int origin : w.post_group) rs.proc->recv(origin, kCompleteTag, {}, c.pt2pt);
    w.post_group.clear();
    w.posted = false;
    end_exposure(rs, w);
  });
}

int MPI_Win_test(MPI_Win win, int* flag) {
  return win_call("MPI_Win_test", win, [&](RankState& rs) {
    check_out(flag, "flag");
    Window& w = window_of(rs, win);
    if (!w.posted) throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post"};
    const Comm& c = comm_of(rs, w.comm);
    // The origins whose complete message has come are taken off the group as they are found.
    std::erase_if(w.post_group, [&](int origin) {
      if (!rs.proc->iprobe(origin, kCompleteTag, c.pt2pt)) return false;
      rs.proc->recv(origin, kCompleteTag, {}, c.pt2pt);
      return true;
    });
    *flag = w.post_group.empty();
    if (*flag) {
      w.posted = false;
      end_exposure(rs, w);
    }
  });
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  return win_call("MPI_Win_lock", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
      throw MpiError{MPI_ERR_LOCKTYPE,
                     fmt::format("lock type {} is not MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE", lock_type)};
    check_assert(assert, MPI_MODE_NOCHECK, "MPI_Win_lock");
    if (rank == MPI_PROC_NULL) return;
    check_rank(w, rank);
    if (passive_to(w, rank)) throw MpiError{MPI_ERR_RMA_SYNC, fmt::format("rank {} is already locked", rank)};
    check_lock_in_fence(rs, w, "MPI_Win_lock");
    if (!(assert& MPI_MODE_NOCHECK)) acquire(rs, w, {rank}, lock_type);
    w.locked[static_cast<std::size_t>(rank)] = lock_type | ((assert& MPI_MODE_NOCHECK) ? kNoCheckBit : 0);
  });
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  return win_call("MPI_Win_unlock", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (rank == MPI_PROC_NULL) return;
    check_rank(w, rank);
    const int lock = w.locked[static_cast<std::size_t>(rank)];
    if (!lock || w.lock_all) throw MpiError{MPI_ERR_RMA_SYNC, fmt::format("rank {} is not locked", rank)};
    if (lock & kNoCheckBit) {
      flush_target(rs, w, rank);
    } else {  // the unlock request itself completes the updates before it
      complete_pending(rs, w, rank);
      const auto cmd =
          (lock & ~kNoCheckBit) == MPI_LOCK_EXCLUSIVE ? SyncCommand::unlock_exclusive : SyncCommand::unlock_shared;
      sync_all(rs, w, {rank}, cmd);
      w.unflushed[static_cast<std::size_t>(rank)] = 0;
    }
    w.locked[static_cast<std::size_t>(rank)] = 0;
    report_lock_conflict(rs, w, rank);
  });
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  return win_call("MPI_Win_lock_all", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_assert(assert, MPI_MODE_NOCHECK, "MPI_Win_lock_all");
    if (w.lock_all || std::any_of(w.locked.begin(), w.locked.end(), [](int l) { return l; }))
      throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_lock_all while a lock is held"};
    check_lock_in_fence(rs, w, "MPI_Win_lock_all");
    if (!(assert& MPI_MODE_NOCHECK)) acquire(rs, w, all_ranks(w), MPI_LOCK_SHARED);
    w.lock_all = true;
    std::fill(w.locked.begin(), w.locked.end(), MPI_LOCK_SHARED | ((assert& MPI_MODE_NOCHECK) ? kNoCheckBit : 0));
  });
}

int MPI_Win_unlock_all(MPI_Win win) {
  return win_call("MPI_Win_unlock_all", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (!w.lock_all) throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all"};
    if (w.locked[0] & kNoCheckBit) {
      flush_targets(rs, w, all_ranks(w));
    } else {
      complete_pending(rs, w, -1);
      sync_all(rs, w, all_ranks(w), SyncCommand::unlock_shared);
      std::fill(w.unflushed.begin(), w.unflushed.end(), 0);
    }
    w.lock_all = false;
    std::fill(w.locked.begin(), w.locked.end(), 0);
    for (int t : all_ranks(w)) report_lock_conflict(rs, w, t);
  });
}

int MPI_Win_flush(int rank, MPI_Win win) {
  return win_call("MPI_Win_flush", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (locked_target(w, rank, "MPI_Win_flush")) flush_target(rs, w, rank);
  });
}

int MPI_Win_flush_all(MPI_Win win) {
  return win_call("MPI_Win_flush_all", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_passive(w, "MPI_Win_flush_all");
    flush_targets(rs, w, all_ranks(w));
  });
}

// Local completion: the origin may reuse its buffers. An update's data left with its request,
// so only the replies are waited for.
int MPI_Win_flush_local(int rank, MPI_Win win) {
  return win_call("MPI_Win_flush_local", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (locked_target(w, rank, "MPI_Win_flush_local")) complete_pending(rs, w, rank);
  });
}

int MPI_Win_flush_local_all(MPI_Win win) {
  return win_call("MPI_Win_flush_local_all", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_passive(w, "MPI_Win_flush_local_all");
    complete_pending(rs, w, -1);
  });
}

// The unified memory model: a window's public and private copies are one memory, which the
// handlers write directly, so synchronizing them is nothing to do.
int MPI_Win_sync(MPI_Win win) {
  return win_call("MPI_Win_sync", win, [&](RankState& rs) { window_of(rs, win); });
}
