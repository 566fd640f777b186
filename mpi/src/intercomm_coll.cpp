// Collectives on intercommunicators (intercomm.hpp; MPI-3.1 section 5.2.2): the data goes from
// one group to the other. Rooted calls name the root with MPI_ROOT (the root), MPI_PROC_NULL (the
// rest of its group) or its rank in the remote group (the other group's members). Data between
// the groups travels in direct messages on the intercommunicator's collective context; the local
// phases (a group's reduction, a broadcast of what its leader received) are the intracommunicator
// collectives' bodies (coll.hpp) run on the local group alone (local_group). Each collective is a
// body on the Comm it is given, so that a nonblocking instance (icoll.cpp) runs it on its own
// collective group like any other.
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "algorithms/generic.hpp"
#include "call.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "intercomm.hpp"
#include "types.hpp"

namespace touchstone::mpi {

InterRole inter_role(const Comm& c, int root) {
  if (root == MPI_ROOT) return InterRole::root;
  if (root == MPI_PROC_NULL) return InterRole::idle;
  if (root < 0 || root >= c.remote_size)
    throw MpiError{
        MPI_ERR_ROOT,
        fmt::format("root {} is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of {}", root, c.remote_size)};
  return InterRole::member;
}

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

// The blocks of a v-collective's buffer, one per rank of the other group; `names`: the user's
// names of the two arrays.
std::vector<Piece> vblocks(RankState& rs, const Comm& c, const void* buf, const int counts[], const int displs[],
                           MPI_Datatype type, std::pair<const char*, const char*> names) {
  check_arrays(c.remote_size, {{names.first, counts}, {names.second, displs}});
  std::vector<Piece> out;
  for (int i = 0; i < c.remote_size; ++i) out.push_back(vblock(rs, buf, counts, displs, type, i));
  return out;
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


void no_in_place(const void* buf) {
  if (buf == MPI_IN_PLACE) throw MpiError{MPI_ERR_ARG, "MPI_IN_PLACE is not allowed on an intercommunicator"};
}

// The local group of c as an intracommunicator, for a local phase. The blocking call runs it on
// the communicator's hidden one (Comm::local_comm). A nonblocking instance's copy of the
// communicator has none (icoll.cpp): every member of the group makes, from the instance's own
// collective group, the subgroup of the group's members, the only one it makes there, so the
// same group everywhere and one no other instance shares.
Comm local_group(RankState& rs, const Comm& c) {
  if (c.local_comm != MPI_COMM_NULL) return comm_of(rs, c.local_comm);
  std::vector<int> mine(static_cast<std::size_t>(c.size));
  std::iota(mine.begin(), mine.end(), c.local_base);
  Comm local;
  local.pt2pt = local.coll = rs.proc->subgroup(c.coll, mine);
  local.rank = c.rank;
  local.size = c.size;
  local.errhandler = MPI_ERRORS_RETURN;
  return local;
}

// Runs body(rank state, intercommunicator) as the MPI function `name`, first checking the call
// that describe(rank state, intercommunicator) makes of its arguments against its peers' (check.hpp).
template <class Describe, class Body>
int inter_call(const char* name, MPI_Comm comm, Describe&& describe, Body&& body) {
  return call(name, comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_collective(rs, comm, describe(rs, c));
    body(rs, c);
  });
}

// A group's reduction of `count` elements to its leader, in a buffer of the type's layout.
std::vector<std::byte> reduce_to_leader(RankState& rs, Comm& local, const void* sendbuf, int count, MPI_Datatype dt,
                                        MPI_Op op) {
  no_in_place(sendbuf);
  check_count(count);
  std::vector<std::byte> tmp(local.rank == 0 ? static_cast<std::size_t>(count) * extent(rs, dt) : 0);
  reduction(rs, local, Reduction::reduce, sendbuf, tmp.data(), count, dt, op, 0);
  return tmp;
}

}  // namespace

// Every member of a group enters, the leaders swap an empty message, then every member leaves.
void inter_barrier_body(RankState& rs, Comm& c) {
  Comm local = local_group(rs, c);
  barrier(rs, local);
  if (c.rank == 0) transfer(rs, c, {{0, nullptr, 0, MPI_BYTE}}, {{0, nullptr, 0, MPI_BYTE}});
  barrier(rs, local);
}

void inter_bcast_body(RankState& rs, Comm& c, void* buffer, int count, MPI_Datatype datatype, int root) {
  switch (inter_role(c, root)) {
    case InterRole::root: transfer(rs, c, {{0, buffer, count, datatype}}, {}); break;
    case InterRole::idle: break;
    case InterRole::member: {
      if (c.rank == 0) transfer(rs, c, {}, {{root, buffer, count, datatype}});
      Comm local = local_group(rs, c);
      bcast(rs, local, buffer, count, datatype, 0);
      break;
    }
  }
}

void inter_gather_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root) {
  const InterRole role = inter_role(c, root);
  if (role == InterRole::member) transfer(rs, c, {{root, sendbuf, sendcount, sendtype}}, {});
  if (role != InterRole::root) return;
  std::vector<Piece> recvs;
  for (int i = 0; i < c.remote_size; ++i) recvs.push_back(block(rs, recvbuf, recvcount, recvtype, i));
  transfer(rs, c, {}, recvs);
}

void inter_gatherv_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root) {
  const InterRole role = inter_role(c, root);
  if (role == InterRole::member) transfer(rs, c, {{root, sendbuf, sendcount, sendtype}}, {});
  if (role != InterRole::root) return;
  transfer(rs, c, {}, vblocks(rs, c, recvbuf, recvcounts, displs, recvtype, {"recvcounts", "displs"}));
}

void inter_scatter_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const InterRole role = inter_role(c, root);
  if (role == InterRole::member) transfer(rs, c, {}, {{root, recvbuf, recvcount, recvtype}});
  if (role != InterRole::root) return;
  std::vector<Piece> sends;
  for (int i = 0; i < c.remote_size; ++i) sends.push_back(block(rs, sendbuf, sendcount, sendtype, i));
  transfer(rs, c, sends, {});
}

void inter_scatterv_body(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int displs[],
                         MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const InterRole role = inter_role(c, root);
  if (role == InterRole::member) transfer(rs, c, {}, {{root, recvbuf, recvcount, recvtype}});
  if (role != InterRole::root) return;
  transfer(rs, c, vblocks(rs, c, sendbuf, sendcounts, displs, sendtype, {"sendcounts", "displs"}), {});
}

// Each process sends its block to every process of the other group and receives theirs, in rank
// order, into recvbuf.
void inter_allgather_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                          void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  no_in_place(sendbuf);
  std::vector<Piece> sends, recvs;
  for (int i = 0; i < c.remote_size; ++i) {
    sends.push_back({i, sendbuf, sendcount, sendtype});
    recvs.push_back(block(rs, recvbuf, recvcount, recvtype, i));
  }
  transfer(rs, c, sends, recvs);
}

void inter_allgatherv_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  no_in_place(sendbuf);
  std::vector<Piece> sends;
  for (int i = 0; i < c.remote_size; ++i) sends.push_back({i, sendbuf, sendcount, sendtype});
  transfer(rs, c, sends, vblocks(rs, c, recvbuf, recvcounts, displs, recvtype, {"recvcounts", "displs"}));
}

// Block j of the send buffer goes to rank j of the other group; block j of the receive buffer
// comes from it.
void inter_alltoall_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  no_in_place(sendbuf);
  std::vector<Piece> sends, recvs;
  for (int i = 0; i < c.remote_size; ++i) {
    sends.push_back(block(rs, sendbuf, sendcount, sendtype, i));
    recvs.push_back(block(rs, recvbuf, recvcount, recvtype, i));
  }
  transfer(rs, c, sends, recvs);
}

void inter_alltoallv_body(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                          MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                          MPI_Datatype recvtype) {
  no_in_place(sendbuf);
  const std::vector<Piece> sends = vblocks(rs, c, sendbuf, sendcounts, sdispls, sendtype, {"sendcounts", "sdispls"});
  const std::vector<Piece> recvs = vblocks(rs, c, recvbuf, recvcounts, rdispls, recvtype, {"recvcounts", "rdispls"});
  transfer(rs, c, sends, recvs);
}

// As MPI_Alltoallv with a datatype per block and displacements in bytes (MPI-3.1 5.8).
void inter_alltoallw_body(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                          const MPI_Datatype recvtypes[]) {
  no_in_place(sendbuf);
  // (The counts and types were checked with the call's description.)
  check_arrays(c.remote_size, {{"sdispls", sdispls}, {"rdispls", rdispls}});
  std::vector<Piece> sends, recvs;
  for (int i = 0; i < c.remote_size; ++i) {
    sends.push_back({i, static_cast<const std::byte*>(sendbuf) + sdispls[i], sendcounts[i], sendtypes[i]});
    recvs.push_back({i, static_cast<std::byte*>(recvbuf) + rdispls[i], recvcounts[i], recvtypes[i]});
  }
  transfer(rs, c, sends, recvs);
}

// The other group reduces to its leader (in rank order), which sends the result to the root.
void inter_reduce_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root) {
  switch (inter_role(c, root)) {
    case InterRole::root: transfer(rs, c, {}, {{0, recvbuf, count, datatype}}); break;
    case InterRole::idle: break;
    case InterRole::member: {
      Comm local = local_group(rs, c);
      const auto tmp = reduce_to_leader(rs, local, sendbuf, count, datatype, op);
      if (c.rank == 0) transfer(rs, c, {{root, tmp.data(), count, datatype}}, {});
      break;
    }
  }
}

// Each group reduces to its leader; the leaders swap their results; each broadcasts the other
// group's result to its own.
void inter_allreduce_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op) {
  Comm local = local_group(rs, c);
  const auto tmp = reduce_to_leader(rs, local, sendbuf, count, datatype, op);
  if (c.rank == 0) transfer(rs, c, {{0, tmp.data(), count, datatype}}, {{0, recvbuf, count, datatype}});
  bcast(rs, local, recvbuf, count, datatype, 0);
}

// Each group reduces its vectors (of the sum of recvcounts elements) to its leader; the leaders
// swap their results; each scatters the other group's result over its own by recvcounts.
void inter_reduce_scatter_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op) {
  std::vector<int> displs(static_cast<std::size_t>(c.size));
  int total = 0;
  for (int i = 0; i < c.size; ++i) {
    check_count(recvcounts[i]);
    displs[static_cast<std::size_t>(i)] = total;
    total += recvcounts[i];
  }
  Comm local = local_group(rs, c);
  const auto tmp = reduce_to_leader(rs, local, sendbuf, total, datatype, op);
  std::vector<std::byte> theirs(tmp.size());
  if (c.rank == 0) transfer(rs, c, {{0, tmp.data(), total, datatype}}, {{0, theirs.data(), total, datatype}});
  scatterv(rs, local, theirs.data(), recvcounts, displs.data(), datatype, recvbuf, recvcounts[c.rank], datatype, 0);
}

void inter_reduce_scatter_block_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int recvcount,
                                     MPI_Datatype datatype, MPI_Op op) {
  const std::vector<int> counts(static_cast<std::size_t>(c.size), recvcount);
  inter_reduce_scatter_body(rs, c, sendbuf, recvbuf, counts.data(), datatype, op);
}

// ---------------------------------------------------------------- the blocking calls

int inter_barrier(MPI_Comm comm) {
  return inter_call(
      "MPI_Barrier", comm, [&](RankState&, const Comm&) { return describe_name("MPI_Barrier"); },
      [&](RankState& rs, Comm& c) { inter_barrier_body(rs, c); });
}

int inter_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return inter_call(
      "MPI_Bcast", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_data(rs, c, "MPI_Bcast", count, datatype, root, MPI_OP_NULL);
      },
      [&](RankState& rs, Comm& c) { inter_bcast_body(rs, c, buffer, count, datatype, root); });
}

int inter_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call(
      "MPI_Gather", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_rooted(rs, c, "MPI_Gather", true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                               root);
      },
      [&](RankState& rs, Comm& c) {
        inter_gather_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
      });
}

int inter_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call(
      "MPI_Gatherv", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_rooted_v(rs, c, "MPI_Gatherv", true, root, recvcounts, recvtype, sendcount, sendtype, false);
      },
      [&](RankState& rs, Comm& c) {
        inter_gatherv_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
      });
}

int inter_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call(
      "MPI_Scatter", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_rooted(rs, c, "MPI_Scatter", false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                               root);
      },
      [&](RankState& rs, Comm& c) {
        inter_scatter_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
      });
}

int inter_scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return inter_call(
      "MPI_Scatterv", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_rooted_v(rs, c, "MPI_Scatterv", false, root, sendcounts, sendtype, recvcount, recvtype, false);
      },
      [&](RankState& rs, Comm& c) {
        inter_scatterv_body(rs, c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
      });
}

int inter_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call(
      "MPI_Allgather", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_all(rs, c, "MPI_Allgather", sendbuf, sendcount, sendtype, recvcount, recvtype, false);
      },
      [&](RankState& rs, Comm& c) {
        inter_allgather_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
      });
}

int inter_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call(
      "MPI_Allgatherv", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_allgatherv(rs, c, "MPI_Allgatherv", sendbuf, sendcount, sendtype, recvcounts, recvtype);
      },
      [&](RankState& rs, Comm& c) {
        inter_allgatherv_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
      });
}

int inter_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call(
      "MPI_Alltoall", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_all(rs, c, "MPI_Alltoall", sendbuf, sendcount, sendtype, recvcount, recvtype, true);
      },
      [&](RankState& rs, Comm& c) {
        inter_alltoall_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
      });
}

int inter_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return inter_call(
      "MPI_Alltoallv", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_pairwise(rs, c, "MPI_Alltoallv", sendbuf, sendcounts, &sendtype, recvcounts, &recvtype, false);
      },
      [&](RankState& rs, Comm& c) {
        inter_alltoallv_body(rs, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
      });
}

int inter_alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm) {
  return inter_call(
      "MPI_Alltoallw", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_pairwise(rs, c, "MPI_Alltoallw", sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, true);
      },
      [&](RankState& rs, Comm& c) {
        inter_alltoallw_body(rs, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
      });
}

int inter_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm) {
  return inter_call(
      "MPI_Reduce", comm,
      [&](RankState& rs, const Comm& c) { return describe_data(rs, c, "MPI_Reduce", count, datatype, root, op); },
      [&](RankState& rs, Comm& c) { inter_reduce_body(rs, c, sendbuf, recvbuf, count, datatype, op, root); });
}

int inter_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return inter_call(
      "MPI_Allreduce", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_data(rs, c, "MPI_Allreduce", count, datatype, Collective::kNoRoot, op);
      },
      [&](RankState& rs, Comm& c) { inter_allreduce_body(rs, c, sendbuf, recvbuf, count, datatype, op); });
}

int inter_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm) {
  return inter_call(
      "MPI_Reduce_scatter", comm,
      [&](RankState& rs, const Comm& c) {
        return describe_reduce_scatter(rs, c, "MPI_Reduce_scatter", recvcounts, datatype, op);
      },
      [&](RankState& rs, Comm& c) { inter_reduce_scatter_body(rs, c, sendbuf, recvbuf, recvcounts, datatype, op); });
}

int inter_refused(const char* name, MPI_Comm comm) {
  return call(name, comm, [&](RankState&) {
    throw MpiError{MPI_ERR_COMM, fmt::format("{} is defined on intracommunicators only", name)};
  });
}

}  // namespace touchstone::mpi
