// The MPI interface's state (docs/mpi.md): one RankState per MPI process, reached from the C
// functions through Proc::current(). Internal to libtouchstone_mpi.so.
#pragma once
#include <cstddef>
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
  // A nonblocking or persistent collective's error, filled in by its task (icoll.cpp) when the
  // communicator's error handler lets the run go on: the completing call reports it.
  std::shared_ptr<MpiError> failure;
  // Last, so that it is destroyed first: an uncompleted send request's message copies `staging`
  // (a packed send buffer) when the request goes (MPI_Request_free).
  Request r;
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
