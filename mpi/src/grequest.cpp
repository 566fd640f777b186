// Generalized requests (docs/mpi.md): MPI_Grequest_start and MPI_Grequest_complete; the completion
// calls ask the request's query function for its status (request.cpp, progress).
#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "request.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  return call("MPI_Grequest_start", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(request, "request");
    auto q = std::make_unique<Req>();
    q->generalized = std::make_shared<Generalized>();
    q->generalized->query = query_fn;
    q->generalized->free = free_fn;
    q->generalized->cancel = cancel_fn;
    q->generalized->extra_state = extra_state;
    *request = new_req(rs, std::move(q));
  });
}

int MPI_Grequest_complete(MPI_Request request) {
  return call("MPI_Grequest_complete", MPI_COMM_WORLD, [&](RankState& rs) {
    Req* q = find_req(rs, request);
    if (!q || !q->generalized)
      throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is not a generalized request", request)};
    if (q->generalized->complete)
      throw MpiError{MPI_ERR_REQUEST, fmt::format("generalized request {} is already complete", request)};
    q->generalized->complete = true;
    if (q->generalized->freed) rs.reqs[static_cast<std::size_t>(request - 1)].reset();  // runs free_fn
  });
}
