// MPI_Cancel (docs/mpi.md): a receive no message has matched is withdrawn (Proc::cancel), a send
// is never taken back; the status functions that say so (MPI_Test_cancelled, MPI_Status_set_cancelled).
#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "request.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Cancel(MPI_Request* request) {
  return call("MPI_Cancel", comm_of_request(request), [&](RankState& rs) {
    check_out(request, "request");
    Req* q = find_req(rs, *request);
    if (!q) throw MpiError{MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be cancelled"};
    if (inactive(*q))
      throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is inactive: there is nothing to cancel", *request)};
    // Only a receive that no message has matched by this rank's clock is withdrawn (Proc::cancel);
    // a send is never taken back: it completes normally, as MPI permits (docs/mpi.md).
    if (q->generalized) {
      if (q->generalized->cancel) q->generalized->cancel(q->generalized->extra_state, q->generalized->complete);
      return;
    }
    // An MPI_Isendrecv is not cancelled either: its send would still be delivered, and MPI lets a
    // cancel fail but not half succeed.
    if (q->done || !q->recv || !q->r.active() || q->paired_send) return;
    if (!rs.proc->cancel(q->r)) return;
    q->done = true;
    q->status = empty_status();
    q->status.touchstone_cancelled = 1;
  });
}

int MPI_Test_cancelled(const MPI_Status* status, int* flag) {
  return call("MPI_Test_cancelled", MPI_COMM_WORLD, [&](RankState&) {
    if (status == MPI_STATUS_IGNORE) throw MpiError{MPI_ERR_ARG, "the status is MPI_STATUS_IGNORE"};
    check_out(flag, "flag");
    *flag = status->touchstone_cancelled != 0;
  });
}

int MPI_Status_set_cancelled(MPI_Status* status, int flag) {
  return call("MPI_Status_set_cancelled", MPI_COMM_WORLD, [&](RankState&) {
    if (status == MPI_STATUS_IGNORE) throw MpiError{MPI_ERR_ARG, "the status is MPI_STATUS_IGNORE"};
    status->touchstone_cancelled = flag != 0;
  });
}
