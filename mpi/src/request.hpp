// MPI requests over the runtime's: posting sends and receives (packing non-contiguous types),
// completing them into MPI statuses, and the handle table. Internal.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "state.hpp"

namespace touchstone::mpi {

/// Refuses, before any byte of it is copied, a buffer of count elements of t that cannot all be
/// memory: MPI_ERR_COUNT past the end of the address space, MPI_ERR_BUFFER not all mapped (64 KiB or more).
void check_buffer(const void* buf, int count, const Type& t);
/// The bytes to send: the user's buffer itself when the type is contiguous, else a packed copy.
std::span<const std::byte> send_bytes(const void* buf, int count, const Type& t, std::vector<std::byte>& scratch);

MPI_Request new_req(RankState& rs, std::unique_ptr<Req> q);  ///< a new handle for q
/// Remembers that the call in progress frees handle h, for find_req's report of a later use.
void note_released(RankState& rs, MPI_Request h);
Req* find_req(RankState& rs, MPI_Request h);  ///< nullptr for MPI_REQUEST_NULL; MpiError if not valid
/// The communicator whose error handler hears of an error on request h: the request's own, or the
/// world's when the handle is not valid (or names no communicator).
MPI_Comm comm_of_request(MPI_Request h);
/// The same for a call given the handle's address, which may be null (the call then refuses it).
inline MPI_Comm comm_of_request(const MPI_Request* h) { return comm_of_request(h ? *h : MPI_REQUEST_NULL); }

/// The checks every point-to-point call makes (count, type, peer, tag) and its new request; a
/// request to MPI_PROC_NULL is complete at once.
std::unique_ptr<Req> new_request(RankState& rs, MPI_Comm ch, int count, MPI_Datatype dt, int peer, int tag, bool recv);
/// Posts a receive into the user's buffer (or a staging buffer for non-contiguous types).
/// `nonblocking`: under --check the receive owns its buffer until it completes (check.hpp own_buffer).
std::unique_ptr<Req> post_recv(RankState& rs, MPI_Comm ch, void* buf, int count, MPI_Datatype dt, int src, int tag,
                               bool nonblocking = false);
std::unique_ptr<Req> post_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst,
                               int tag, bool synchronous);
/// MPI_Isendrecv's request: the receive, posted first, with the standard send paired to it
/// (Req::paired_send). Both halves' arguments and the send buffer are checked before either is posted.
std::unique_ptr<Req> post_sendrecv(RankState& rs, MPI_Comm ch, const void* sendbuf, int sendcount,
                                   MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, int recvcount,
                                   MPI_Datatype recvtype, int source, int recvtag);

/// The send modes. A ready send is a standard one (the runtime needs no posted receive); a
/// buffered one copies the message into the attached buffer (bsend.cpp).
enum class SendMode { standard, synchronous, ready, buffered };
/// Posts the operation into an existing request (checked by new_request): what post_send and
/// post_recv do, and what MPI_Start does again for a persistent request.
/// `type`, when given, is used instead of dt's current definition: a persistent request keeps the
/// type it was made with, since the program may free the handle before MPI_Start (MPI-3.1 4.1.9).
void start_send(RankState& rs, Req& q, const void* buf, int count, MPI_Datatype dt, int dst, int tag, SendMode mode,
                const Type* type = nullptr);
void start_recv(RankState& rs, Req& q, void* buf, int count, MPI_Datatype dt, int src, int tag,
                const Type* type = nullptr, bool nonblocking = false);
/// A buffered send (MPI_Bsend): the message is copied into the attached buffer and sent from
/// there; MpiError MPI_ERR_BUFFER when it does not fit.
void buffered_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst, int tag,
                   const Type* type = nullptr);
/// What the buffers of the process (MPI_Buffer_*), of a communicator (MPI_Comm_*_buffer) and of a
/// session (MPI_Session_*_buffer) share (bsend.cpp): a new buffer, checked (MPI_ERR_BUFFER when
/// one is `attached` already; MPI_BUFFER_AUTOMATIC finds room for every message); its detach,
/// which waits for its messages and gives its address and size; its flush, which waits for the
/// messages buffered through it so far; that flush as a request, which holds the buffer; and the
/// wait for all of its messages.
std::shared_ptr<AttachedBuffer> new_buffer(void* buffer, int size, bool attached);
void detach_buffer(RankState& rs, std::shared_ptr<AttachedBuffer>& held, void* buffer_addr, int* size);
void flush_buffer(RankState& rs, AttachedBuffer& b);
MPI_Request iflush_request(RankState& rs, std::shared_ptr<AttachedBuffer> held);
void settle_buffer(RankState& rs, AttachedBuffer& b);
/// MPI_Finalize's part: waits for the buffered messages still in transit and lets go of every
/// runtime request the rank holds (none may outlive the run).
void finalize_pt2pt(RankState& rs);

/// Room for the few requests or statuses of one call, inline (a call's vectors of its own would
/// cost an allocation each, per message).
template <class T>
using Few = boost::container::small_vector<T, 8>;
template <class T>
std::span<T> span_of(Few<T>& v) {
  return {v.data(), v.size()};
}

/// While a rank blocks on requests, names them to deadlock reports (RankState::waiting).
class Waiting {
 public:
  // The list is copied into the rank's, whose room stays for the next wait: a wait is made for
  // nearly every message, and a list of its own cost an allocation and a free each time.
  Waiting(RankState& rs, std::span<const Req* const> requests) : rs_(rs) {
    rs.waiting.assign(requests.begin(), requests.end());
  }
  Waiting(RankState& rs, const Req* request) : Waiting(rs, std::span<const Req* const>(&request, 1)) {}
  ~Waiting() { rs_.waiting.clear(); }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;

 private:
  RankState& rs_;
};

/// A persistent request that is not started: the completion calls treat it as MPI_REQUEST_NULL.
inline bool inactive(const Req& q) { return q.persistent && !q.started; }
/// Null or inactive: what Waitany, Testany, Waitsome and Testsome skip.
inline bool is_null(const Req* q) { return !q || inactive(*q); }
/// Complete: the operation, and an MPI_Isendrecv's send too.
inline bool all_done(const Req& q) { return q.done && (!q.paired_send || q.paired_send->done); }
/// Brings the request's operation to completion if it is complete at this rank's clock (test), or
/// blocking when `block`; true when the request is complete (an MPI_Isendrecv's two halves).
bool progress(RankState& rs, Req& q, bool block);
/// A complete request's status, handed out once: frees the request (*h becomes MPI_REQUEST_NULL),
/// or makes a persistent one inactive.
MPI_Status release(RankState& rs, MPI_Request* h);
/// The error of a complete request (a truncated receive, a collective's error), if it failed.
std::optional<MpiError> failure(const Req& q);

/// Turns a completed runtime request into its MPI status (unpacking a staged receive); the
/// status's MPI_ERROR says MPI_ERR_TRUNCATE for a message longer than the buffer.
void finish(RankState& rs, Req& q, const Status& st);
MpiError truncation(const Req& q);
/// Waitall and Testall, once every request is complete: releases them, sets their statuses and
/// raises MPI_ERR_IN_STATUS for the first that failed (a truncated receive).
void release_all(RankState& rs, int count, MPI_Request requests[], MPI_Status statuses[]);
/// Completes the request behind handle *h (blocking), releases it and reports truncation.
void wait_one(RankState& rs, MPI_Request* h, MPI_Status* status);

}  // namespace touchstone::mpi
