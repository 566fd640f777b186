// Nonblocking and persistent collectives (icoll.cpp): any collective body as a request. Internal.
#pragma once
#include <functional>

#include "state.hpp"

namespace touchstone::mpi {

/// A collective's body on a communicator (coll.hpp): called with the rank's state and the
/// communicator as the instance sees it (its `coll` group is the instance's own).
using CollectiveBody = std::function<void(RankState&, Comm&)>;
struct Collective;  // check.hpp
/// The descriptor of a call named `name` on a communicator (the intercommunicator form's on an
/// intercommunicator), for the consistency check (check.hpp); when empty, the call is checked by
/// its name alone.
using CollectiveDescription = std::function<Collective(RankState&, const Comm&, const char* name)>;

/// What a collective runs as a request: its body on an intracommunicator; on an intercommunicator
/// (empty: MPI defines no such form, MPI_ERR_COMM); its descriptor; and whether it
/// takes count arrays (v-forms), which a persistent collective's program may fill between its init
/// and its starts, so that its init is checked by name and order alone and each start by the
/// descriptor (check_start).
struct CollectiveForms {
  CollectiveBody intra;
  CollectiveBody inter = {};
  CollectiveDescription describe = {};
  bool count_arrays = false;
};

/// MPI_Ixxx: starts the collective on `comm` as a task (Proc::spawn) and returns its request in
/// *request; the MPI function `name` as far as errors go. Every rank of the communicator must start
/// its collectives, blocking or not, in the same order (MPI's rule), which the call checks.
int start_nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms);
/// MPI_Xxx_init: an inactive persistent request whose every MPI_Start runs the collective as above.
int init_persistent(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms);

}  // namespace touchstone::mpi
