// MPI neighborhood collectives (MPI-3.1 7.6; docs/mpi.md, "Process topologies"): every rank sends
// one block to each destination and receives one from each source of its topology (topology.hpp),
// as real messages on the communicator's collective context, so they never match user messages.
// A MPI_PROC_NULL neighbour gets nothing and leaves its receive block untouched.
#include <cstdint>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "icoll.hpp"
#include "request.hpp"
#include "topology.hpp"
#include "types.hpp"

namespace touchstone::mpi {

namespace {

// The tag of neighborhood messages on a collective context (distinct from the generic
// algorithms' kGenericTag so that the two never meet, whatever the order of calls).
constexpr int kNeighborTag = 0x4e42;

// One block: `count` elements of `type` at `buf`, to or from `peer`.
struct Block {
  int peer;
  const std::byte* buf;
  int count;
  const Type* type;
};

const std::byte* at(const void* base, std::int64_t offset) { return static_cast<const std::byte*>(base) + offset; }

// The blocks of the buffer at `buf`, checked: a NULL buffer (MPI_BOTTOM) with data for a neighbour
// that is not MPI_PROC_NULL is MPI_ERR_BUFFER unless the type's displacements are addresses
// (check_buffer), before anything is posted, as in point-to-point calls.
std::vector<Block> checked_blocks(std::vector<Block> blocks, const void* buf) {
  if (!buf)
    for (const Block& b : blocks)
      if (b.peer != MPI_PROC_NULL) check_buffer(buf, b.count, *b.type);
  return blocks;
}

// Posts every receive (in source order), then every send (in destination order), and completes
// them all. Between two ranks, blocks of one tag match in order (the k-th block one rank sends
// another lands in the k-th receive slot from it); on a Cartesian grid each direction has its own
// tag, so the block sent to the +1 neighbour lands in that neighbour's -1 slot even when both its
// neighbours are one rank (a periodic dimension of one or two processes), as MPICH does.
void exchange(RankState& rs, const Comm& c, bool cartesian, const std::vector<Block>& sends,
              const std::vector<Block>& recvs) {
  auto tag = [&](std::size_t slot) { return kNeighborTag + (cartesian ? static_cast<int>(slot) : 0); };
  Proc& p = *rs.proc;
  std::vector<Request> reqs;
  std::vector<std::vector<std::byte>> staging(recvs.size()), packed(sends.size());
  std::vector<std::size_t> posted;  // receive index of each receive request
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    const Block& b = recvs[i];
    if (b.peer == MPI_PROC_NULL) continue;
    const std::size_t n = static_cast<std::size_t>(b.count) * b.type->size;
    std::span<std::byte> into{const_cast<std::byte*>(b.buf), n};
    if (!b.type->contiguous() && n > 0) {
      staging[i].resize(n);
      into = staging[i];
    }
    reqs.push_back(p.irecv_truncating(b.peer, tag(i ^ 1), into, c.coll));
    posted.push_back(i);
  }
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const Block& b = sends[i];
    if (b.peer == MPI_PROC_NULL) continue;
    reqs.push_back(p.isend(b.peer, tag(i), send_bytes(b.buf, b.count, *b.type, packed[i]), c.coll));
  }
  const std::vector<Status> st = p.waitall(reqs);
  std::optional<MpiError> error;
  for (std::size_t k = 0; k < posted.size(); ++k) {
    const Block& b = recvs[posted[k]];
    if (!staging[posted[k]].empty())
      unpack(std::span<const std::byte>(staging[posted[k]]).first(std::min(st[k].size, staging[posted[k]].size())),
             const_cast<std::byte*>(b.buf), b.count, *b.type);
    if (st[k].truncated && !error)
      error =
          MpiError{MPI_ERR_TRUNCATE, fmt::format("a block of {} bytes from rank {} is longer than the receive block of "
                                                 "{} bytes (message truncated)",
                                                 st[k].size, b.peer, static_cast<std::size_t>(b.count) * b.type->size)};
  }
  if (error) throw *error;
}

const Type& checked(RankState& rs, int count, MPI_Datatype t) {
  check_count(count);
  return committed(rs, t);
}

void no_in_place(const void* sendbuf) {
  if (sendbuf == MPI_IN_PLACE)
    throw MpiError{MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in a neighborhood collective"};
}

// Blocks of a regular layout: block i of `count` elements of t at i * count * extent.
std::vector<Block> regular(const std::vector<int>& peers, const void* buf, int count, const Type& t) {
  std::vector<Block> out;
  for (std::size_t i = 0; i < peers.size(); ++i)
    out.push_back(
        {peers[i], at(buf, static_cast<std::int64_t>(i) * count * static_cast<std::int64_t>(t.extent)), count, &t});
  return checked_blocks(std::move(out), buf);
}

// Blocks of a v-layout: block i of counts[i] elements of t at displs[i] * extent. `names`: the
// user's names of the two arrays.
std::vector<Block> varying(RankState& rs, const std::vector<int>& peers, const void* buf, const int counts[],
                           const int displs[], MPI_Datatype type, std::pair<const char*, const char*> names) {
  check_arrays(static_cast<int>(peers.size()), {{names.first, counts}, {names.second, displs}});
  std::vector<Block> out;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const Type& t = checked(rs, counts[i], type);
    out.push_back(
        {peers[i], at(buf, static_cast<std::int64_t>(displs[i]) * static_cast<std::int64_t>(t.extent)), counts[i], &t});
  }
  return checked_blocks(std::move(out), buf);
}

// The one block of count elements of type at buf, to every peer (the allgather forms).
std::vector<Block> same_block(RankState& rs, const std::vector<int>& peers, const void* buf, int count,
                              MPI_Datatype type) {
  const Type& t = checked(rs, count, type);
  std::vector<Block> out;
  for (int d : peers) out.push_back({d, at(buf, 0), count, &t});
  return checked_blocks(std::move(out), buf);
}

// The bodies, shared by MPI_Neighbor_X, MPI_Ineighbor_X (a task) and MPI_Neighbor_X_init.
void allgather_body(RankState& rs, const Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const Neighbors nb = neighbors_of(c);
  no_in_place(sendbuf);
  const std::vector<Block> sends = same_block(rs, nb.destinations, sendbuf, sendcount, sendtype);
  exchange(rs, c, nb.cartesian, sends, regular(nb.sources, recvbuf, recvcount, checked(rs, recvcount, recvtype)));
}

void allgatherv_body(RankState& rs, const Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  const Neighbors nb = neighbors_of(c);
  no_in_place(sendbuf);
  const std::vector<Block> sends = same_block(rs, nb.destinations, sendbuf, sendcount, sendtype);
  exchange(rs, c, nb.cartesian, sends,
           varying(rs, nb.sources, recvbuf, recvcounts, displs, recvtype, {"recvcounts", "displs"}));
}

void alltoall_body(RankState& rs, const Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  const Neighbors nb = neighbors_of(c);
  no_in_place(sendbuf);
  exchange(rs, c, nb.cartesian, regular(nb.destinations, sendbuf, sendcount, checked(rs, sendcount, sendtype)),
           regular(nb.sources, recvbuf, recvcount, checked(rs, recvcount, recvtype)));
}

void alltoallv_body(RankState& rs, const Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype) {
  const Neighbors nb = neighbors_of(c);
  no_in_place(sendbuf);
  exchange(rs, c, nb.cartesian,
           varying(rs, nb.destinations, sendbuf, sendcounts, sdispls, sendtype, {"sendcounts", "sdispls"}),
           varying(rs, nb.sources, recvbuf, recvcounts, rdispls, recvtype, {"recvcounts", "rdispls"}));
}

void alltoallw_body(RankState& rs, const Comm& c, const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                    const MPI_Datatype recvtypes[]) {
  const Neighbors nb = neighbors_of(c);
  no_in_place(sendbuf);
  // Displacements in bytes, each block its own datatype.
  auto blocks = [&](bool send, const std::vector<int>& peers, const void* buf, const int counts[],
                    const MPI_Aint displs[], const MPI_Datatype types[]) {
    check_arrays(static_cast<int>(peers.size()), {{send ? "sendcounts" : "recvcounts", counts},
                                                  {send ? "sdispls" : "rdispls", displs},
                                                  {send ? "sendtypes" : "recvtypes", types}});
    std::vector<Block> out;
    for (std::size_t i = 0; i < peers.size(); ++i)
      out.push_back({peers[i], at(buf, displs[i]), counts[i], &checked(rs, counts[i], types[i])});
    return checked_blocks(std::move(out), buf);
  };
  exchange(rs, c, nb.cartesian, blocks(true, nb.destinations, sendbuf, sendcounts, sdispls, sendtypes),
           blocks(false, nb.sources, recvbuf, recvcounts, rdispls, recvtypes));
}

}  // namespace

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_allgather", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_neighbor(rs, comm_of(rs, comm), "MPI_Neighbor_allgather", sendcount, nullptr, &sendtype,
                                       recvcount, nullptr, &recvtype, false));
    allgather_body(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ineighbor_allgather", comm, request,
                           {[=](RankState& rs, Comm& c) {
                              allgather_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
                            },
                            {},
                            [=](RankState& rs, const Comm& c, const char* name) {
                              return describe_neighbor(rs, c, name, sendcount, nullptr, &sendtype, recvcount, nullptr,
                                                       &recvtype, false);
                            }});
}

int MPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Neighbor_allgather_init", comm, request,
                         {[=](RankState& rs, Comm& c) {
                            allgather_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
                          },
                          {},
                          [=](RankState& rs, const Comm& c, const char* name) {
                            return describe_neighbor(rs, c, name, sendcount, nullptr, &sendtype, recvcount, nullptr,
                                                     &recvtype, false);
                          }});
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_allgatherv", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_neighbor(rs, comm_of(rs, comm), "MPI_Neighbor_allgatherv", sendcount, nullptr, &sendtype,
                                       0, recvcounts, &recvtype, false, Varying::recvs));
    allgatherv_body(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return start_nonblocking("MPI_Ineighbor_allgatherv", comm, request,
                           {[=](RankState& rs, Comm& c) {
                              allgatherv_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                              recvtype);
                            },
                            {},
                            [=](RankState& rs, const Comm& c, const char* name) {
                              return describe_neighbor(rs, c, name, sendcount, nullptr, &sendtype, 0, recvcounts,
                                                       &recvtype, false, Varying::recvs);
                            },
                            true});
}

int MPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Neighbor_allgatherv_init", comm, request,
                         {[=](RankState& rs, Comm& c) {
                            allgatherv_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
                          },
                          {},
                          [=](RankState& rs, const Comm& c, const char* name) {
                            return describe_neighbor(rs, c, name, sendcount, nullptr, &sendtype, 0, recvcounts,
                                                     &recvtype, false, Varying::recvs);
                          },
                          true});
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_alltoall", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_neighbor(rs, comm_of(rs, comm), "MPI_Neighbor_alltoall", sendcount, nullptr, &sendtype,
                                       recvcount, nullptr, &recvtype, false));
    alltoall_body(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ineighbor_alltoall", comm, request,
                           {[=](RankState& rs, Comm& c) {
                              alltoall_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
                            },
                            {},
                            [=](RankState& rs, const Comm& c, const char* name) {
                              return describe_neighbor(rs, c, name, sendcount, nullptr, &sendtype, recvcount, nullptr,
                                                       &recvtype, false);
                            }});
}

int MPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Neighbor_alltoall_init", comm, request,
                         {[=](RankState& rs, Comm& c) {
                            alltoall_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
                          },
                          {},
                          [=](RankState& rs, const Comm& c, const char* name) {
                            return describe_neighbor(rs, c, name, sendcount, nullptr, &sendtype, recvcount, nullptr,
                                                     &recvtype, false);
                          }});
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
  return call("MPI_Neighbor_alltoallv", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_neighbor(rs, comm_of(rs, comm), "MPI_Neighbor_alltoallv", 0, sendcounts, &sendtype, 0,
                                       recvcounts, &recvtype, false, Varying::both));
    alltoallv_body(rs, comm_of(rs, comm), sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                   recvtype);
  });
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ineighbor_alltoallv", comm, request,
                           {[=](RankState& rs, Comm& c) {
                              alltoallv_body(rs, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                             rdispls, recvtype);
                            },
                            {},
                            [=](RankState& rs, const Comm& c, const char* name) {
                              return describe_neighbor(rs, c, name, 0, sendcounts, &sendtype, 0, recvcounts, &recvtype,
                                                       false, Varying::both);
                            },
                            true});
}

int MPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Neighbor_alltoallv_init", comm, request,
                         {[=](RankState& rs, Comm& c) {
                            alltoallv_body(rs, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                           recvtype);
                          },
                          {},
                          [=](RankState& rs, const Comm& c, const char* name) {
                            return describe_neighbor(rs, c, name, 0, sendcounts, &sendtype, 0, recvcounts, &recvtype,
                                                     false, Varying::both);
                          },
                          true});
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return call("MPI_Neighbor_alltoallw", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_neighbor(rs, comm_of(rs, comm), "MPI_Neighbor_alltoallw", 0, sendcounts, sendtypes, 0,
                                       recvcounts, recvtypes, true, Varying::both));
    alltoallw_body(rs, comm_of(rs, comm), sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes);
  });
}

int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  return start_nonblocking(
      "MPI_Ineighbor_alltoallw", comm, request,
      {[=](RankState& rs, Comm& c) {
         alltoallw_body(rs, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
       },
       {},
       [=](RankState& rs, const Comm& c, const char* name) {
         return describe_neighbor(rs, c, name, 0, sendcounts, sendtypes, 0, recvcounts, recvtypes, true, Varying::both);
       },
       true});
}

int MPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info,
                                MPI_Request* request) {
  return init_persistent(
      "MPI_Neighbor_alltoallw_init", comm, request,
      {[=](RankState& rs, Comm& c) {
         alltoallw_body(rs, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
       },
       {},
       [=](RankState& rs, const Comm& c, const char* name) {
         return describe_neighbor(rs, c, name, 0, sendcounts, sendtypes, 0, recvcounts, recvtypes, true, Varying::both);
       },
       true});
}
