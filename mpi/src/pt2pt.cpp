// MPI point-to-point communication (docs/mpi.md) over the runtime's sends and receives:
// blocking and nonblocking calls, probes, and the completion of requests.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

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

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Send", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (!q->done) {
      const Waiting waiting(rs, q.get());
      rs.proc->wait(q->r);
    }
  });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Rsend", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (!q->done) {
      const Waiting waiting(rs, q.get());
      rs.proc->wait(q->r);
    }
  });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Ssend", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, true);
    if (!q->done) {
      const Waiting waiting(rs, q.get());
      rs.proc->wait(q->r);
    }
  });
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Recv", comm, [&](RankState& rs) {
    MPI_Request h = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, tag));
    wait_one(rs, &h, status);
  });
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Isend", comm, [&](RankState& rs) {
    check_out(request, "request");
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (count > 0 && committed(rs, datatype).contiguous())
      own_buffer(rs, *q, buf, static_cast<std::size_t>(count) * committed(rs, datatype).size);
    *request = new_req(rs, std::move(q));
  });
}

int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Issend", comm, [&](RankState& rs) {
    check_out(request, "request");
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, true);
    if (count > 0 && committed(rs, datatype).contiguous())
      own_buffer(rs, *q, buf, static_cast<std::size_t>(count) * committed(rs, datatype).size);
    *request = new_req(rs, std::move(q));
  });
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return call("MPI_Irsend", comm, [&](RankState& rs) {
    check_out(request, "request");
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (count > 0 && committed(rs, datatype).contiguous())
      own_buffer(rs, *q, buf, static_cast<std::size_t>(count) * committed(rs, datatype).size);
    *request = new_req(rs, std::move(q));
  });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Irecv", comm, [&](RankState& rs) {
    check_out(request, "request");
    *request = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, tag, true));
  });
}

namespace {

// The bytes count elements of t at buf occupy, as sorted, merged [first, second) runs.
std::vector<std::pair<std::uintptr_t, std::uintptr_t>> byte_runs(const void* buf, int count, const Type& t) {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> runs;
  const auto base = reinterpret_cast<std::uintptr_t>(buf);
  for_each_run(t, static_cast<std::size_t>(count), [&](MPI_Aint offset, std::size_t length) {
    if (length) runs.emplace_back(base + static_cast<std::uintptr_t>(offset), base + offset + length);
  });
  std::sort(runs.begin(), runs.end());
  return runs;
}

// MPI-3.1 3.10: MPI_Sendrecv's send and receive buffers must be disjoint (MPI_Sendrecv_replace
// is the call for one buffer): MPI_ERR_BUFFER naming the first byte both hold.
void check_disjoint(RankState& rs, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                    const void* recvbuf, int recvcount, MPI_Datatype recvtype, int source) {
  if (dest == MPI_PROC_NULL || source == MPI_PROC_NULL || sendcount <= 0 || recvcount <= 0) return;
  const Type& st = committed(rs, sendtype);
  const Type& rt = committed(rs, recvtype);
  if (st.size == 0 || rt.size == 0) return;
  const auto a = byte_runs(sendbuf, sendcount, st), b = byte_runs(recvbuf, recvcount, rt);
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uintptr_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) {
      const auto s0 = reinterpret_cast<std::uintptr_t>(sendbuf);
      throw MpiError{MPI_ERR_BUFFER,
                     fmt::format("the receive buffer ({} x {}) shares bytes [{}, {}) of the send buffer ({} x {}): "
                                 "they must be disjoint (MPI-3.1 3.10; MPI_Sendrecv_replace sends and receives in one "
                                 "buffer)",
                                 recvcount, type_name(recvtype), lo - s0, hi - s0, sendcount, type_name(sendtype))};
    }
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
}

}  // namespace

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv", comm, [&](RankState& rs) {
    check_disjoint(rs, sendbuf, sendcount, sendtype, dest, recvbuf, recvcount, recvtype, source);
    // Both halves checked before either is posted: a receive left behind by a refused send would
    // take a later message of the program's under MPI_ERRORS_RETURN.
    MPI_Request q = new_req(rs, post_sendrecv(rs, comm, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                              recvcount, recvtype, source, recvtag));
    wait_one(rs, &q, status);
  });
}

namespace {
// The replace forms' message: the runtime reads a send buffer until the send completes, and the
// receive writes into this one, so the message goes from a copy. A non-contiguous type is packed
// when the send is posted (the receive of one lands in a staging buffer until it completes); a
// contiguous one is copied here into `copy`. Returns the buffer to send from.
const void* outgoing(RankState& rs, const void* buf, int count, MPI_Datatype dt, int dest,
                     std::vector<std::byte>& copy) {
  if (dest == MPI_PROC_NULL || count <= 0) return buf;
  const Type& t = committed(rs, dt);
  if (!t.contiguous()) return buf;
  check_buffer(buf, count, t);
  copy.assign(static_cast<const std::byte*>(buf), static_cast<const std::byte*>(buf) + count * t.size);
  return copy.data();
}
}  // namespace

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv_replace", comm, [&](RankState& rs) {
    std::vector<std::byte> copy;
    const void* from = outgoing(rs, buf, count, datatype, dest, copy);
    MPI_Request s = new_req(rs, post_send(rs, comm, from, count, datatype, dest, sendtag, false));
    MPI_Request r = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, recvtag));
    wait_one(rs, &s, MPI_STATUS_IGNORE);
    wait_one(rs, &r, status);
  });
}

int MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Isendrecv", comm, [&](RankState& rs) {
    comm_of(rs, comm);  // a bad communicator is named first, as by every call on one
    check_out(request, "request");
    check_disjoint(rs, sendbuf, sendcount, sendtype, dest, recvbuf, recvcount, recvtype, source);
    auto q = post_sendrecv(rs, comm, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag);
    if (sendcount > 0 && dest != MPI_PROC_NULL && committed(rs, sendtype).contiguous())
      own_buffer(rs, *q->paired_send, sendbuf, static_cast<std::size_t>(sendcount) * committed(rs, sendtype).size);
    *request = new_req(rs, std::move(q));
  });
}

int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Isendrecv_replace", comm, [&](RankState& rs) {
    comm_of(rs, comm);  // a bad communicator is named first, as by every call on one
    check_out(request, "request");
    std::vector<std::byte> copy;
    const void* from = outgoing(rs, buf, count, datatype, dest, copy);
    auto q = post_sendrecv(rs, comm, from, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag);
    // The send reads the copy until it completes, so the copy goes with it: a moved vector keeps its
    // bytes where they are (start_send left the send's staging empty, the type being contiguous).
    if (!copy.empty()) q->paired_send->staging = std::move(copy);
    *request = new_req(rs, std::move(q));
  });
}

namespace {
MPI_Status probe_status(const Status& st, const Comm& c) {
  MPI_Status s{};
  s.MPI_SOURCE = c.group_to_peer(st.source);
  s.MPI_TAG = st.tag;
  s.touchstone_bytes = st.size;
  return s;
}
}  // namespace

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Probe", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_peer(c, source, true, "source");
    check_tag(tag, true);
    if (source == MPI_PROC_NULL) return set_result_status(status, proc_null_status());
    const Status st =
        rs.proc->probe(source == MPI_ANY_SOURCE ? any_source : c.peer_to_group(source), tag == MPI_ANY_TAG ? any_tag : tag,
                       c.pt2pt);
    note_wildcard(rs, rs.proc->last_receive_call(), "MPI_Probe", rs.caller, source, tag, comm);
    set_result_status(status, probe_status(st, c));
  });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return call("MPI_Iprobe", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_peer(c, source, true, "source");
    check_tag(tag, true);
    check_out(flag, "flag");
    if (source == MPI_PROC_NULL) {
      *flag = 1;
      return set_result_status(status, proc_null_status());
    }
    const auto st = rs.proc->iprobe(source == MPI_ANY_SOURCE ? any_source : c.peer_to_group(source),
                                    tag == MPI_ANY_TAG ? any_tag : tag, c.pt2pt);
    note_wildcard(rs, rs.proc->last_receive_call(), "MPI_Iprobe", rs.caller, source, tag, comm);
    *flag = st.has_value();
    if (st) set_result_status(status, probe_status(*st, c));
  });
}

namespace {
// Every handle of an array call is checked before any request is touched.
void check_requests(RankState& rs, int count, const MPI_Request requests[]) {
  check_count(count);
  if (count > 0) check_out(requests, "array_of_requests");
  for (int i = 0; i < count; ++i) find_req(rs, requests[i]);
}
}  // namespace

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return call("MPI_Wait", comm_of_request(request), [&](RankState& rs) {
    check_out(request, "request");
    wait_one(rs, request, status);
  });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return call("MPI_Waitall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_requests(rs, count, requests);
    // Inline room for the usual few requests: a waitall is made for nearly every exchange, and
    // vectors of its own cost about as much host time as the runtime's waitall itself.
    Few<Request> active;
    Few<Req*> parts;
    Few<const Req*> pending;
    auto take = [&](Req* q) {
      if (q->done || !q->r.active()) return;
      active.push_back(std::move(q->r));
      parts.push_back(q);
      pending.push_back(q);  // the runtime completes receives in the order their messages arrived (docs/model.md)
    };
    for (int i = 0; i < count; ++i)
      if (Req* q = find_req(rs, requests[i]); !is_null(q)) {
        take(q);
        if (q->paired_send) take(q->paired_send.get());
      }
    Few<Status> st(parts.size());
    {
      const Waiting waiting(rs, span_of(pending));  // only while blocked: release_all frees them
      rs.proc->waitall(span_of(active), span_of(st));
    }
    for (std::size_t k = 0; k < parts.size(); ++k) finish(rs, *parts[k], st[k]);
    for (int i = 0; i < count; ++i)  // generalized requests, and the pairs of MPI_Isendrecv
      if (Req* q = find_req(rs, requests[i]); !is_null(q)) progress(rs, *q, true);
    release_all(rs, count, requests, statuses);
  });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return call("MPI_Waitany", MPI_COMM_WORLD, [&](RankState& rs) {
    check_requests(rs, count, requests);
    check_out(index, "index");
    *index = MPI_UNDEFINED;
    Few<int> which;
    bool generalized = false;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (is_null(q)) continue;  // null and inactive requests are skipped
      // Already complete (MPI_PROC_NULL, a buffered send, completed by a testall, a generalized
      // request its program completed).
      if (all_done(*q) || ((q->generalized || q->completes) && progress(rs, *q, false))) {
        *index = i;
        return wait_one(rs, &requests[i], status);
      }
      // An operation this layer carries out always ends (a one-sided operation's handler replies;
      // a partitioned one completes or refuses to wait): waiting for the first such request ends,
      // though another request might have completed earlier.
      if (q->completes) {
        *index = i;
        return wait_one(rs, &requests[i], status);
      }
      if (q->generalized) generalized = true;
      else which.push_back(i);
    }
    if (which.empty() && generalized)
      throw MpiError{MPI_ERR_REQUEST, "waiting for generalized requests none of which is complete would wait forever: "
                                      "the rank's one thread must call MPI_Grequest_complete first"};
    if (which.empty()) return set_status(status, empty_status());
    // The runtime operations still in progress: one per request, two for an MPI_Isendrecv whose
    // halves are both in progress, each with the request it is of.
    Few<Request> active;
    Few<Req*> parts;
    Few<const Req*> pending;
    Few<int> of;
    for (int i : which) {
      Req* q = find_req(rs, requests[i]);
      for (Req* part : {q, q->paired_send.get()})
        if (part && !part->done) {
          parts.push_back(part);
          pending.push_back(part);
          of.push_back(i);
          active.push_back(std::move(part->r));
        }
    }
    Status st;
    std::size_t k = 0;
    for (;;) {
      {
        const Waiting waiting(rs, span_of(pending));
        k = rs.proc->waitany(span_of(active), &st);
      }
      finish(rs, *parts[k], st);
      if (all_done(*find_req(rs, requests[of[k]]))) break;
      // Half of an MPI_Isendrecv: its request completes with the other half, which may come after
      // another request's operation.
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(k));
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(k));
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      of.erase(of.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (std::size_t j = 0; j < parts.size(); ++j)
      if (j != k) parts[j]->r = std::move(active[j]);
    *index = of[k];
    wait_one(rs, &requests[*index], status);
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", comm_of_request(request), [&](RankState& rs) {
    check_out(request, "request");
    check_out(flag, "flag");
    Req* q = find_req(rs, *request);
    *flag = 1;
    if (is_null(q)) return set_status(status, empty_status());
    if (!progress(rs, *q, false)) {
      *flag = 0;
      return;
    }
    wait_one(rs, request, status);
  });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return call("MPI_Testall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_requests(rs, count, requests);
    check_out(flag, "flag");
    bool all = true;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      // A request complete by now keeps its status until all are: none is released partially.
      if (!is_null(q) && !progress(rs, *q, false)) all = false;
    }
    *flag = all;
    if (!all) return;
    release_all(rs, count, requests, statuses);
  });
}

namespace {
// Completes (if complete by now, or `block`) and releases the request behind *h; false if it is
// still in progress.
bool settle(RankState& rs, MPI_Request* h, MPI_Status* out, bool block) {
  Req* q = find_req(rs, *h);
  if (!progress(rs, *q, block)) return false;
  *out = release(rs, h);
  return true;
}

// MPI_Waitsome and MPI_Testsome: every request complete by now (after a waitany when `wait`).
void some(RankState& rs, int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[],
          bool wait) {
  check_requests(rs, incount, requests);
  check_out(outcount, "outcount");
  if (incount > 0) check_out(indices, "array_of_indices");
  bool any_active = false;
  for (int i = 0; i < incount; ++i) any_active |= !is_null(find_req(rs, requests[i]));
  if (!any_active) {
    *outcount = MPI_UNDEFINED;
    return;
  }
  *outcount = 0;
  std::optional<std::string> error;
  auto take = [&](int i, const MPI_Status& s) {
    indices[*outcount] = i;
    if (statuses != MPI_STATUSES_IGNORE) statuses[*outcount] = s;
    ++*outcount;
    if (s.MPI_ERROR != MPI_SUCCESS && !error) error = fmt::format("request {} failed: {}", i, error_text(s.MPI_ERROR));
  };
  if (wait) {
    int index = MPI_UNDEFINED;
    MPI_Status s{};
    const int rc = MPI_Waitany(incount, requests, &index, &s);
    if (index != MPI_UNDEFINED) take(index, s);
    if (rc != MPI_SUCCESS && !error) error = fmt::format("request {} failed: {}", index, error_text(rc));
  }
  for (int i = 0; i < incount; ++i) {
    if (is_null(find_req(rs, requests[i]))) continue;
    MPI_Status s;
    if (settle(rs, &requests[i], &s, false)) take(i, s);
  }
  if (error) throw MpiError{MPI_ERR_IN_STATUS, *error};
}
}  // namespace

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return call("MPI_Testany", MPI_COMM_WORLD, [&](RankState& rs) {
    check_requests(rs, count, requests);
    check_out(index, "index");
    check_out(flag, "flag");
    *index = MPI_UNDEFINED;
    *flag = 1;
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (is_null(q)) continue;
      any_active = true;
      if (!progress(rs, *q, false)) continue;
      const std::optional<MpiError> err = failure(*q);
      *index = i;
      set_result_status(status, release(rs, &requests[i]));
      if (err) throw *err;
      return;
    }
    *flag = !any_active;
    if (!any_active) set_status(status, empty_status());
  });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return call("MPI_Waitsome", MPI_COMM_WORLD,
              [&](RankState& rs) { some(rs, incount, requests, outcount, indices, statuses, true); });
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return call("MPI_Testsome", MPI_COMM_WORLD,
              [&](RankState& rs) { some(rs, incount, requests, outcount, indices, statuses, false); });
}

int MPI_Request_free(MPI_Request* request) {
  return call("MPI_Request_free", comm_of_request(request), [&](RankState& rs) {
    check_out(request, "request");
    Req* q = find_req(rs, *request);
    if (!q) throw MpiError{MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be freed"};
    // A collective in flight is a task that still writes into the program's buffers and takes part
    // in its peers' algorithm: it must be completed first (MPI-4.0 6.13 for persistent ones).
    if (q->collective && !q->done && !inactive(*q))
      throw MpiError{MPI_ERR_REQUEST, "an active nonblocking or persistent collective request cannot be freed; "
                                      "complete it with MPI_Wait or MPI_Test first"};
    if (q->generalized && !q->generalized->complete) {  // freed (free_fn called) once complete
      q->generalized->freed = true;
      *request = MPI_REQUEST_NULL;
      return;
    }
    auto& slot = rs.reqs[static_cast<std::size_t>(*request - 1)];
    // Under --check a nonblocking receive owns its buffer until a completion call copies the
    // message in (check.hpp own_buffer); freed, it would never be copied.
    if (!q->owned.empty() && q->recv && !q->done)
      throw MpiError{MPI_ERR_REQUEST,
                     fmt::format("the active receive {} is freed: nothing would then tell the program when its "
                                 "buffer holds the message (under --check a nonblocking receive must be completed "
                                 "with MPI_Wait, MPI_Test, ...)",
                                 request_text(rs, *q))};
    if (!all_done(*q) && !inactive(*q))  // legal, but nothing then tells the program when it completes
      rs.freed_active.push_back(fmt::format("the request of {} was freed while active (MPI_Request_free{})",
                                            request_text(rs, *q), site_text(rs.caller)));
    note_released(rs, *request);
    if (q->recv && !q->done && !inactive(*q)) {
      // The runtime writes a message into a contiguous receive buffer when it matches, so the
      // receive goes on without its request and MPI_Finalize completes it. A non-contiguous
      // receive is unpacked from its staging buffer only by a completion call, which a freed
      // request never gets.
      if (!q->staging.empty())
        throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                       "freeing an active receive request of a non-contiguous datatype is not supported: its "
                       "message is unpacked into the buffer by the call that completes the request"};
      rs.freed_receives.push_back(std::move(slot));
    }
    slot.reset();  // an active send completes on its own
    *request = MPI_REQUEST_NULL;
  });
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return call("MPI_Request_get_status", comm_of_request(request), [&](RankState& rs) {
    check_out(flag, "flag");
    Req* q = find_req(rs, request);
    *flag = 1;
    if (is_null(q)) return set_status(status, empty_status());
    if (!progress(rs, *q, false)) {  // complete by now: kept, with its status, for the call that frees it
      *flag = 0;
      return;
    }
    set_result_status(status, q->status);
    if (auto err = failure(*q)) throw *err;
  });
}

// MPI-4.1's forms for several requests: MPI_Testany, _Testall and _Testsome that free nothing, as
// MPI_Request_get_status; a null or inactive request is not active.

int MPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int* index, int* flag,
                               MPI_Status* status) {
  return call("MPI_Request_get_status_any", MPI_COMM_WORLD, [&](RankState& rs) {
    const MPI_Request* requests = array_of_requests;
    check_requests(rs, count, requests);
    check_out(index, "index");
    check_out(flag, "flag");
    *index = MPI_UNDEFINED;
    *flag = 1;
    bool active = false;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (is_null(q)) continue;
      active = true;
      if (!progress(rs, *q, false)) continue;
      *index = i;
      set_result_status(status, q->status);
      if (auto err = failure(*q)) throw *err;
      return;
    }
    if (active)
      *flag = 0;
    else
      set_status(status, empty_status());
  });
}

int MPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int* flag,
                               MPI_Status array_of_statuses[]) {
  return call("MPI_Request_get_status_all", MPI_COMM_WORLD, [&](RankState& rs) {
    const MPI_Request* requests = array_of_requests;
    check_requests(rs, count, requests);
    check_out(flag, "flag");
    *flag = 0;
    for (int i = 0; i < count; ++i)
      if (Req* q = find_req(rs, requests[i]); !is_null(q) && !progress(rs, *q, false)) return;
    *flag = 1;
    int failed = 0;
    for (int i = 0; i < count; ++i) {
      const Req* q = find_req(rs, requests[i]);
      MPI_Status st = is_null(q) ? empty_status() : q->status;
      const auto err = is_null(q) ? std::nullopt : failure(*q);
      st.MPI_ERROR = err ? err->code : MPI_SUCCESS;
      failed += err ? 1 : 0;
      if (array_of_statuses != MPI_STATUSES_IGNORE) array_of_statuses[i] = st;
    }
    if (failed)
      throw MpiError{MPI_ERR_IN_STATUS,
                     fmt::format("{} of the {} requests failed: each status holds its error", failed, count)};
  });
}

int MPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int* outcount,
                                int array_of_indices[], MPI_Status array_of_statuses[]) {
  return call("MPI_Request_get_status_some", MPI_COMM_WORLD, [&](RankState& rs) {
    const MPI_Request* requests = array_of_requests;
    check_requests(rs, incount, requests);
    check_out(outcount, "outcount");
    check_arrays(incount, {{"array_of_indices", array_of_indices}});
    *outcount = MPI_UNDEFINED;
    int done = 0, failed = 0;
    bool active = false;
    for (int i = 0; i < incount; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (is_null(q)) continue;
      active = true;
      if (!progress(rs, *q, false)) continue;
      MPI_Status st = q->status;
      const auto err = failure(*q);
      st.MPI_ERROR = err ? err->code : MPI_SUCCESS;
      failed += err ? 1 : 0;
      if (array_of_statuses != MPI_STATUSES_IGNORE) array_of_statuses[done] = st;
      array_of_indices[done++] = i;
    }
    if (active) *outcount = done;
    if (failed)
      throw MpiError{MPI_ERR_IN_STATUS, fmt::format("{} of the {} complete requests failed: each status holds its "
                                                    "error",
                                                    failed, done)};
  });
}

// MPI-4.1's accessors of a status's public fields: they read or write the caller's memory only.
namespace {
template <class Body>
[[gnu::always_inline]] inline int status_call(const char* name, const void* status, const void* out, Body&& body) {
  return call(
      name, MPI_COMM_WORLD,
      [&](RankState&) {
        check_out(status, "status");
        check_out(out, "the result");
        body();
      },
      true, Reach::own);
}
}  // namespace

int MPI_Status_get_source(const MPI_Status* status, int* source) {
  return status_call("MPI_Status_get_source", status, source, [&] { *source = status->MPI_SOURCE; });
}
int MPI_Status_get_tag(const MPI_Status* status, int* tag) {
  return status_call("MPI_Status_get_tag", status, tag, [&] { *tag = status->MPI_TAG; });
}
int MPI_Status_get_error(const MPI_Status* status, int* error) {
  return status_call("MPI_Status_get_error", status, error, [&] { *error = status->MPI_ERROR; });
}
int MPI_Status_set_source(MPI_Status* status, int source) {
  return status_call("MPI_Status_set_source", status, status, [&] { status->MPI_SOURCE = source; });
}
int MPI_Status_set_tag(MPI_Status* status, int tag) {
  return status_call("MPI_Status_set_tag", status, status, [&] { status->MPI_TAG = tag; });
}
int MPI_Status_set_error(MPI_Status* status, int error) {
  return status_call("MPI_Status_set_error", status, status, [&] { status->MPI_ERROR = error; });
}
