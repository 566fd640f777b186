// Matched probes (docs/mpi.md): MPI_Mprobe/MPI_Improbe take a message out of matching,
// MPI_Mrecv/MPI_Imrecv receive exactly that message.
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "request.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace {
// A matched message (MPI_Mprobe) is received at once, whole, into a staging buffer of its own: no
// other receive can take it any more, and MPI_Mrecv unpacks it into the buffer it is given. Its
// receive is posted at the probe and completes in the MPI_Mrecv (or the wait of MPI_Imrecv).
void matched_probe(RankState& rs, int source, int tag, MPI_Comm comm, bool block, int* flag, MPI_Message* message,
                   MPI_Status* status) {
  const Comm& c = comm_of(rs, comm);
  check_peer(c, source, true, "source");
  check_tag(tag, true);
  check_out(message, "message");
  if (!block) check_out(flag, "flag");
  *flag = 1;
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    return set_result_status(status, proc_null_status());
  }
  const int src = source == MPI_ANY_SOURCE ? any_source : c.peer_to_group(source), t = tag == MPI_ANY_TAG ? any_tag : tag;
  const std::optional<Status> st = block ? rs.proc->probe(src, t, c.pt2pt) : rs.proc->iprobe(src, t, c.pt2pt);
  note_wildcard(rs, rs.proc->last_receive_call(), rs.last_call, rs.caller, source, tag, comm);
  if (!st) {
    *flag = 0;
    return;
  }
  auto q = std::make_unique<Req>();
  q->recv = true;
  q->comm = comm;
  q->peer_base = c.remote_base;
  q->staging.resize(st->size);
  // The probed message is the earliest-arrived one from its source with its tag, so this receive
  // takes that very message.
  q->r = rs.proc->irecv_truncating(st->source, st->tag, q->staging, c.pt2pt);
  std::size_t i = 0;
  while (i < rs.messages.size() && rs.messages[i]) ++i;
  if (i == rs.messages.size()) rs.messages.emplace_back();
  rs.messages[i] = std::move(q);
  *message = static_cast<MPI_Message>(i + 1);
  MPI_Status s{};
  s.MPI_SOURCE = c.group_to_peer(st->source);
  s.MPI_TAG = st->tag;
  s.touchstone_bytes = st->size;
  set_result_status(status, s);
}

// The receive of matched message *message into (buf, count, datatype), as a request; the handle
// becomes MPI_MESSAGE_NULL. MPI_MESSAGE_NO_PROC gives a request complete at once.
MPI_Request matched_receive(RankState& rs, void* buf, int count, MPI_Datatype datatype, MPI_Message* message) {
  check_out(message, "message");
  check_count(count);
  committed(rs, datatype);
  std::unique_ptr<Req> q;
  if (*message == MPI_MESSAGE_NO_PROC) {
    q = std::make_unique<Req>();
    q->recv = true;
    q->done = true;
    q->status = proc_null_status();
  } else {
    const int i = *message - 1;
    if (i < 0 || i >= static_cast<int>(rs.messages.size()) || !rs.messages[static_cast<std::size_t>(i)])
      throw MpiError{MPI_ERR_REQUEST, fmt::format("message {} is not a matched message of this rank (MPI_Mprobe)",
                                                  *message)};
    q = std::move(rs.messages[static_cast<std::size_t>(i)]);
  }
  q->user_buf = buf;
  q->count = count;
  q->type = datatype;
  *message = MPI_MESSAGE_NULL;
  return new_req(rs, std::move(q));
}

// The communicator whose error handler a call on *message reports to (MPI_COMM_WORLD for a null
// pointer or an unknown handle, which matched_receive refuses).
MPI_Comm comm_of_message(const MPI_Message* message) {
  if (!message) return MPI_COMM_WORLD;
  RankState& rs = state("MPI_Mrecv");
  const int i = *message - 1;
  if (i >= 0 && i < static_cast<int>(rs.messages.size()) && rs.messages[static_cast<std::size_t>(i)])
    return rs.messages[static_cast<std::size_t>(i)]->comm;
  return MPI_COMM_WORLD;
}
}  // namespace

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return call("MPI_Mprobe", comm, [&](RankState& rs) {
    int flag = 0;
    matched_probe(rs, source, tag, comm, true, &flag, message, status);
  });
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return call("MPI_Improbe", comm,
              [&](RankState& rs) { matched_probe(rs, source, tag, comm, false, flag, message, status); });
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  return call("MPI_Mrecv", comm_of_message(message), [&](RankState& rs) {
    MPI_Request h = matched_receive(rs, buf, count, datatype, message);
    wait_one(rs, &h, status);
  });
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return call("MPI_Imrecv", comm_of_message(message), [&](RankState& rs) {
    check_out(request, "request");
    *request = matched_receive(rs, buf, count, datatype, message);
  });
}
