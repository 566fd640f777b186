// What the collectives (coll.cpp) offer the launcher and the nonblocking and persistent
// collectives (icoll.cpp). Internal.
#pragma once
#include <map>
#include <string>

#include "state.hpp"

namespace touchstone::mpi {

/// Checks a --coll selection: every collective known, every algorithm one of its own.
/// Throws UsageError naming the bad entry.
void check_selection(const std::map<std::string, std::string>& coll);

// The body of each blocking collective on communicator `c`: its checks, its algorithm (the one
// --coll chose) on c.coll, and its results. MPI_X calls it with the communicator's own c; MPI_IX
// and MPI_X_init call it in a task (Proc::spawn) with a copy of c whose `coll` is the instance's.
void barrier(RankState& rs, Comm& c);
void bcast(RankState& rs, Comm& c, void* buffer, int count, MPI_Datatype datatype, int root);
void scatter(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root);
void gather(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root);
void scatterv(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
void gatherv(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root);
void allgather(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype);
void allgatherv(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype);
void alltoall(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype);
void alltoallv(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
               MPI_Datatype recvtype);
void alltoallw(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
               const MPI_Datatype recvtypes[]);
enum class Reduction { reduce, allreduce, scan, exscan };
/// MPI_Reduce (to `root`), MPI_Allreduce, MPI_Scan and MPI_Exscan.
void reduction(RankState& rs, Comm& c, Reduction kind, const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt,
               MPI_Op op, int root);
void reduce_scatter(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, const int recvcounts[],
                    MPI_Datatype datatype, MPI_Op op);
void reduce_scatter_block(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int recvcount,
                          MPI_Datatype datatype, MPI_Op op);

}  // namespace touchstone::mpi
