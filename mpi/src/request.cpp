// MPI requests over the runtime's (request.hpp).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "request.hpp"
#include "rma.hpp"
#include "types.hpp"

namespace touchstone::mpi {

// A C buffer's size cannot be known, but a count that cannot be true can: one whose bytes pass the
// end of the address space, or (for buffers of 64 KiB or more, where the system call costs little
// beside the copy) one whose bytes are not all mapped memory. Refused before any byte is copied.
void check_buffer(const void* buf, int count, const Type& t) {
  if (count <= 0 || t.size == 0) return;
  // !buf: MPI_BOTTOM, whose type's displacements are addresses (MPI_Get_address). Data that starts
  // in the first page of the address space is none of the program's memory: a NULL buffer given
  // with a predefined type or relative displacements, which would crash the run where the bytes are
  // read or written. Other absolute data is not checked.
  if (!buf) {
    constexpr MPI_Aint kNullPage = 4096;
    if (t.true_lb >= 0 && t.true_lb < kNullPage)
      throw MpiError{MPI_ERR_BUFFER, fmt::format("the buffer is NULL (MPI_BOTTOM), but the count is {} and the "
                                                 "type's data starts at address {:#x}, which is not memory: with "
                                                 "MPI_BOTTOM, a type's displacements are addresses (MPI_Get_address)",
                                                 count, t.true_lb)};
    return;
  }
  // A type with a negative extent or lower bound walks backwards from buf, which the span below
  // does not describe: such buffers are not checked.
  if (t.extent <= 0 || t.true_lb < 0 || t.true_extent <= 0) return;
  const auto base = reinterpret_cast<std::uintptr_t>(buf);
  constexpr std::uintptr_t kUserSpace = std::uintptr_t{1} << 47;  // x86-64 and AArch64 user space
  // The data spans [buf + true_lb, buf + true_lb + (count - 1) * extent + true_extent); in 64 bits
  // without overflow, since count < 2^31 and each term is checked against the user space first.
  const auto extent = static_cast<std::uintptr_t>(t.extent), lb = static_cast<std::uintptr_t>(t.true_lb);
  const auto last = static_cast<std::uintptr_t>(t.true_extent);
  const std::uintptr_t n = static_cast<std::uintptr_t>(count) - 1;
  const bool past = base >= kUserSpace || lb >= kUserSpace - base || last > kUserSpace - base - lb ||
                    (n && extent > (kUserSpace - base - lb - last) / n);
  if (past)
    throw MpiError{MPI_ERR_COUNT,
                   fmt::format("count {} of {}-byte elements from address {:#x} runs past the end of the address "
                               "space", count, t.extent, base)};
  const std::uintptr_t start = base + lb, bytes = n * extent + last;
  if (bytes < (1 << 16)) return;
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t first = start / page * page;
  const std::uintptr_t end = start + bytes;
  if (::msync(reinterpret_cast<void*>(first), end - first, MS_ASYNC) != 0 && errno == ENOMEM)
    throw MpiError{MPI_ERR_BUFFER, fmt::format("count {} of {}-byte elements is {} bytes from address {:#x}, but "
                                               "not all of them are memory: is the count larger than the buffer?",
                                               count, t.extent, bytes, start)};
}

// The bytes to send: the user's buffer itself when the type is contiguous, else a packed copy.
std::span<const std::byte> send_bytes(const void* buf, int count, const Type& t, std::vector<std::byte>& scratch) {
  check_buffer(buf, count, t);
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  if (t.contiguous() || n == 0) return {static_cast<const std::byte*>(buf), n};
  scratch.resize(n);
  pack(buf, count, t, scratch);
  return scratch;
}

// A new request slot; its handle is index + 1.
MPI_Request new_req(RankState& rs, std::unique_ptr<Req> q) {
  if (!q->made_by.call) q->made_by = CallSite{rs.last_call, rs.caller};
  for (std::size_t i = 0; i < rs.reqs.size(); ++i)
    if (!rs.reqs[i]) {
      if (i < rs.released.size()) rs.released[i] = {};
      rs.reqs[i] = std::move(q);
      return static_cast<MPI_Request>(i + 1);
    }
  rs.reqs.push_back(std::move(q));
  return static_cast<MPI_Request>(rs.reqs.size());
}

MPI_Comm comm_of_request(MPI_Request h) {
  RankState& rs = state("MPI request call");
  try {
    if (const Req* q = find_req(rs, h); q && q->comm != MPI_COMM_NULL) return q->comm;
  } catch (const MpiError&) {
  }
  return MPI_COMM_WORLD;
}

void note_released(RankState& rs, MPI_Request h) {
  const auto i = static_cast<std::size_t>(h - 1);
  if (rs.released.size() <= i) rs.released.resize(i + 1);
  rs.released[i] = {rs.reqs[i] ? rs.reqs[i]->made_by : CallSite{}, CallSite{rs.last_call, rs.caller}};
}

Req* find_req(RankState& rs, MPI_Request h) {
  if (h == MPI_REQUEST_NULL) return nullptr;
  if (h < 0 || h > static_cast<int>(rs.reqs.size()) || !rs.reqs[static_cast<std::size_t>(h - 1)]) {
    // A copy of a handle that a completion call or MPI_Request_free already freed (and set to
    // MPI_REQUEST_NULL in the variable it was given): a request waited twice, or used after free.
    const auto i = static_cast<std::size_t>(h - 1);
    if (h > 0 && i < rs.released.size() && rs.released[i].second.call) {
      const auto& [posted, freed] = rs.released[i];
      const std::string of = posted.call ? fmt::format(" (of {}{})", posted.call, site_text(posted.caller)) : "";
      throw MpiError{MPI_ERR_REQUEST,
                     fmt::format("request {}{} was already completed and freed by {}{}, which set its handle to "
                                 "MPI_REQUEST_NULL; the copy of it used{} is no longer valid",
                                 h, of, freed.call, site_text(freed.caller), site_text(rs.caller))};
    }
    throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is not valid", h)};
  }
  return rs.reqs[static_cast<std::size_t>(h - 1)].get();
}

// The checks every point-to-point call makes (count, type, peer, tag) and its new request; a
// request to MPI_PROC_NULL is complete at once.
std::unique_ptr<Req> new_request(RankState& rs, MPI_Comm ch, int count, MPI_Datatype dt, int peer, int tag, bool recv) {
  const Comm& c = comm_of(rs, ch);
  check_count(count);
  // Nothing is sent to or received from MPI_PROC_NULL, so MPI_DATATYPE_NULL is accepted there (as
  // MPICH and Open MPI accept it).
  if (peer != MPI_PROC_NULL || dt != MPI_DATATYPE_NULL) committed(rs, dt);
  check_peer(c, peer, recv, recv ? "source" : "destination");
  check_tag(tag, recv);
  auto q = std::make_unique<Req>();
  q->recv = recv;
  q->comm = ch;
  q->peer_base = c.remote_base;
  q->peer = peer;
  q->tag = tag;
  if (peer == MPI_PROC_NULL) {
    q->done = true;
    q->status = proc_null_status();
  }
  return q;
}

// Posts a receive into the user's buffer (or a staging buffer for non-contiguous types).
void start_recv(RankState& rs, Req& q, void* buf, int count, MPI_Datatype dt, int src, int tag, const Type* type,
                bool nonblocking) {
  q.user_buf = buf;
  q.count = count;
  q.type = dt;
  q.staging.clear();
  if (src == MPI_PROC_NULL) {
    q.done = true;
    q.status = proc_null_status();
    return;
  }
  const Comm& c = comm_of(rs, q.comm);
  const Type& t = type ? *type : committed(rs, dt);
  q.recv_type = shared_copy(t);
  check_buffer(buf, count, t);
  check_against_rma(rs, buf, count, t, true, "receive buffer");
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  std::span<std::byte> into{static_cast<std::byte*>(buf), n};
  // A nonblocking receive whose buffer ownership is checked (--check) lands in a copy too: its
  // buffer must stay as the post left it until the completion copies the message in.
  const bool owned = nonblocking && n && t.contiguous() && settings().owned_receive_buffers;
  if ((!t.contiguous() || owned) && n) {
    q.staging.resize(n);
    into = q.staging;
  }
  if (owned) own_buffer(rs, q, buf, n);
  q.r = rs.proc->irecv_truncating(src == MPI_ANY_SOURCE ? any_source : c.peer_to_group(src),
                                  tag == MPI_ANY_TAG ? any_tag : tag, into, c.pt2pt);
  const CallSite site = q.made_by.call ? q.made_by : CallSite{rs.last_call, rs.caller};
  note_wildcard(rs, rs.proc->last_receive_call(), site.call, site.caller, src, tag, q.comm);
}

std::unique_ptr<Req> post_recv(RankState& rs, MPI_Comm ch, void* buf, int count, MPI_Datatype dt, int src, int tag,
                               bool nonblocking) {
  auto q = new_request(rs, ch, count, dt, src, tag, true);
  start_recv(rs, *q, buf, count, dt, src, tag, nullptr, nonblocking);
  return q;
}

namespace {
// A send's checks, which may refuse it: its buffer is memory, and no pending one-sided operation
// holds the bytes it reads. Then its bytes: the buffer itself, or for a non-contiguous type a copy
// packed into the request's staging (the runtime reads them until the send completes, docs/model.md
// 1.5, so they must live as long as the request). Nothing is posted or recorded: a refused send
// sends nothing.
std::span<const std::byte> checked_send_bytes(RankState& rs, Req& q, const void* buf, int count, const Type& t) {
  const auto data = send_bytes(buf, count, t, q.staging);
  check_against_rma(rs, buf, count, t, false, "send buffer");
  return data;
}

// Posts a send whose arguments and bytes are checked (checked_send_bytes).
void post_checked_send(RankState& rs, Req& q, std::span<const std::byte> data, int count, MPI_Datatype dt,
                       const Type& t, int dst, int tag, SendMode mode) {
  const Comm& c = comm_of(rs, q.comm);
  const int to = c.peer_to_group(dst);
  record_send(rs, c, to, tag, count, dt, t);
  q.r = mode == SendMode::synchronous ? rs.proc->issend(to, tag, data, c.pt2pt) : rs.proc->isend(to, tag, data, c.pt2pt);
}
}  // namespace

void start_send(RankState& rs, Req& q, const void* buf, int count, MPI_Datatype dt, int dst, int tag, SendMode mode,
                const Type* type) {
  q.staging.clear();
  if (dst == MPI_PROC_NULL) {
    q.done = true;
    q.status = proc_null_status();
    return;
  }
  if (mode == SendMode::buffered) {  // complete once copied: the attached buffer holds the message
    buffered_send(rs, q.comm, buf, count, dt, dst, tag, type);
    q.done = true;
    q.status = empty_status();
    return;
  }
  const Type& t = type ? *type : committed(rs, dt);
  post_checked_send(rs, q, checked_send_bytes(rs, q, buf, count, t), count, dt, t, dst, tag, mode);
}

std::unique_ptr<Req> post_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst,
                               int tag, bool synchronous) {
  auto q = new_request(rs, ch, count, dt, dst, tag, false);
  start_send(rs, *q, buf, count, dt, dst, tag, synchronous ? SendMode::synchronous : SendMode::standard);
  return q;
}

std::unique_ptr<Req> post_sendrecv(RankState& rs, MPI_Comm ch, const void* sendbuf, int sendcount,
                                   MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, int recvcount,
                                   MPI_Datatype recvtype, int source, int recvtag) {
  auto q = new_request(rs, ch, recvcount, recvtype, source, recvtag, true);
  auto send = new_request(rs, ch, sendcount, sendtype, dest, sendtag, false);
  send->made_by = q->made_by = CallSite{rs.last_call, rs.caller};
  // The receive is posted first, as MPI_Sendrecv posts it, but the send is checked before it: a
  // send refused once the receive is posted would leave the receive behind, matching a message of
  // the program's that no request could ever complete.
  const Type* t = dest == MPI_PROC_NULL ? nullptr : &committed(rs, sendtype);
  const auto data = t ? checked_send_bytes(rs, *send, sendbuf, sendcount, *t) : std::span<const std::byte>{};
  start_recv(rs, *q, recvbuf, recvcount, recvtype, source, recvtag, nullptr, true);
  if (t) post_checked_send(rs, *send, data, sendcount, sendtype, *t, dest, sendtag, SendMode::standard);
  else start_send(rs, *send, sendbuf, sendcount, sendtype, dest, sendtag, SendMode::standard);  // done at once
  q->paired_send = std::move(send);
  return q;
}

namespace {
// The completion's part of buffer ownership (check.hpp own_buffer): the owned buffers compared with
// their checksums, then what a collective wrote into staging copies of its receive buffers copied
// into the program's (its staging memory goes with the collective's task, which holds it too).
void check_and_release_owned(RankState& rs, Req& q) {
  if (q.owned.empty()) return;
  check_owned_buffer(rs, q);
  for (const OwnedRun& run : q.owned)
    if (run.staged) std::memcpy(const_cast<void*>(run.addr), run.staged, run.bytes);
  q.owned.clear();
  q.owned_staging.reset();
}
}  // namespace

// Turns a completed runtime request into its MPI status (unpacking a staged receive); the status's
// MPI_ERROR says MPI_ERR_TRUNCATE for a message longer than the buffer.
void finish(RankState& rs, Req& q, const Status& st) {
  q.done = true;
  q.status = MPI_Status{};
  if (!q.recv) {
    q.status = empty_status();
    if (q.collective_error && q.collective_error->code != MPI_SUCCESS) q.status.MPI_ERROR = q.collective_error->code;
    check_and_release_owned(rs, q);
    if (q.buffer_error) q.status.MPI_ERROR = q.buffer_error->code;
    return;
  }
  const Type& t = q.recv_type ? *q.recv_type : type_of(rs, q.type);
  const std::size_t cap = static_cast<std::size_t>(q.count) * t.size;
  const std::size_t got = std::min(st.size, cap);
  check_and_release_owned(rs, q);  // before the staged message is copied in
  if (!q.staging.empty()) unpack(std::span(q.staging).first(got), q.user_buf, q.count, t);
  q.status.MPI_SOURCE = st.source - q.peer_base;
  q.status.MPI_TAG = st.tag;
  q.status.touchstone_bytes = got;
  // A matched message (MPI_Mprobe) is staged whole, so the runtime never truncates it: its size
  // against the buffer given to MPI_Mrecv says.
  q.status.MPI_ERROR = st.truncated || st.size > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  q.message_size = st.size;
  if (const Comm* c = find_comm(rs, q.comm)) {
    if (!q.made_by.call) q.made_by = CallSite{rs.last_call, rs.caller};
    check_receive(rs, *c, q, st.source, st.tag, st.size);
    if (q.signature_error) q.status.MPI_ERROR = q.signature_error->code;
  }
  if (q.buffer_error) q.status.MPI_ERROR = q.buffer_error->code;
}

MpiError truncation(const Req& q) {
  return MpiError{MPI_ERR_TRUNCATE,
                  fmt::format("a message of {} bytes from rank {} (tag {}) is longer than the receive buffer of {} bytes",
                              q.message_size, q.status.MPI_SOURCE, q.status.MPI_TAG, q.status.touchstone_bytes)};
}

namespace {
// One operation: a runtime request, a generalized or a one-sided one.
bool progress_one(RankState& rs, Req& q, bool block) {
  if (q.done) return true;
  if (q.generalized) {
    Generalized& g = *q.generalized;
    // A rank has one thread: while it blocks here, nothing could call MPI_Grequest_complete.
    if (!g.complete && block)
      throw MpiError{MPI_ERR_REQUEST, "waiting for a generalized request that is not complete would wait forever: "
                                      "the rank's one thread must call MPI_Grequest_complete first"};
    if (!g.complete) return false;
    q.status = empty_status();
    g.query_error = g.query ? g.query(g.extra_state, &q.status) : MPI_SUCCESS;
    q.status.MPI_ERROR = g.query_error;
    q.done = true;
    return true;
  }
  if (q.completes) {
    MPI_Status status = empty_status();
    if (!q.completes(block, status)) return false;
    q.status = status;
    q.done = true;
    return true;
  }
  Status st;
  if (block) {
    const Waiting waiting(rs, &q);
    st = rs.proc->wait(q.r);
  }
  else if (!rs.proc->test(q.r, &st)) return false;
  finish(rs, q, st);
  return true;
}
}  // namespace

bool progress(RankState& rs, Req& q, bool block) {
  if (!q.paired_send) return progress_one(rs, q, block);
  // MPI_Isendrecv: the send first, as MPI_Sendrecv waits for it; a test that finds it incomplete
  // tests no more.
  Req& send = *q.paired_send;
  if (!progress_one(rs, send, block) || !progress_one(rs, q, block)) return false;
  // The status is the receive's; a send that failed (its buffer written while pending) says so in it.
  if (q.status.MPI_ERROR == MPI_SUCCESS) q.status.MPI_ERROR = send.status.MPI_ERROR;
  return true;
}

std::optional<MpiError> failure(const Req& q) {
  if (q.generalized && q.generalized->query_error != MPI_SUCCESS)
    return MpiError{q.generalized->query_error, "the generalized request's query function returned an error"};
  if (q.collective_error && q.collective_error->code != MPI_SUCCESS) return *q.collective_error;
  if (q.signature_error) return *q.signature_error;
  if (q.buffer_error) return *q.buffer_error;
  if (q.status.MPI_ERROR == MPI_ERR_TRUNCATE) return truncation(q);
  if (q.paired_send) return failure(*q.paired_send);
  return std::nullopt;
}

MPI_Status release(RankState& rs, MPI_Request* h) {
  Req& q = *find_req(rs, *h);
  const MPI_Status s = q.status;
  if (q.persistent) {
    q.started = false;
    q.status = empty_status();
  } else {
    note_released(rs, *h);
    rs.reqs[static_cast<std::size_t>(*h - 1)].reset();
    *h = MPI_REQUEST_NULL;
  }
  return s;
}

// Waitall and Testall, once every request is complete: frees them, sets their statuses and
// raises MPI_ERR_IN_STATUS for the first that failed (a truncated receive).
void release_all(RankState& rs, int count, MPI_Request requests[], MPI_Status statuses[]) {
  std::optional<MpiError> first;
  for (int i = 0; i < count; ++i) {
    Req* q = find_req(rs, requests[i]);
    if (!is_null(q) && !first) first = failure(*q);
    const MPI_Status s = is_null(q) ? empty_status() : release(rs, &requests[i]);
    if (statuses != MPI_STATUSES_IGNORE) statuses[i] = s;
  }
  if (first) throw MpiError{MPI_ERR_IN_STATUS, first->what};
}

// Completes the request behind handle *h (blocking), frees it (or makes a persistent one
// inactive) and reports truncation.
void wait_one(RankState& rs, MPI_Request* h, MPI_Status* status) {
  Req* q = find_req(rs, *h);
  if (is_null(q)) return set_status(status, empty_status());
  progress(rs, *q, true);
  const std::optional<MpiError> err = failure(*q);
  set_result_status(status, release(rs, h));
  if (err) throw *err;
}

}  // namespace touchstone::mpi
