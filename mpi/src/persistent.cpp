// MPI persistent point-to-point requests (docs/mpi.md): MPI_*_init make an inactive request that
// MPI_Start and MPI_Startall post again and again; the completion calls (pt2pt.cpp) make it inactive.
#include <functional>
#include <set>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "request.hpp"
#include "types.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace {
// A persistent request, inactive until MPI_Start posts `start` into it. Its buffer is checked here
// as MPI_Send's and MPI_Recv's are (`type`: the request's copy, null for MPI_PROC_NULL with
// MPI_DATATYPE_NULL), so that a NULL buffer is reported by the call that was given it.
void persistent(RankState& rs, MPI_Comm comm, const void* buf, int count, MPI_Datatype dt, const Type* type, int peer,
                int tag, bool recv, std::function<void(RankState&, Req&)> start, MPI_Request* request) {
  check_out(request, "request");
  auto q = new_request(rs, comm, count, dt, peer, tag, recv);
  if (type && peer != MPI_PROC_NULL) check_buffer(buf, count, *type);
  q->persistent = true;
  q->done = true;
  q->status = empty_status();
  q->start = std::move(start);
  *request = new_req(rs, std::move(q));
}

int send_init(const char* name, const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request* request, SendMode mode) {
  return call(name, comm, [&](RankState& rs) {
    // The request keeps its own copy of the type: the handle may be freed before MPI_Start.
    const auto type = dest == MPI_PROC_NULL && dt == MPI_DATATYPE_NULL ? nullptr : shared_copy(committed(rs, dt));
    // Each start owns the send buffer until the request completes (check.hpp own_buffer), as MPI_Isend does.
    const std::size_t bytes =
        type && type->contiguous() && count > 0 ? static_cast<std::size_t>(count) * type->size : 0;
    persistent(
        rs, comm, buf, count, dt, type.get(), dest, tag, false,
        [=](RankState& r, Req& q) {
          start_send(r, q, buf, count, dt, dest, tag, mode, type.get());
          own_buffer(r, q, buf, bytes);
        },
        request);
  });
}

Req& startable(RankState& rs, MPI_Request h) {
  Req* q = find_req(rs, h);
  if (!q) throw MpiError{MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be started"};
  if (!q->persistent) throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is not persistent", h)};
  if (q->started)
    throw MpiError{MPI_ERR_REQUEST,
                   fmt::format("request {} is active: it must complete before it is started again", h)};
  return *q;
}

void start(RankState& rs, Req& q) {
  q.done = false;
  q.status = MPI_Status{};
  q.buffer_error.reset();  // an earlier start's finding was reported by the call that completed it
  try {
    q.start(rs, q);
  } catch (...) {
    q.done = true;
    q.status = empty_status();
    throw;
  }
  q.started = true;
}
}  // namespace

int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return send_init("MPI_Send_init", buf, count, datatype, dest, tag, comm, request, SendMode::standard);
}

int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return send_init("MPI_Ssend_init", buf, count, datatype, dest, tag, comm, request, SendMode::synchronous);
}

int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return send_init("MPI_Rsend_init", buf, count, datatype, dest, tag, comm, request, SendMode::ready);
}

int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return send_init("MPI_Bsend_init", buf, count, datatype, dest, tag, comm, request, SendMode::buffered);
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return call("MPI_Recv_init", comm, [&](RankState& rs) {
    const auto type =
        source == MPI_PROC_NULL && datatype == MPI_DATATYPE_NULL ? nullptr : shared_copy(committed(rs, datatype));
    persistent(
        rs, comm, buf, count, datatype, type.get(), source, tag, true,
        [=](RankState& r, Req& q) {
          // Started, it owns its buffer as MPI_Irecv does (under --check: it lands in a staging copy).
          start_recv(r, q, buf, count, datatype, source, tag, type.get(), true);
        },
        request);
  });
}

int MPI_Start(MPI_Request* request) {
  return call("MPI_Start", comm_of_request(request),
              [&](RankState& rs) {
                check_out(request, "request");
                start(rs, startable(rs, *request));
              });
}

int MPI_Startall(int count, MPI_Request requests[]) {
  return call("MPI_Startall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    if (count > 0) check_out(requests, "array_of_requests");
    // All checked before any starts; a request named twice would be started while active.
    std::set<MPI_Request> seen;
    for (int i = 0; i < count; ++i) {
      startable(rs, requests[i]);
      if (!seen.insert(requests[i]).second)
        throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} appears twice: it would be started while active",
                                                    requests[i])};
    }
    for (int i = 0; i < count; ++i) start(rs, *find_req(rs, requests[i]));
  });
}
