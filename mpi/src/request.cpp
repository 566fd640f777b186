// MPI requests over the runtime's (request.hpp).
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "request.hpp"
#include "types.hpp"

namespace touchstone::mpi {

// The bytes to send: the user's buffer itself when the type is contiguous, else a packed copy.
std::span<const std::byte> send_bytes(const void* buf, int count, const Type& t, std::vector<std::byte>& scratch) {
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  if (t.contiguous() || n == 0) return {static_cast<const std::byte*>(buf), n};
  scratch.resize(n);
  pack(buf, count, t, scratch);
  return scratch;
}

// A new request slot; its handle is index + 1.
MPI_Request new_req(RankState& rs, std::unique_ptr<Req> q) {
  for (std::size_t i = 0; i < rs.reqs.size(); ++i)
    if (!rs.reqs[i]) {
      rs.reqs[i] = std::move(q);
      return static_cast<MPI_Request>(i + 1);
    }
  rs.reqs.push_back(std::move(q));
  return static_cast<MPI_Request>(rs.reqs.size());
}

Req* find_req(RankState& rs, MPI_Request h) {
  if (h == MPI_REQUEST_NULL) return nullptr;
  if (h < 0 || h > static_cast<int>(rs.reqs.size()) || !rs.reqs[static_cast<std::size_t>(h - 1)])
    throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is not valid", h)};
  return rs.reqs[static_cast<std::size_t>(h - 1)].get();
}

// The checks every point-to-point call makes (count, type, peer, tag) and its new request; a
// request to MPI_PROC_NULL is complete at once.
std::unique_ptr<Req> new_request(RankState& rs, MPI_Comm ch, int count, MPI_Datatype dt, int peer, int tag, bool recv) {
  const Comm& c = comm_of(rs, ch);
  check_count(count);
  committed(rs, dt);
  check_peer(c, peer, recv, recv ? "source" : "destination");
  check_tag(tag, recv);
  auto q = std::make_unique<Req>();
  q->recv = recv;
  q->comm = ch;
  if (peer == MPI_PROC_NULL) {
    q->done = true;
    q->status = proc_null_status();
  }
  return q;
}

// Posts a receive into the user's buffer (or a staging buffer for non-contiguous types).
std::unique_ptr<Req> post_recv(RankState& rs, MPI_Comm ch, void* buf, int count, MPI_Datatype dt, int src, int tag) {
  auto q = new_request(rs, ch, count, dt, src, tag, true);
  q->user_buf = buf;
  q->count = count;
  q->type = dt;
  if (q->done) return q;
  const Comm& c = comm_of(rs, ch);
  const Type& t = committed(rs, dt);
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  std::span<std::byte> into{static_cast<std::byte*>(buf), n};
  if (!t.contiguous() && n) {
    q->staging.resize(n);
    into = q->staging;
  }
  q->r = rs.proc->irecv_truncating(src == MPI_ANY_SOURCE ? any_source : src, tag == MPI_ANY_TAG ? any_tag : tag, into,
                                   c.pt2pt);
  return q;
}

std::unique_ptr<Req> post_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst,
                               int tag, bool synchronous) {
  auto q = new_request(rs, ch, count, dt, dst, tag, false);
  if (q->done) return q;
  const Comm& c = comm_of(rs, ch);
  const Type& t = committed(rs, dt);
  // A non-contiguous type is packed into the request's staging buffer: the runtime reads the send
  // buffer until the send completes (docs/model.md 1.5), so it must live as long as the request.
  const auto data = send_bytes(buf, count, t, q->staging);
  q->r = synchronous ? rs.proc->issend(dst, tag, data, c.pt2pt) : rs.proc->isend(dst, tag, data, c.pt2pt);
  return q;
}

// Turns a completed runtime request into its MPI status (unpacking a staged receive); the status's
// MPI_ERROR says MPI_ERR_TRUNCATE for a message longer than the buffer.
void finish(RankState& rs, Req& q, const Status& st) {
  q.done = true;
  q.status = MPI_Status{};
  if (!q.recv) {
    q.status = empty_status();
    if (q.failure && q.failure->code != MPI_SUCCESS) q.status.MPI_ERROR = q.failure->code;
    return;
  }
  const Type& t = type_of(rs, q.type);
  const std::size_t cap = static_cast<std::size_t>(q.count) * t.size;
  const std::size_t got = std::min(st.size, cap);
  if (!q.staging.empty()) unpack(std::span(q.staging).first(got), q.user_buf, q.count, t);
  q.status.MPI_SOURCE = st.source;
  q.status.MPI_TAG = st.tag;
  q.status.touchstone_bytes = got;
  q.status.MPI_ERROR = st.truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  q.message_size = st.size;
}

MpiError truncation(const Req& q) {
  if (q.failure && q.failure->code != MPI_SUCCESS) return *q.failure;  // a collective's error
  return MpiError{MPI_ERR_TRUNCATE,
                  fmt::format("a message of {} bytes from rank {} (tag {}) is longer than the receive buffer of {} bytes",
                              q.message_size, q.status.MPI_SOURCE, q.status.MPI_TAG, q.status.touchstone_bytes)};
}

// Waitall and Testall, once every request is complete: frees them, sets their statuses and
// raises MPI_ERR_IN_STATUS for the first that failed (a truncated receive).
void release_all(RankState& rs, int count, MPI_Request requests[], MPI_Status statuses[]) {
    std::optional<MpiError> first;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      MPI_Status s = q ? q->status : empty_status();
      if (q && s.MPI_ERROR != MPI_SUCCESS && !first) first = truncation(*q);
      if (q) release(rs, &requests[i]);
      if (statuses != MPI_STATUSES_IGNORE) statuses[i] = s;
    }
    if (first) throw MpiError{MPI_ERR_IN_STATUS, first->what};
}

// Completes the request behind handle *h (blocking), frees it and reports truncation.
void wait_one(RankState& rs, MPI_Request* h, MPI_Status* status) {
  Req* q = find_req(rs, *h);
  if (!q) {
    set_status(status, empty_status());
    return;
  }
  if (!q->done) finish(rs, *q, rs.proc->wait(q->r));
  const MPI_Status s = q->status;
  const bool failed = s.MPI_ERROR != MPI_SUCCESS;
  const MpiError err = failed ? truncation(*q) : MpiError{};
  release(rs, h);
  set_status(status, s);
  if (failed) throw err;
}

bool inactive(const Req* q) { return q && q->persistent && q->done; }

// A persistent request stays, inactive with an empty status, until MPI_Request_free.
void release(RankState& rs, MPI_Request* h) {
  Req* q = find_req(rs, *h);
  if (q && q->persistent) {
    q->status = empty_status();
    q->failure.reset();
    return;
  }
  rs.reqs[static_cast<std::size_t>(*h - 1)].reset();
  *h = MPI_REQUEST_NULL;
}

}  // namespace touchstone::mpi
