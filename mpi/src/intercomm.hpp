// Collectives on intercommunicators (intercomm_coll.cpp; MPI-3.1 section 5.2.2): coll.cpp hands a
// call to these when its communicator is an intercommunicator. Each has its MPI function's
// signature. Internal.
#pragma once
#include "mpi.h"
#include "state.hpp"

namespace touchstone::mpi {

/// True when c is a valid intercommunicator of the calling rank (false outside a run).
bool is_intercomm(MPI_Comm c);

int inter_barrier(MPI_Comm comm);
int inter_bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int inter_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm);
int inter_gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int inter_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm);
int inter_scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int inter_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm);
int inter_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int inter_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm);
int inter_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int inter_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm);
int inter_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int inter_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm);
int inter_alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm);
/// MPI_Scan and MPI_Exscan, which MPI defines on intracommunicators only: MPI_ERR_COMM.
int inter_refused(const char* name, MPI_Comm comm);

// The bodies of the above (as coll.hpp's for intracommunicators): each runs on the intercommunicator
// `c` as given, its data between the groups on c.coll. The local phases run on the communicator's
// hidden local intracommunicator when c.local_comm names one, else (a nonblocking instance's copy
// of the communicator, icoll.cpp) on the local part of c.coll, made by the body.
void inter_barrier_body(RankState& rs, Comm& c);
void inter_bcast_body(RankState& rs, Comm& c, void* buffer, int count, MPI_Datatype datatype, int root);
void inter_gather_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root);
void inter_gatherv_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root);
void inter_scatter_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
void inter_scatterv_body(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int displs[],
                         MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
void inter_allgather_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                          void* recvbuf, int recvcount, MPI_Datatype recvtype);
void inter_allgatherv_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype);
void inter_alltoall_body(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype);
void inter_alltoallv_body(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                          MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                          MPI_Datatype recvtype);
void inter_alltoallw_body(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                          const MPI_Datatype recvtypes[]);
void inter_reduce_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root);
void inter_allreduce_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op);
void inter_reduce_scatter_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op);
void inter_reduce_scatter_block_body(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int recvcount,
                                     MPI_Datatype datatype, MPI_Op op);

/// The part a rank takes in an intercommunicator collective with `root` (MPI-3.1 5.2.2): the root
/// (MPI_ROOT), the rest of the root's group (MPI_PROC_NULL) or a member of the other group (the
/// root's rank in that group); MPI_ERR_ROOT for any other value.
enum class InterRole { root, idle, member };
InterRole inter_role(const Comm& c, int root);

}  // namespace touchstone::mpi
