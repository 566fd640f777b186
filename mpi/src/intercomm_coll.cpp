// Collectives on intercommunicators (intercomm.hpp; MPI-3.1 section 5.2.2): the data goes from
// one group to the other. Rooted calls name the root with MPI_ROOT (the root), MPI_PROC_NULL (the
// rest of its group) or its rank in the remote group (the other group's members). Data between
// the groups travels in direct messages on the intercommunicator's collective context; the local
// phases (a group's reduction, a broadcast of what its leader received) are the intracommunicator
// collectives run on the group's own hidden communicator (Comm::local_comm).
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "algorithms/generic.hpp"
#include "call.hpp"
#include "intercomm.hpp"
#include "types.hpp"

namespace touchstone::mpi {

namespace {

// The tag of data between the groups on the collective context (the leaders' exchanges of
// intercomm.cpp use kGenericTag + 1).
constexpr int kInterTag = algorithms::kGenericTag + 2;

// One block to send to, or receive from, rank `remote` of the remote group: `count` elements of
// `type` at `buf`.
struct Piece {
  int remote;
  const void* buf;
  int count;
  MPI_Datatype type;
};

const std::byte* at(const void* buf, std::size_t offset) { return static_cast<const std::byte*>(buf) + offset; }

std::size_t extent(RankState& rs, MPI_Datatype t) { return committed(rs, t).extent; }

// Block i of a buffer of equal blocks of `count` elements.
Piece block(RankState& rs, const void* buf, int count, MPI_Datatype type, int i) {
  check_count(count);
  return {i, at(buf, static_cast<std::size_t>(i) * static_cast<std::size_t>(count) * extent(rs, type)), count, type};
}

// Block i of a v-collective's buffer: counts[i] elements at displs[i] extents.
Piece vblock(RankState& rs, const void* buf, const int counts[], const int displs[], MPI_Datatype type, int i) {
  check_count(counts[i]);
  if (displs[i] < 0) throw MpiError{MPI_ERR_ARG, fmt::format("displacement {} (entry {}) is negative", displs[i], i)};
  return {i, at(buf, static_cast<std::size_t>(displs[i]) * extent(rs, type)), counts[i], type};
}

// Posts every send and receive between this process and the remote group, then completes them
// all: packed sends, receives unpacked into place. A message longer than its block is
// MPI_ERR_TRUNCATE.
void transfer(RankState& rs, const Comm& c, const std::vector<Piece>& sends, const std::vector<Piece>& recvs) {
  Proc& p = *rs.proc;
  std::vector<std::vector<std::byte>> out(sends.size()), in(recvs.size());
  std::vector<Request> reqs;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const Piece& s = sends[i];
    check_count(s.count);
    const Type& t = committed(rs, s.type);
    out[i].resize(static_cast<std::size_t>(s.count) * t.size);
    pack(s.buf, s.count, t, out[i]);
    reqs.push_back(p.isend(c.peer_to_group(s.remote), kInterTag, out[i], c.coll));
  }
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    const Piece& r = recvs[i];
    check_count(r.count);
    in[i].resize(static_cast<std::size_t>(r.count) * committed(rs, r.type).size);
    reqs.push_back(p.irecv_truncating(c.peer_to_group(r.remote), kInterTag, in[i], c.coll));
  }
  const std::vector<Status> st = p.waitall(reqs);
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    const Status& s = st[sends.size() + i];
    if (s.truncated)
      throw MpiError{MPI_ERR_TRUNCATE, fmt::format("remote rank {} sent {} bytes for a block of {}", recvs[i].remote,
                                                   s.size, in[i].size())};
    unpack(in[i], const_cast<void*>(recvs[i].buf), recvs[i].count, committed(rs, recvs[i].type));
  }
}

enum class Role { root, idle, member };  // the root; the rest of its group; the other group

Role role_of(const Comm& c, int root) {
  if (root == MPI_ROOT) return Role::root;
  if (root == MPI_PROC_NULL) return Role::idle;
  if (root < 0 || root >= c.remote_size)
    throw MpiError{
        MPI_ERR_ROOT,
        fmt::format("root {} is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of {}", root, c.remote_size)};
  return Role::member;
}

void no_in_place(const void* buf) {
  if (buf == MPI_IN_PLACE) throw MpiError{MPI_ERR_ARG, "MPI_IN_PLACE is not allowed on an intercommunicator"};
}

// A local phase's MPI call on the hidden local communicator: its error is the caller's.
void local(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw MpiError{rc, fmt::format("the local group's {} failed", what)};
}

// Runs body(rank state, intercommunicator) as the MPI function `name`.
template <class Body>
int inter_call(const char* name, MPI_Comm comm, Body&& body) {
  return call(name, comm, [&](RankState& rs) { body(rs, comm_of(rs, comm)); });
}

// A group's reduction of `count` elements to its leader, in a buffer of the type's layout.
std::vector<std::byte> reduce_to_leader(RankState& rs, const Comm& c, const void* sendbuf, int count, MPI_Datatype dt,
                                        MPI_Op op) {
  no_in_place(sendbuf);
  check_count(count);
  std::vector<std::byte> tmp(c.rank == 0 ? static_cast<std::size_t>(count) * extent(rs, dt) : 0);
  local(MPI_Reduce(sendbuf, tmp.data(), count, dt, op, 0, c.local_comm), "MPI_Reduce");
  return tmp;
}

}  // namespace

// Every member of a group enters, the leaders swap an empty message, then every member leaves.
int inter_barrier(MPI_Comm comm) {
  return inter_call("MPI_Barrier", comm, [&](RankState& rs, Comm& c) {
    local(MPI_Barrier(c.local_comm), "MPI_Barrier");
    if (c.rank == 0) transfer(rs, c, {{0, nullptr, 0, MPI_BYTE}}, {{0, nullptr, 0, MPI_BYTE}});
    local(MPI_Barrier(c.local_comm), "MPI_Barrier");
  });
}

int inter_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return inter_call("MPI_Bcast", comm, [&](RankState& rs, Comm& c) {
    switch (role_of(c, root)) {
      case Role::root: transfer(rs, c, {{0, buffer, count, datatype}}, {}); break;
      case Role::idle: break;
      case Role::member:
        if (c.rank == 0) transfer(rs, c, {}, {{root, buffer, count, datatype}});
        local(MPI_Bcast(buffer, count, datatype, 0, c.local_comm), "MPI_Bcast");
        break;
    }
  });
}

int inter_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call("MPI_Gather", comm, [&](RankState& rs, Comm& c) {
    const Role role = role_of(c, root);
    if (role == Role::member) transfer(rs, c, {{root, sendbuf, sendcount, sendtype}}, {});
    if (role != Role::root) return;
    std::vector<Piece> recvs;
    for (int i = 0; i < c.remote_size; ++i) recvs.push_back(block(rs, recvbuf, recvcount, recvtype, i));
    transfer(rs, c, {}, recvs);
  });
}

int inter_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call("MPI_Gatherv", comm, [&](RankState& rs, Comm& c) {
    const Role role = role_of(c, root);
    if (role == Role::member) transfer(rs, c, {{root, sendbuf, sendcount, sendtype}}, {});
    if (role != Role::root) return;
    std::vector<Piece> recvs;
    for (int i = 0; i < c.remote_size; ++i) recvs.push_back(vblock(rs, recvbuf, recvcounts, displs, recvtype, i));
    transfer(rs, c, {}, recvs);
  });
}

int inter_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call("MPI_Scatter", comm, [&](RankState& rs, Comm& c) {
    const Role role = role_of(c, root);
    if (role == Role::member) transfer(rs, c, {}, {{root, recvbuf, recvcount, recvtype}});
    if (role != Role::root) return;
    std::vector<Piece> sends;
    for (int i = 0; i < c.remote_size; ++i) sends.push_back(block(rs, sendbuf, sendcount, sendtype, i));
    transfer(rs, c, sends, {});
  });
}

int inter_scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call("MPI_Scatterv", comm, [&](RankState& rs, Comm& c) {
    const Role role = role_of(c, root);
    if (role == Role::member) transfer(rs, c, {}, {{root, recvbuf, recvcount, recvtype}});
    if (role != Role::root) return;
    std::vector<Piece> sends;
    for (int i = 0; i < c.remote_size; ++i) sends.push_back(vblock(rs, sendbuf, sendcounts, displs, sendtype, i));
    transfer(rs, c, sends, {});
  });
}

// Each process sends its block to every process of the other group and receives theirs, in rank
// order, into recvbuf.
int inter_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call("MPI_Allgather", comm, [&](RankState& rs, Comm& c) {
    no_in_place(sendbuf);
    std::vector<Piece> sends, recvs;
    for (int i = 0; i < c.remote_size; ++i) {
      sends.push_back({i, sendbuf, sendcount, sendtype});
      recvs.push_back(block(rs, recvbuf, recvcount, recvtype, i));
    }
    transfer(rs, c, sends, recvs);
  });
}

int inter_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call("MPI_Allgatherv", comm, [&](RankState& rs, Comm& c) {
    no_in_place(sendbuf);
    std::vector<Piece> sends, recvs;
    for (int i = 0; i < c.remote_size; ++i) {
      sends.push_back({i, sendbuf, sendcount, sendtype});
      recvs.push_back(vblock(rs, recvbuf, recvcounts, displs, recvtype, i));
    }
    transfer(rs, c, sends, recvs);
  });
}

// Block j of the send buffer goes to rank j of the other group; block j of the receive buffer
// comes from it.
int inter_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call("MPI_Alltoall", comm, [&](RankState& rs, Comm& c) {
    no_in_place(sendbuf);
    std::vector<Piece> sends, recvs;
    for (int i = 0; i < c.remote_size; ++i) {
      sends.push_back(block(rs, sendbuf, sendcount, sendtype, i));
      recvs.push_back(block(rs, recvbuf, recvcount, recvtype, i));
    }
    transfer(rs, c, sends, recvs);
  });
}

int inter_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call("MPI_Alltoallv", comm, [&](RankState& rs, Comm& c) {
    no_in_place(sendbuf);
    std::vector<Piece> sends, recvs;
    for (int i = 0; i < c.remote_size; ++i) {
      sends.push_back(vblock(rs, sendbuf, sendcounts, sdispls, sendtype, i));
      recvs.push_back(vblock(rs, recvbuf, recvcounts, rdispls, recvtype, i));
    }
    transfer(rs, c, sends, recvs);
  });
}

// The other group reduces to its leader (in rank order), which sends the result to the root.
int inter_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm) {
  return inter_call("MPI_Reduce", comm, [&](RankState& rs, Comm& c) {
    switch (role_of(c, root)) {
      case Role::root: transfer(rs, c, {}, {{0, recvbuf, count, datatype}}); break;
      case Role::idle: break;
      case Role::member: {
        const auto tmp = reduce_to_leader(rs, c, sendbuf, count, datatype, op);
        if (c.rank == 0) transfer(rs, c, {{root, tmp.data(), count, datatype}}, {});
        break;
      }
    }
  });
}

// Each group reduces to its leader; the leaders swap their results; each broadcasts the other
// group's result to its own.
int inter_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return inter_call("MPI_Allreduce", comm, [&](RankState& rs, Comm& c) {
    const auto tmp = reduce_to_leader(rs, c, sendbuf, count, datatype, op);
    if (c.rank == 0) transfer(rs, c, {{0, tmp.data(), count, datatype}}, {{0, recvbuf, count, datatype}});
    local(MPI_Bcast(recvbuf, count, datatype, 0, c.local_comm), "MPI_Bcast");
  });
}

// Each group reduces its vectors (of the sum of recvcounts elements) to its leader; the leaders
// swap their results; each scatters the other group's result over its own by recvcounts.
int inter_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm) {
  return inter_call("MPI_Reduce_scatter", comm, [&](RankState& rs, Comm& c) {
    std::vector<int> displs(static_cast<std::size_t>(c.size));
    int total = 0;
    for (int i = 0; i < c.size; ++i) {
      check_count(recvcounts[i]);
      displs[static_cast<std::size_t>(i)] = total;
      total += recvcounts[i];
    }
    const auto tmp = reduce_to_leader(rs, c, sendbuf, total, datatype, op);
    std::vector<std::byte> theirs(tmp.size());
    if (c.rank == 0) transfer(rs, c, {{0, tmp.data(), total, datatype}}, {{0, theirs.data(), total, datatype}});
    local(MPI_Scatterv(theirs.data(), recvcounts, displs.data(), datatype, recvbuf, recvcounts[c.rank], datatype, 0,
                       c.local_comm),
          "MPI_Scatterv");
  });
}

int inter_refused(const char* name, MPI_Comm comm) {
  return call(name, comm, [&](RankState&) {
    throw MpiError{MPI_ERR_COMM, fmt::format("{} is defined on intracommunicators only", name)};
  });
}

}  // namespace touchstone::mpi
