// One-sided communication (MPI-3.1 chapter 11; docs/mpi.md "One-sided communication"): windows,
// the RMA operations carried as active messages to the target (docs/model.md 7), and their
// synchronization. Shared by window.cpp, rma_ops.cpp and rma_sync.cpp; internal.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "call.hpp"
#include "touchstone/active_messages.hpp"

namespace touchstone::mpi {

/// What the origin knows of each member's window memory, exchanged when the window is made.
struct WinPeer {
  std::int64_t base = 0;  ///< address of its window memory (0 for a dynamic window)
  std::int64_t size = 0;
  std::int64_t disp_unit = 1;
  std::int64_t handle = 0;  ///< its own handle of the window: the requests name the window by it
};

/// An operation in flight whose reply is awaited (a get, a get-accumulate, a compare-and-swap):
/// `on_reply` takes the reply's data into the origin's buffer. Completed once.
struct PendingOp {
  int target = 0;  ///< rank in the window's communicator
  AmFuture future;
  std::function<void(const AmReply&)> on_reply;
  bool complete = false;
};

/// A buffer of this origin that an RMA operation owns until it completes (MPI-3.1 11.3): a get's
/// result buffer (`written`, until its reply: `op`), or the origin buffer of a put or accumulate
/// (until the epoch's closing synchronization or a flush completes it at the origin). Another MPI
/// call that writes into it, or reads it when the operation writes it, is an error. A put's bytes
/// are hashed under mpirun --check (`hashed`), so that a store into them before completion is found
/// when the operation completes.
struct OwnedBuffer {
  int target = 0;  ///< rank in the window's communicator
  std::uintptr_t lo = 0, hi = 0;
  bool written = false;
  std::shared_ptr<PendingOp> op;  ///< the get's reply; null for a put
  bool hashed = false;
  std::uint64_t hash = 0;
  const char* call = nullptr;  ///< the MPI function that issued the operation
  const void* caller = nullptr;
};

/// An access to a target's window, kept by the target to find conflicting ones (MPI-3.1 11.7):
/// byte ranges [first, second) of its memory, and the epoch it belongs to.
enum class AccessKind : std::int64_t { put = 0, get = 1, accumulate = 2 };
enum class EpochKind : std::int64_t { none = 0, fence, post_start, lock };
struct AccessRecord {
  int origin = 0;  ///< world rank
  EpochKind epoch = EpochKind::none;
  std::int64_t count = 0;  ///< a fence epoch's fence count, an exposure epoch's MPI_Win_post count
  AccessKind kind = AccessKind::put;
  MPI_Datatype base = MPI_DATATYPE_NULL;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;  ///< sorted
  /// Under mpirun --check, a hash of the bytes of `ranges` once the access was applied (`hashed`),
  /// dropped when a later RMA access writes them: a change found when the epoch ends was then made
  /// by no RMA operation.
  std::uint64_t hash = 0;
  bool hashed = false;
  /// The origin's own MPI call on its own window memory (the origin buffer of its put, the result
  /// buffer of its get), which an RMA access of another rank to the same bytes conflicts with.
  bool local = false;
};

/// One rank's side of a window.
struct Window {
  MPI_Comm comm = MPI_COMM_NULL;  ///< a private duplicate of the communicator it was made on
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  bool owns_memory = false;    ///< MPI_Win_allocate(_shared): freed with the window
  std::vector<WinPeer> peers;  ///< by rank in comm
  std::vector<int> world;      ///< world rank of each rank in comm
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::optional<std::string> name;
  InfoPairs info;
  std::vector<std::pair<std::uintptr_t, std::size_t>> attached;  ///< a dynamic window's regions

  // The origin's side: its epochs and the operations not yet complete.
  bool fence_epoch = false;      ///< a fence without MPI_MODE_NOSUCCEED opened one
  /// Whether this rank made RMA calls in the epoch that fence opened (outside a passive-target
  /// epoch: the fence then began an access epoch, MPI-3.1 11.5.1); the lock call it made after the
  /// fence before any (nullptr: none), where, and whether RMA calls followed that lock (which, if
  /// another fence follows, made the fence begin an access epoch the lock is inside).
  bool fence_accessed = false;
  const char* lock_in_fence = nullptr;
  const void* lock_in_fence_caller = nullptr;
  bool lock_in_fence_used = false;
  std::vector<int> start_group;  ///< MPI_Win_start's targets (ranks in comm), while open
  bool started = false;
  std::vector<int> locked;  ///< per target: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE
  bool lock_all = false;
  std::vector<int> unflushed;                       ///< per target: one-way updates sent since its last completion
  std::vector<std::shared_ptr<PendingOp>> pending;  ///< replies awaited, in the order sent
  std::vector<OwnedBuffer> owned;                   ///< this origin's buffers its operations still own

  // The target's side: its exposure epochs and its lock, which the handlers change.
  // Checking: this rank's fences and posts so far, the accesses of its current epochs, the first
  // conflict among those of active-target epochs, which its next fence or wait reports, and per
  // origin (world rank) one of a passive-target epoch, which that origin's flush or unlock reports
  // (MPI_ERR_RMA_CONFLICT).
  std::int64_t fences = 0, posts = 0;
  std::vector<AccessRecord> epoch_accesses;
  std::string conflict;
  std::map<int, std::string> lock_conflicts;
  bool conflicts_are_errors = false;  ///< mpirun --check or info touchstone_conflicts=error (else a warning)
  bool warned_shared_results = false;  ///< two pending gets into the same bytes: warned once (not an error)
  bool hash_accesses = false;         ///< mpirun --check: AccessRecord::hash is kept (stores are found)
  std::vector<int> post_group;  ///< MPI_Win_post's origins, while the exposure epoch is open
  bool posted = false;
  int shared_holders = 0;
  int exclusive_holder = -1;  ///< world rank holding the exclusive lock, -1 none
};

/// A rank's windows: handle = index (0 is MPI_WIN_NULL).
struct Windows {
  std::vector<std::unique_ptr<Window>> table = std::vector<std::unique_ptr<Window>>(1);
  bool handlers_registered = false;
};

/// Takes the window's info hints Touchstone reads: touchstone_conflicts=error makes conflicting
/// accesses MPI_ERR_RMA_CONFLICT instead of a warning, touchstone_conflicts=warning a warning (the
/// default is an error under mpirun --check, a warning otherwise).
void apply_info(Window& w);
/// The window behind handle w; MpiError MPI_ERR_WIN when it is not one.
Window& window_of(RankState& rs, MPI_Win w);
/// A predefined window attribute (MPI_WIN_BASE ... MPI_WIN_MODEL) as MPI_Win_get_attr returns it.
bool window_attribute(RankState& rs, MPI_Win w, int keyval, void* out);
/// The rank's window table, made on first use.
Windows& windows(RankState& rs);
/// Registers the rank's RMA handlers (once, at its first window; the creation's exchange then
/// makes sure every member has them before any operation arrives).
void register_rma_handlers(RankState& rs);

/// Hands an error to the window's error handler (the world communicator's when w is not valid).
int raise_on_window(RankState& rs, MPI_Win w, const char* call, const MpiError& e);
/// The report MPI_ERRORS_ARE_FATAL on a window ends the run with.
std::string window_fatal_text(const char* call, int rank, const MpiError& e);

/// Runs body(rank state) as the MPI function `name` on window w: errors go to its error handler.
/// Always inlined, so that its return address is the program's call (the reports' source lines).
template <class Body>
[[gnu::always_inline]] inline int win_call(const char* name, MPI_Win w, Body&& body) {
  return object_call(
      name, true, [&](RankState& rs, const MpiError& e) { return raise_on_window(rs, w, name, e); },
      std::forward<Body>(body));
}

// --- synchronization (rma_sync.cpp), used by the operations ---

/// MPI_ERR_RMA_SYNC unless an access epoch of w includes target (a rank in the window's comm).
void check_access(const Window& w, int target);
/// MPI_ERR_RMA_SYNC unless a passive-target epoch (a lock) is open: request-based operations
/// need one (MPI-3.1 11.3.5).
void check_passive(const Window& w, const char* call);
/// Completes the awaited replies of `target` (every target when -1) and frees the buffers of its
/// operations (OwnedBuffer).
void complete_pending(RankState& rs, Window& w, int target);
/// Completes the awaited replies of `target` (every target when -1), leaving the buffers.
void complete_pending_replies(RankState& rs, Window& w, int target);
/// A checksum of the bytes [lo, hi) (check.hpp checksum).
std::uint64_t bytes_hash(std::uintptr_t lo, std::uintptr_t hi);
/// Completes every operation of this origin at `target` at the target too: the replies, and a
/// round trip behind the one-way updates (messages of one pair never overtake: docs/model.md 2.2).
void flush_target(RankState& rs, Window& w, int target);
/// Flushes several targets at once: their replies first, then one round trip to each target that
/// has one-way updates outstanding, all sent before any reply is awaited.
void flush_targets(RankState& rs, Window& w, const std::vector<int>& targets);
/// Notes an RMA call of this origin to `target` after a fence that opened an epoch (rma_sync.cpp).
void note_fence_access(Window& w, int target);
/// Checks a buffer an MPI call of this rank reads (or writes, `writes`), bytes [lo, hi), against
/// the rank's RMA operations: MPI_ERR_BUFFER when it overlaps a buffer a pending operation owns
/// (a get's result buffer; a put's origin buffer when the call writes), and a conflict
/// (report_conflict) when it overlaps bytes of the rank's own window memory that an RMA access of
/// an epoch not yet ended reaches (a write: any access; a read: a put or accumulate). Nothing to
/// do, at no cost, on a rank without windows.
/// `window_memory` false leaves the rank's window memory to the caller (an RMA call records it).
void check_against_rma(RankState& rs, std::uintptr_t lo, std::uintptr_t hi, bool writes, const char* what,
                       bool window_memory = true);
/// The same for count elements of type t at buf, when they are bytes without holes.
void check_against_rma(RankState& rs, const void* buf, int count, const Type& t, bool writes, const char* what,
                       bool window_memory = true);
/// Ends the records of this window's accesses that `ends` selects (their epoch is over at this
/// target): returns the first change of their bytes no RMA access made (a store of the program)
/// as a conflict's text, "" when none.
std::string end_records(Window& w, int target, const std::function<bool(const AccessRecord&)>& ends);
/// Every rank of the window's communicator.
std::vector<int> all_ranks(const Window& w);

// Handler ids of the RMA requests (below 2^26; MPI programs register none of their own).
inline constexpr int kRmaUpdate = (1 << 25) + 1;  ///< put and accumulate: one-way
inline constexpr int kRmaFetch = (1 << 25) + 2;   ///< get, get-accumulate, fetch-and-op: replies the old data
inline constexpr int kRmaSwap = (1 << 25) + 3;    ///< compare-and-swap: replies the old data
inline constexpr int kRmaSync = (1 << 25) + 4;    ///< flush, lock, unlock: replies
/// Window::locked: the lock was taken with MPI_MODE_NOCHECK (beside the lock type).
inline constexpr int kNoCheckBit = 1 << 16;
/// The conflict an access of this origin made in a passive-target epoch at `target`, found by
/// the target's handler: MPI_ERR_RMA_CONFLICT (read once the origin's flush or unlock has come
/// back, so the target has seen every access before it).
void report_lock_conflict(RankState& rs, Window& w, int target);
/// Reports conflicting accesses (MPI-3.1 11.7, whose outcome is undefined, not an error): a
/// warning on stderr, or MPI_ERR_RMA_CONFLICT when the window's info says
/// touchstone_conflicts=error.
void report_conflict(RankState& rs, const Window& w, std::string what);
/// kRmaSync's commands (its second argument).
enum class SyncCommand : std::int64_t { flush = 0, lock_shared, lock_exclusive, unlock_shared, unlock_exclusive };

}  // namespace touchstone::mpi
