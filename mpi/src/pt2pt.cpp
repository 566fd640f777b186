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
#include "request.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Send", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (!q->done) rs.proc->wait(q->r);
  });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Rsend", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (!q->done) rs.proc->wait(q->r);
  });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Ssend", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, true);
    if (!q->done) rs.proc->wait(q->r);
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
    *request = new_req(rs, post_send(rs, comm, buf, count, datatype, dest, tag, false));
  });
}

int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Issend", comm, [&](RankState& rs) {
    *request = new_req(rs, post_send(rs, comm, buf, count, datatype, dest, tag, true));
  });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Irecv", comm, [&](RankState& rs) {
    *request = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, tag));
  });
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv", comm, [&](RankState& rs) {
    MPI_Request r = new_req(rs, post_recv(rs, comm, recvbuf, recvcount, recvtype, source, recvtag));
    MPI_Request s = new_req(rs, post_send(rs, comm, sendbuf, sendcount, sendtype, dest, sendtag, false));
    wait_one(rs, &s, MPI_STATUS_IGNORE);
    wait_one(rs, &r, status);
  });
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv_replace", comm, [&](RankState& rs) {
    // The message is copied when the send is posted, so the receive may then reuse the buffer.
    MPI_Request s = new_req(rs, post_send(rs, comm, buf, count, datatype, dest, sendtag, false));
    MPI_Request r = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, recvtag));
    wait_one(rs, &s, MPI_STATUS_IGNORE);
    wait_one(rs, &r, status);
  });
}

namespace {
MPI_Status probe_status(const Status& st) {
  MPI_Status s{};
  s.MPI_SOURCE = st.source;
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
    if (source == MPI_PROC_NULL) return set_status(status, proc_null_status());
    set_status(status, probe_status(rs.proc->probe(source == MPI_ANY_SOURCE ? any_source : source,
                                                   tag == MPI_ANY_TAG ? any_tag : tag, c.pt2pt)));
  });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return call("MPI_Iprobe", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_peer(c, source, true, "source");
    check_tag(tag, true);
    if (source == MPI_PROC_NULL) {
      *flag = 1;
      return set_status(status, proc_null_status());
    }
    const auto st = rs.proc->iprobe(source == MPI_ANY_SOURCE ? any_source : source, tag == MPI_ANY_TAG ? any_tag : tag,
                                    c.pt2pt);
    *flag = st.has_value();
    if (st) set_status(status, probe_status(*st));
  });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  RankState& rs0 = state("MPI_Wait");
  const Req* q0 = nullptr;
  try {
    q0 = find_req(rs0, *request);
  } catch (const MpiError&) {
  }
  return call("MPI_Wait", q0 ? q0->comm : MPI_COMM_WORLD, [&](RankState& rs) { wait_one(rs, request, status); });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return call("MPI_Waitall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    std::vector<Request> active;
    std::vector<int> which;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (q && !q->done) {
        active.push_back(std::move(q->r));
        which.push_back(i);
      }
    }
    // The runtime completes receives in the order their messages arrived (docs/model.md).
    const auto st = rs.proc->waitall(active);
    for (std::size_t k = 0; k < which.size(); ++k) finish(rs, *find_req(rs, requests[which[k]]), st[k]);
    release_all(rs, count, requests, statuses);
  });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return call("MPI_Waitany", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    *index = MPI_UNDEFINED;
    std::vector<int> which;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (!q || inactive(q)) continue;
      if (q->done) {  // already complete (MPI_PROC_NULL, or completed by a testall)
        *index = i;
        return wait_one(rs, &requests[i], status);
      }
      which.push_back(i);
    }
    if (which.empty()) return set_status(status, empty_status());
    std::vector<Request> active;
    for (int i : which) active.push_back(std::move(find_req(rs, requests[i])->r));
    Status st;
    const std::size_t k = rs.proc->waitany(active, &st);
    for (std::size_t j = 0; j < which.size(); ++j)
      if (j != k) find_req(rs, requests[which[j]])->r = std::move(active[j]);
    *index = which[k];
    finish(rs, *find_req(rs, requests[*index]), st);
    wait_one(rs, &requests[*index], status);
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", MPI_COMM_WORLD, [&](RankState& rs) {
    Req* q = find_req(rs, *request);
    *flag = 1;
    if (!q) return set_status(status, empty_status());
    if (!q->done) {
      Status st;
      if (!rs.proc->test(q->r, &st)) {
        *flag = 0;
        return;
      }
      finish(rs, *q, st);
    }
    wait_one(rs, request, status);
  });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return call("MPI_Testall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    bool all = true;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (!q || q->done) continue;
      Status st;
      if (rs.proc->test(q->r, &st)) finish(rs, *q, st);  // kept until all are complete
      else all = false;
    }
    *flag = all;
    if (!all) return;
    release_all(rs, count, requests, statuses);
  });
}

namespace {
// Completes (if complete by now, or `block`) and frees the request behind *h; returns its status's
// error code (MPI_ERR_TRUNCATE or MPI_SUCCESS). False if it is still in progress.
bool settle(RankState& rs, MPI_Request* h, MPI_Status* out, bool block) {
  Req* q = find_req(rs, *h);
  if (!q->done) {
    Status st;
    if (block) st = rs.proc->wait(q->r);
    else if (!rs.proc->test(q->r, &st)) return false;
    finish(rs, *q, st);
  }
  *out = q->status;
  release(rs, h);
  return true;
}

// MPI_Waitsome and MPI_Testsome: every request complete by now (after a waitany when `wait`).
void some(RankState& rs, int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[],
          bool wait) {
  check_count(incount);
  bool any_active = false;
  for (int i = 0; i < incount; ++i) {
    const Req* q = find_req(rs, requests[i]);
    any_active |= q && !inactive(q);
  }
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
    MPI_Status s;
    const int rc = MPI_Waitany(incount, requests, &index, &s);
    if (index != MPI_UNDEFINED) take(index, s);
    if (rc != MPI_SUCCESS && !error) error = fmt::format("request {} failed: {}", index, error_text(rc));
  }
  for (int i = 0; i < incount; ++i) {
    const Req* q = find_req(rs, requests[i]);
    if (!q || inactive(q)) continue;
    MPI_Status s;
    if (settle(rs, &requests[i], &s, false)) take(i, s);
  }
  if (error) throw MpiError{MPI_ERR_IN_STATUS, *error};
}
}  // namespace

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return call("MPI_Testany", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    *index = MPI_UNDEFINED;
    *flag = 1;
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
      const Req* q = find_req(rs, requests[i]);
      if (!q || inactive(q)) continue;
      any_active = true;
      MPI_Status s;
      if (settle(rs, &requests[i], &s, false)) {
        *index = i;
        set_status(status, s);
        if (s.MPI_ERROR != MPI_SUCCESS) throw MpiError{s.MPI_ERROR, fmt::format("request {} failed", i)};
        return;
      }
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
  return call("MPI_Request_free", MPI_COMM_WORLD, [&](RankState& rs) {
    Req* q = find_req(rs, *request);
    if (!q) throw MpiError{MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be freed"};
    if (q->persistent && !q->done)
      throw MpiError{MPI_ERR_REQUEST, "a persistent request can be freed only when it is not active"};
    if (q->recv && !q->done)
      throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                     "freeing an active receive request is not supported (its buffer's fate would be unknown)"};
    rs.reqs[static_cast<std::size_t>(*request - 1)].reset();  // an active send completes on its own
    *request = MPI_REQUEST_NULL;
  });
}
