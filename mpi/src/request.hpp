// MPI requests over the runtime's: posting sends and receives (packing non-contiguous types),
// completing them into MPI statuses, and the handle table. Internal.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "state.hpp"

namespace touchstone::mpi {

/// The bytes to send: the user's buffer itself when the type is contiguous, else a packed copy.
std::span<const std::byte> send_bytes(const void* buf, int count, const Type& t, std::vector<std::byte>& scratch);

MPI_Request new_req(RankState& rs, std::unique_ptr<Req> q);  ///< a new handle for q
Req* find_req(RankState& rs, MPI_Request h);  ///< nullptr for MPI_REQUEST_NULL; MpiError if not valid

/// The checks every point-to-point call makes (count, type, peer, tag) and its new request; a
/// request to MPI_PROC_NULL is complete at once.
std::unique_ptr<Req> new_request(RankState& rs, MPI_Comm ch, int count, MPI_Datatype dt, int peer, int tag, bool recv);
/// Posts a receive into the user's buffer (or a staging buffer for non-contiguous types).
std::unique_ptr<Req> post_recv(RankState& rs, MPI_Comm ch, void* buf, int count, MPI_Datatype dt, int src, int tag);
std::unique_ptr<Req> post_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst,
                               int tag, bool synchronous);

/// Turns a completed runtime request into its MPI status (unpacking a staged receive); the
/// status's MPI_ERROR says MPI_ERR_TRUNCATE for a message longer than the buffer.
void finish(RankState& rs, Req& q, const Status& st);
MpiError truncation(const Req& q);
/// Waitall and Testall, once every request is complete: frees them, sets their statuses and
/// raises MPI_ERR_IN_STATUS for the first that failed (a truncated receive).
void release_all(RankState& rs, int count, MPI_Request requests[], MPI_Status statuses[]);
/// Completes the request behind handle *h (blocking), frees it and reports truncation.
void wait_one(RankState& rs, MPI_Request* h, MPI_Status* status);
/// A completed request's end: freed (*h becomes MPI_REQUEST_NULL), or, persistent, made inactive.
void release(RankState& rs, MPI_Request* h);
/// A persistent request that is not started: the completion calls treat it as MPI_REQUEST_NULL.
bool inactive(const Req* q);

}  // namespace touchstone::mpi
