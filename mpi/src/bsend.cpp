// Buffered mode (docs/mpi.md, "Buffered mode"): MPI_Buffer_attach/detach, MPI-4.1's buffers of a
// communicator (MPI_Comm_attach_buffer, ...), MPI_Bsend, MPI_Ibsend. A buffered message is copied
// out of the user's buffer (the copy is the sender's CPU work, Proc::local_copy) and then sent like
// a standard message; it holds its size plus MPI_BSEND_OVERHEAD bytes of the capacity of the buffer
// it was sent through (the communicator's, else the process's) until its send completes.
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "request.hpp"
#include "rma.hpp"
#include "types.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace touchstone::mpi {

namespace {

// Frees the capacity of every buffered message sent before the `mark`th whose send has completed:
// by this rank's clock (each one still in transit is polled with a test, and costs its probe_cost,
// as a real library's progress poll would), or at all when `block` (waiting for them). True when
// none of them is left. Polled only when a new message does not fit or a flush asks, so that a rank
// with room to spare pays nothing; MPI_Buffer_detach, MPI_Finalize and MPI_Buffer_flush block.
bool settle(RankState& rs, AttachedBuffer& b, std::uint64_t mark, bool block) {
  if (block) {
    std::vector<Request> sends;
    for (auto& p : b.pending)
      if (p.seq < mark) sends.push_back(std::move(p.r));
    rs.proc->waitall(sends);
  }
  bool left = false;
  for (auto it = b.pending.begin(); it != b.pending.end();) {
    if (it->seq < mark && (block || rs.proc->test(it->r))) {
      b.used -= it->charge;
      it = b.pending.erase(it);
    } else {
      left = left || it->seq < mark;
      ++it;
    }
  }
  return !left;
}

constexpr std::uint64_t kEvery = UINT64_MAX;  ///< a mark past every buffered message

}  // namespace

void buffered_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst, int tag,
                   const Type* type) {
  const Comm& c = comm_of(rs, ch);
  const Type& t = type ? *type : committed(rs, dt);
  check_buffer(buf, count, t);
  check_against_rma(rs, buf, count, t, false, "send buffer");
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  const std::size_t charge = n + MPI_BSEND_OVERHEAD;
  // The communicator's own buffer, else its session's, else the process's (MPI-4.1 3.6).
  AttachedBuffer* through = c.buffer.get();
  const auto session = static_cast<std::size_t>(c.session) - 1;
  if (!through && c.session != MPI_SESSION_NULL && session < rs.mpi_sessions.size() && rs.mpi_sessions[session])
    through = rs.mpi_sessions[session]->buffer.get();
  if (!through) through = rs.attached.get();
  if (!through)
    throw MpiError{MPI_ERR_BUFFER, fmt::format("a buffered send of {} bytes with no buffer attached "
                                               "(MPI_Buffer_attach, MPI_Comm_attach_buffer)",
                                               n)};
  AttachedBuffer& b = *through;
  if (!b.automatic && b.size - b.used < charge) settle(rs, b, kEvery, false);
  if (!b.automatic && b.size - b.used < charge)
    throw MpiError{MPI_ERR_BUFFER,
                   fmt::format("a buffered send of {} bytes needs {} bytes of the attached buffer (with "
                               "MPI_BSEND_OVERHEAD = {}), but only {} of its {} are free",
                               n, charge, MPI_BSEND_OVERHEAD, b.size - b.used, b.size)};
  AttachedBuffer::Pending& p = b.pending.emplace_back();
  p.charge = charge;
  p.seq = rs.bsends++;
  b.used += charge;
  p.data.resize(n);
  if (n && !rs.proc->phantom_payloads()) {
    if (t.contiguous()) std::memcpy(p.data.data(), buf, n);
    else pack(buf, count, t, p.data);
  }
  rs.proc->local_copy(n, t.contiguous() ? 1 : static_cast<std::size_t>(count) * t.blocks.size());
  record_send(rs, c, c.peer_to_group(dst), tag, count, dt, t);
  p.r = rs.proc->isend(c.peer_to_group(dst), tag, p.data, c.pt2pt);
}

void finalize_pt2pt(RankState& rs) {
  // A freed receive's message went into its buffer when it matched; its CPU time is charged here,
  // where the rank waits for it (a message that never comes is a deadlock, reported as such).
  if (!rs.freed_receives.empty()) rs.proc->annotate("MPI_Finalize, waiting for receives freed by MPI_Request_free");
  for (auto& q : rs.freed_receives)
    if (!q->done) rs.proc->wait(q->r);
  rs.freed_receives.clear();
  if (rs.attached) settle(rs, *rs.attached, kEvery, true);
  rs.attached.reset();
  for (auto& c : rs.comms)
    if (c && c->buffer) settle(rs, *c->buffer, kEvery, true);
  for (auto& session : rs.mpi_sessions)
    if (session && session->buffer) settle(rs, *session->buffer, kEvery, true);
  rs.messages.clear();
}

std::shared_ptr<AttachedBuffer> new_buffer(void* buffer, int size, bool attached) {
  if (attached) throw MpiError{MPI_ERR_BUFFER, "a buffer is already attached (detach it first)"};
  auto b = std::make_shared<AttachedBuffer>();
  b->addr = buffer;
  b->automatic = buffer == MPI_BUFFER_AUTOMATIC;
  if (b->automatic) return b;
  if (size < 0) throw MpiError{MPI_ERR_ARG, fmt::format("buffer size {} is negative", size)};
  if (!buffer && size > 0) throw MpiError{MPI_ERR_BUFFER, "the buffer is NULL"};
  b->size = static_cast<std::size_t>(size);
  return b;
}

// NULL and 0 when none is attached (as MPICH does); MPI_BUFFER_AUTOMATIC and 0 for an automatic one.
void detach_buffer(RankState& rs, std::shared_ptr<AttachedBuffer>& held, void* buffer_addr, int* size) {
  check_out(buffer_addr, "buffer_addr");  // checked before the buffer is detached: a refused call does nothing
  check_out(size, "size");
  void* addr = nullptr;
  std::size_t n = 0;
  if (held) {
    settle(rs, *held, kEvery, true);
    addr = held->addr;
    n = held->size;
    held.reset();
  }
  std::memcpy(buffer_addr, &addr, sizeof addr);
  *size = static_cast<int>(n);
}

void flush_buffer(RankState& rs, AttachedBuffer& b) { settle(rs, b, rs.bsends, true); }

void settle_buffer(RankState& rs, AttachedBuffer& b) { settle(rs, b, kEvery, true); }

// Completed through the hook one-sided requests use (request.cpp progress): the completion calls
// test or wait for the messages buffered through `held` before this call, not for later ones; a
// detach in between has sent them all.
MPI_Request iflush_request(RankState& rs, std::shared_ptr<AttachedBuffer> held) {
  auto q = std::make_unique<Req>();
  RankState* at = &rs;
  const std::uint64_t mark = rs.bsends;
  q->completes = [at, mark, held = std::move(held)](bool block, MPI_Status&) {
    return !held || settle(*at, *held, mark, block);
  };
  return new_req(rs, std::move(q));
}

}  // namespace touchstone::mpi

int MPI_Buffer_attach(void* buffer, int size) {
  return call("MPI_Buffer_attach", MPI_COMM_WORLD, [&](RankState& rs) {
    rs.attached = new_buffer(buffer, size, rs.attached != nullptr);
    made(rs, 'b', 0);
  });
}

int MPI_Buffer_detach(void* buffer_addr, int* size) {
  return call("MPI_Buffer_detach", MPI_COMM_WORLD,
              [&](RankState& rs) { detach_buffer(rs, rs.attached, buffer_addr, size); });
}

// MPI-4.1 3.6.1: the messages buffered before the call are sent on, and their room is free again,
// the buffer staying attached. With no buffer attached there is nothing to wait for.
int MPI_Buffer_flush(void) {
  return call("MPI_Buffer_flush", MPI_COMM_WORLD, [&](RankState& rs) {
    if (rs.attached) flush_buffer(rs, *rs.attached);
  });
}

int MPI_Buffer_iflush(MPI_Request* request) {
  return call("MPI_Buffer_iflush", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(request, "request");
    *request = iflush_request(rs, rs.attached);
  });
}

int MPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  return call("MPI_Comm_attach_buffer", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    c.buffer = new_buffer(buffer, size, c.buffer != nullptr);
  });
}

int MPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  return call("MPI_Comm_detach_buffer", comm,
              [&](RankState& rs) { detach_buffer(rs, comm_of(rs, comm).buffer, buffer_addr, size); });
}

int MPI_Comm_flush_buffer(MPI_Comm comm) {
  return call("MPI_Comm_flush_buffer", comm, [&](RankState& rs) {
    if (const auto& b = comm_of(rs, comm).buffer) flush_buffer(rs, *b);
  });
}

// The communicator may be freed before the request completes: the request holds its buffer.
int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Comm_iflush_buffer", comm, [&](RankState& rs) {
    check_out(request, "request");
    *request = iflush_request(rs, comm_of(rs, comm).buffer);
  });
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Bsend", comm, [&](RankState& rs) {
    auto q = new_request(rs, comm, count, datatype, dest, tag, false);
    start_send(rs, *q, buf, count, datatype, dest, tag, SendMode::buffered);
  });
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return call("MPI_Ibsend", comm, [&](RankState& rs) {
    check_out(request, "request");
    auto q = new_request(rs, comm, count, datatype, dest, tag, false);
    start_send(rs, *q, buf, count, datatype, dest, tag, SendMode::buffered);
    *request = new_req(rs, std::move(q));
  });
}
