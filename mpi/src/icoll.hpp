// Nonblocking and persistent collectives (icoll.cpp): any collective body as a request. Internal.
#pragma once
#include <concepts>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "state.hpp"

namespace touchstone::mpi {

/// A collective's body on a communicator (coll.hpp): called with the rank's state, the
/// communicator as the instance sees it (its `coll` group is the instance's own), and the receive
/// buffer it writes: the program's (CollectiveForms::recvbuf) or, under --check, a staging copy
/// of it, each significant block at the same offset from it as in the program's. A body of two
/// arguments writes the buffer it was made with (its forms own no receive buffer).
class CollectiveBody {
 public:
  using Run = std::function<void(RankState&, Comm&, void* recvbuf)>;
  CollectiveBody() = default;
  template <class F>
  requires std::invocable<F&, RankState&, Comm&, void*> CollectiveBody(F f) : run_(std::move(f)) {}
  template <class F>
  requires std::invocable<F&, RankState&, Comm&> CollectiveBody(F f)
      : run_([f = std::move(f)](RankState& rs, Comm& c, void*) mutable { f(rs, c); }) {}
  explicit operator bool() const { return static_cast<bool>(run_); }
  void operator()(RankState& rs, Comm& c, void* recvbuf) const { run_(rs, c, recvbuf); }

 private:
  Run run_;
};
struct Collective;  // check.hpp
/// The descriptor of a call named `name` on a communicator (the intercommunicator form's on an
/// intercommunicator), for the consistency check (check.hpp); when empty, the call is checked by
/// its name alone.
using CollectiveDescription = std::function<Collective(RankState&, const Comm&, const char* name)>;

/// Runs of a buffer argument: (offset from `base`, bytes), each a whole buffer or, when `blocks`, a
/// v-form's block (the gaps between blocks are not the collective's).
struct BufferRuns {
  const void* base = nullptr;
  std::vector<std::pair<std::ptrdiff_t, std::size_t>> runs;
  bool blocks = false;
};
/// What a collective reads and writes at a rank, as MPI makes it significant there (the root's send
/// buffer of a scatter, the root's receive buffer of a gather, no send buffer for MPI_IN_PLACE),
/// contiguous datatypes only; the receive runs are relative to the receive buffer argument.
struct CollectiveBuffers {
  BufferRuns send, recv;
};
/// A collective's buffers on an intracommunicator, given the rank's datatypes and the communicator.
using CollectiveBufferMap = std::function<CollectiveBuffers(RankState&, const Comm&)>;

/// What a collective runs as a request: its body on an intracommunicator; on an intercommunicator
/// (empty: MPI defines no such form, MPI_ERR_COMM); its descriptor; whether it
/// takes count arrays (v-forms), which a persistent collective's program may fill between its init
/// and its starts, so that its init is checked by name and order alone and each start by the
/// descriptor (check_start); its receive buffer argument, and the buffers it owns from its post or
/// start until it completes (check.hpp own_buffer; empty: none).
struct CollectiveForms {
  CollectiveBody intra;
  CollectiveBody inter = {};
  CollectiveDescription describe = {};
  bool count_arrays = false;
  void* recvbuf = nullptr;
  CollectiveBufferMap buffers = {};
};

/// MPI_Ixxx: starts the collective on `comm` as a task (Proc::spawn) and returns its request in
/// *request; the MPI function `name` as far as errors go. Every rank of the communicator must start
/// its collectives, blocking or not, in the same order (MPI's rule), which the call checks.
int start_nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms);
/// MPI_Xxx_init: an inactive persistent request whose every MPI_Start runs the collective as above.
int init_persistent(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms);

}  // namespace touchstone::mpi
