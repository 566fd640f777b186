// Nonblocking and persistent collectives (icoll.cpp): any collective body as a request. Internal.
#pragma once
#include <functional>

#include "state.hpp"

namespace touchstone::mpi {

/// A collective's body on a communicator (coll.hpp): called with the rank's state and the
/// communicator as the instance sees it (its `coll` group is the instance's own).
using CollectiveBody = std::function<void(RankState&, Comm&)>;

/// MPI_Ixxx: starts `intra` (`inter` on an intercommunicator; MPI_ERR_COMM when empty) on `comm`
/// as a task (Proc::spawn) and returns its request in *request; the MPI function `name` as far as
/// errors go. Every rank of the communicator must start its collectives, blocking or not, in the
/// same order (MPI's rule).
int start_nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, CollectiveBody intra,
                      CollectiveBody inter = {});
/// MPI_Xxx_init: an inactive persistent request whose every MPI_Start runs the body as above.
int init_persistent(const char* name, MPI_Comm comm, MPI_Request* request, CollectiveBody intra,
                    CollectiveBody inter = {});

}  // namespace touchstone::mpi
