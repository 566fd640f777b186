// The MPI interface's state (docs/mpi.md): one RankState per MPI process, reached from the C
// functions through Proc::current(). Internal to libtouchstone_mpi.so.
#pragma once
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mpi.h"
#include "touchstone/proc.hpp"

namespace touchstone::mpi {

/// An MPI error, raised inside an MPI function and handed to the communicator's error handler.
struct MpiError {
  int code;
  std::string what;
};

/// MPI_Abort, unwinding the calling rank; the run ends with the error code as its exit status.
struct AbortRequested : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Comm {
  Group pt2pt;       ///< point-to-point messages
  Group coll;        ///< collectives: a context of their own, so they never match user messages
  int rank = 0, size = 0;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  bool world_identity = false;  ///< members are the machine's ranks 0..nodes-1 in order
};

/// A datatype: `size` bytes of data per element, laid out as `blocks` (offset, length) within
/// `extent` bytes; elements of derived types are built from one predefined `base` type.
struct Type {
  std::size_t size = 0;
  std::size_t extent = 0;
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  MPI_Datatype base = MPI_DATATYPE_NULL;
  std::size_t base_count = 0;  ///< base elements per element
  bool committed = true;
  bool contiguous() const { return blocks.size() == 1 && blocks[0].first == 0 && blocks[0].second == extent; }
};

struct UserOp {
  MPI_User_function* fn = nullptr;
  bool commute = true;
};

/// A request: a runtime request in flight, or one already complete (PROC_NULL, or completed by a
/// testall that could not complete them all) with its status.
struct RankState;
struct Generalized;

struct Req {
  bool recv = false;
  bool done = false;
  MPI_Status status{};
  MPI_Comm comm = MPI_COMM_NULL;
  // A non-contiguous or truncating receive lands in `staging`, then is unpacked into the user's buffer.
  std::vector<std::byte> staging;
  void* user_buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::size_t message_size = 0;  ///< the received message's size (more than the buffer when truncated)
  // Persistent requests (point-to-point `*_init` and persistent collectives): MPI_Start calls
  // `start` to post the operation again into this request; an inactive persistent request is
  // `done` with an empty status and survives completion until MPI_Request_free.
  bool persistent = false;
  std::function<void(RankState&, Req&)> start;
  bool started = false;  ///< persistent: MPI_Start posted it and no completion call has seen it complete
  /// A generalized request (MPI_Grequest_start): the program's functions, complete when it says so.
  std::shared_ptr<Generalized> generalized;
  // Last, so that it is destroyed first: an uncompleted send request's message copies `staging`
  // (a packed send buffer) when the request goes (MPI_Request_free).
  Request r;
};

/// MPI_Grequest_start's request: the program completes it (MPI_Grequest_complete); the completion
/// calls ask query_fn for its status; free_fn runs when it is freed (the destructor).
struct Generalized {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra_state = nullptr;
  bool complete = false;
  bool freed = false;  ///< MPI_Request_free came first: the handle's slot goes at MPI_Grequest_complete
  int query_error = MPI_SUCCESS;
  Generalized() = default;
  Generalized(const Generalized&) = delete;
  Generalized& operator=(const Generalized&) = delete;
  ~Generalized() {
    if (free) free(extra_state);
  }
};

/// MPI_Buffer_attach's buffer (docs/mpi.md, "Buffered mode"): its capacity, and the buffered
/// messages still using part of it until their sends complete.
struct AttachedBuffer {
  void* addr = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;  ///< data + MPI_BSEND_OVERHEAD of every message in `pending`
  struct Pending {
    std::vector<std::byte> data;  ///< the message's copy: the send reads it until it completes
    std::size_t charge = 0;
    Request r;  ///< last, so that it goes first (a dropped send copies `data`)
  };
  std::deque<Pending> pending;  ///< in the order they were sent
};

struct RankState {
  Proc* proc = nullptr;
  bool initialized = false, finalized = false;
  std::vector<std::unique_ptr<Comm>> comms;     ///< handle = index; 0 null, 1 world, 2 self
  std::vector<std::optional<Type>> types;       ///< derived types: handle = kFirstDerivedType + index
  std::vector<std::optional<UserOp>> ops;       ///< user ops: handle = kFirstUserOp + index
  std::vector<std::unique_ptr<Req>> reqs;       ///< handle = index + 1
  std::vector<std::optional<std::vector<int>>> groups;  ///< world ranks; handle = kFirstGroup + index
  std::vector<MPI_Comm_errhandler_function*> errhandlers;  ///< handle = kFirstErrhandler + index
  std::unique_ptr<AttachedBuffer> attached;  ///< MPI_Buffer_attach (a pointer: RankState stays movable)
  std::vector<std::unique_ptr<Req>> messages;  ///< MPI_Mprobe's matched messages: handle = index + 1
  std::vector<std::unique_ptr<Req>> freed_receives;  ///< active receives MPI_Request_free let go of
};

inline constexpr int kFirstDerivedType = 1000;
inline constexpr int kFirstUserOp = 100;
inline constexpr int kFirstGroup = 2;
inline constexpr int kFirstErrhandler = 10;

/// One `touchstone mpirun`: the ranks' states and the collectives chosen.
struct Session {
  int np = 0;
  std::vector<RankState> ranks;
  std::map<std::string, std::string> coll;  ///< collective -> algorithm
  std::optional<int> abort_code;
  std::string abort_report;
};

/// The session of the run in progress (set by launch()).
Session* session();
void set_session(Session* s);

}  // namespace touchstone::mpi
