// Nonblocking and persistent collectives (icoll.cpp): any collective body as a request. Internal.
#pragma once
#include <functional>

#include "state.hpp"

namespace touchstone::mpi {

/// A collective's body on a communicator (coll.hpp): called with the rank's state and the
/// communicator as the instance sees it (its `coll` group is the instance's own).
using CollectiveBody = std::function<void(RankState&, Comm&)>;
struct Collective;  // check.hpp
/// The descriptor of the call on an intracommunicator, for the consistency check (check.hpp);
/// when empty, the call is checked by its name alone.
using CollectiveDescription = std::function<Collective(RankState&, const Comm&)>;

/// MPI_Ixxx: starts `intra` (`inter` on an intercommunicator; MPI_ERR_COMM when empty) on `comm`
/// as a task (Proc::spawn) and returns its request in *request; the MPI function `name` as far as
/// errors go. Every rank of the communicator must start its collectives, blocking or not, in the
/// same order (MPI's rule), which the call checks, with `describe`'s descriptor when given.
int start_nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, CollectiveBody intra,
                      CollectiveBody inter = {}, const CollectiveDescription& describe = {});
/// MPI_Xxx_init: an inactive persistent request whose every MPI_Start runs the body as above.
int init_persistent(const char* name, MPI_Comm comm, MPI_Request* request, CollectiveBody intra,
                    CollectiveBody inter = {}, const CollectiveDescription& describe = {});

}  // namespace touchstone::mpi
