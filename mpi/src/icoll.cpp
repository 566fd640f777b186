// Nonblocking (MPI_Ibcast, ...) and persistent (MPI_Bcast_init, ...) collectives (docs/mpi.md,
// "Nonblocking and persistent collectives"). Each runs the body of its blocking form (coll.hpp),
// so the same algorithm with the same messages, in a task of the rank (Proc::spawn): the task
// progresses beside the program on its own virtual clock, and its request completes through
// MPI_Wait, MPI_Test and the rest like any other. Each instance runs on a group of its own (the
// n-th task spawned on the communicator's collective group is the same instance on every rank),
// so concurrent collectives on one communicator never match each other's messages.
// On an intercommunicator the body is the intercommunicator form's (intercomm.hpp), whose
// instance makes the local group's intracommunicator for its local phases from its own group.
#include <optional>
#include <utility>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "icoll.hpp"
#include "intercomm.hpp"
#include "request.hpp"

namespace touchstone::mpi {

namespace {

// What a collective's body reads of its rank's state (the datatypes and operations, through
// committed() and user_op()), copied when the collective starts: the program may free datatypes
// and operations before the collective completes (MPI lets it), and creating new ones may move
// the tables the body would otherwise hold references into.
std::shared_ptr<RankState> snapshot(const RankState& rs) {
  auto s = std::make_shared<RankState>();
  s->proc = rs.proc;
  s->initialized = rs.initialized;
  s->types = rs.types;
  s->ops = rs.ops;
  s->errhandlers = rs.errhandlers;
  return s;
}

// Spawns one instance of `body` on `scope` for the rank of rs; `c` is the communicator the body
// sees, its collective group replaced by the instance's. An error of the body goes to the
// communicator's error handler at once when that handler ends the run, else into `error`, which
// the completing call reports. A deadlock report names the instance as the call that started it
// ("MPI_Ibcast(count=1, MPI_INT, root=0) on MPI_COMM_WORLD at prog.c:12"), worded only then.
Request spawn_instance(RankState& rs, const std::shared_ptr<RankState>& state, const Comm& c, const Group& scope,
                       MPI_Comm comm, const char* name, const std::string& args, const CollectiveBody& body,
                       const std::shared_ptr<MpiError>& error) {
  auto describe = [&rs, comm, name, args, caller = rs.caller] {
    return fmt::format("{}{} on {}{}", name, args.empty() ? "" : "(" + args + ")", comm_text(rs, comm),
                       site_text(caller));
  };
  return rs.proc->spawn(scope, [&rs, state, c, comm, name, body, error](const Group& instance) {
    Comm mine = c;
    mine.coll = instance;
    // Not the intercommunicator's hidden local communicator, which every instance and the blocking
    // calls share: the body makes the local group's own from the instance's group.
    mine.local_comm = MPI_COMM_NULL;
    try {
      body(*state, mine);
    } catch (const MpiError& e) {
      if (mine.errhandler == MPI_ERRORS_ARE_FATAL) raise(rs, comm, name, e);
      *error = e;
    } catch (const UsageError& e) {  // the runtime refused: the message says why
      const MpiError err{MPI_ERR_OTHER, e.what()};
      if (mine.errhandler == MPI_ERRORS_ARE_FATAL) raise(rs, comm, name, err);
      *error = err;
    }
  }, std::move(describe));
}

// The body for communicator c: the intercommunicator form on an intercommunicator, where MPI
// defines one (MPI_Iscan and MPI_Iexscan have none: MPI_ERR_COMM).
const CollectiveBody& body_for(const Comm& c, const char* name, const CollectiveBody& intra,
                               const CollectiveBody& inter) {
  if (!c.inter) return intra;
  if (!inter) throw MpiError{MPI_ERR_COMM, fmt::format("{} is defined on intracommunicators only", name)};
  return inter;
}

// The consistency check of the call (check.hpp), at its entry, before its task sends anything. An
// argument the descriptor cannot be made of (a root out of range) is the body's to report, when the
// request completes: the call is then checked by its name and order alone. Returns the arguments
// as reports print them (empty when not described).
std::string check_entry(RankState& rs, MPI_Comm comm, const Comm& c, const char* name,
                        const CollectiveDescription& describe) {
  std::optional<Collective> d;
  if (!c.inter && describe) try {
      d = describe(rs, c, name);
    } catch (const MpiError&) {
    }
  if (!d) {
    check_collective(rs, comm, name);
    return {};
  }
  std::string args = d->args;
  check_collective(rs, comm, std::move(*d));
  return args;
}

}  // namespace

int start_nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms) {
  return call(name, comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    if (!request) throw MpiError{MPI_ERR_ARG, "the request argument is NULL"};
    const CollectiveBody& body = body_for(c, name, forms.intra, forms.inter);
    auto q = std::make_unique<Req>();
    q->collective_args = check_entry(rs, comm, c, name, forms.describe);
    q->comm = comm;
    q->collective = true;
    q->collective_error = std::make_shared<MpiError>(MpiError{MPI_SUCCESS, {}});
    q->r = spawn_instance(rs, snapshot(rs), c, c.coll, comm, name, q->collective_args, body, q->collective_error);
    *request = new_req(rs, std::move(q));
  });
}

// A persistent collective's count arrays may be filled between its init and its starts (they must
// not change once it is started), so the v-forms' inits are checked by name and order alone.
// The instances of a persistent collective run on a group of its own, made now (the init call is
// collective, in the same order on every rank): the n-th MPI_Start of the request is the same
// instance on every rank, whatever other collectives start on the communicator in between.
int init_persistent(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms) {
  return call(name, comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    if (!request) throw MpiError{MPI_ERR_ARG, "the request argument is NULL"};
    CollectiveBody body = body_for(c, name, forms.intra, forms.inter);
    std::string args = check_entry(rs, comm, c, name, forms.count_arrays ? nullptr : forms.describe);
    // Every member of the collective group (both groups of an intercommunicator).
    std::vector<int> all(static_cast<std::size_t>(c.coll.size()));
    for (int i = 0; i < c.coll.size(); ++i) all[static_cast<std::size_t>(i)] = i;
    const Group scope = rs.proc->subgroup(c.coll, all);
    auto q = std::make_unique<Req>();
    q->comm = comm;
    q->collective = true;
    q->persistent = true;
    q->collective_args = args;
    q->done = true;  // inactive until MPI_Start
    q->status = empty_status();
    q->start = [c, scope, comm, name, body = std::move(body), state = snapshot(rs)](RankState& s, Req& req) {
      req.collective_error = std::make_shared<MpiError>(MpiError{MPI_SUCCESS, {}});
      req.r = spawn_instance(s, state, c, scope, comm, name, req.collective_args, body, req.collective_error);
      req.done = false;
    };
    *request = new_req(rs, std::move(q));
  });
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

// ---------------------------------------------------------------- each collective's forms
//
// One function per collective gives its bodies and descriptor; its nonblocking form (MPI_Ixxx)
// starts them at once, its persistent form (MPI_Xxx_init) at every MPI_Start.

namespace {

CollectiveForms barrier_forms() {
  return {[](RankState& rs, Comm& c) { barrier(rs, c); }, [](RankState& rs, Comm& c) { inter_barrier_body(rs, c); },
          {}};
}

CollectiveForms bcast_forms(void* buffer, int count, MPI_Datatype datatype, int root) {
  return {[=](RankState& rs, Comm& c) { bcast(rs, c, buffer, count, datatype, root); },
          [=](RankState& rs, Comm& c) { inter_bcast_body(rs, c, buffer, count, datatype, root); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, root, MPI_OP_NULL);
          }};
}

CollectiveForms gather_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root) {
  return {[=](RankState& rs, Comm& c) { gather(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root); },
          [=](RankState& rs, Comm& c) {
            inter_gather_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted(rs, c, name, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          }};
}

CollectiveForms gatherv_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root) {
  return {[=](RankState& rs, Comm& c) {
            gatherv(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
          },
          [=](RankState& rs, Comm& c) {
            inter_gatherv_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted_v(rs, c, name, true, root, recvcounts, recvtype, sendcount, sendtype,
                                     sendbuf == MPI_IN_PLACE);
          },
          true};
}

CollectiveForms scatter_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root) {
  return {[=](RankState& rs, Comm& c) {
            scatter(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          },
          [=](RankState& rs, Comm& c) {
            inter_scatter_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted(rs, c, name, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          }};
}

CollectiveForms scatterv_forms(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  return {[=](RankState& rs, Comm& c) {
            scatterv(rs, c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
          },
          [=](RankState& rs, Comm& c) {
            inter_scatterv_body(rs, c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted_v(rs, c, name, false, root, sendcounts, sendtype, recvcount, recvtype,
                                     recvbuf == MPI_IN_PLACE);
          },
          true};
}

CollectiveForms allgather_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype) {
  return {[=](RankState& rs, Comm& c) { allgather(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype); },
          [=](RankState& rs, Comm& c) {
            inter_allgather_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_all(rs, c, name, sendbuf, sendcount, sendtype, recvcount, recvtype, false);
          }};
}

CollectiveForms allgatherv_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  return {[=](RankState& rs, Comm& c) {
            allgatherv(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
          },
          [=](RankState& rs, Comm& c) {
            inter_allgatherv_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_allgatherv(rs, c, name, sendbuf, sendcount, sendtype, recvcounts, recvtype);
          },
          true};
}

CollectiveForms alltoall_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype) {
  return {[=](RankState& rs, Comm& c) { alltoall(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype); },
          [=](RankState& rs, Comm& c) {
            inter_alltoall_body(rs, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_all(rs, c, name, sendbuf, sendcount, sendtype, recvcount, recvtype, true);
          }};
}

CollectiveForms alltoallv_forms(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype) {
  return {[=](RankState& rs, Comm& c) {
            alltoallv(rs, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
          },
          [=](RankState& rs, Comm& c) {
            inter_alltoallv_body(rs, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                 recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_pairwise(rs, c, name, sendbuf, sendcounts, &sendtype, recvcounts, &recvtype, false);
          },
          true};
}

CollectiveForms alltoallw_forms(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const int rdispls[], const MPI_Datatype recvtypes[]) {
  return {[=](RankState& rs, Comm& c) {
            alltoallw(rs, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
          },
          [=](RankState& rs, Comm& c) {
            inter_alltoallw_body(rs, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                 recvtypes);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_pairwise(rs, c, name, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, true);
          },
          true};
}

CollectiveForms reduce_forms(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             int root) {
  return {[=](RankState& rs, Comm& c) {
            reduction(rs, c, Reduction::reduce, sendbuf, recvbuf, count, datatype, op, root);
          },
          [=](RankState& rs, Comm& c) { inter_reduce_body(rs, c, sendbuf, recvbuf, count, datatype, op, root); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, root, op);
          }};
}

CollectiveForms allreduce_forms(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  return {[=](RankState& rs, Comm& c) {
            reduction(rs, c, Reduction::allreduce, sendbuf, recvbuf, count, datatype, op, 0);
          },
          [=](RankState& rs, Comm& c) { inter_allreduce_body(rs, c, sendbuf, recvbuf, count, datatype, op); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, Collective::kNoRoot, op);
          }};
}

CollectiveForms reduce_scatter_forms(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op) {
  return {[=](RankState& rs, Comm& c) { reduce_scatter(rs, c, sendbuf, recvbuf, recvcounts, datatype, op); },
          [=](RankState& rs, Comm& c) { inter_reduce_scatter_body(rs, c, sendbuf, recvbuf, recvcounts, datatype, op); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_reduce_scatter(rs, c, name, recvcounts, datatype, op);
          },
          true};
}

CollectiveForms reduce_scatter_block_forms(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                           MPI_Op op) {
  return {[=](RankState& rs, Comm& c) { reduce_scatter_block(rs, c, sendbuf, recvbuf, recvcount, datatype, op); },
          [=](RankState& rs, Comm& c) {
            inter_reduce_scatter_block_body(rs, c, sendbuf, recvbuf, recvcount, datatype, op);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, recvcount, datatype, Collective::kNoRoot, op);
          }};
}

// MPI defines no intercommunicator form of the scans (MPI_ERR_COMM there).
CollectiveForms scan_forms(Reduction kind, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op) {
  return {[=](RankState& rs, Comm& c) { reduction(rs, c, kind, sendbuf, recvbuf, count, datatype, op, 0); },
          {},
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, Collective::kNoRoot, op);
          }};
}

}  // namespace

// ---------------------------------------------------------------- nonblocking collectives

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ibarrier", comm, request, barrier_forms());
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ibcast", comm, request, bcast_forms(buffer, count, datatype, root));
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Igather", comm, request,
                           gather_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Igatherv", comm, request,
                           gatherv_forms(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root));
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Iscatter", comm, request,
                           scatter_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Iscatterv", comm, request,
                           scatterv_forms(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Iallgather", comm, request,
                           allgather_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Iallgatherv", comm, request,
                           allgatherv_forms(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ialltoall", comm, request,
                           alltoall_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return start_nonblocking(
      "MPI_Ialltoallv", comm, request,
      alltoallv_forms(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype));
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking(
      "MPI_Ialltoallw", comm, request,
      alltoallw_forms(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes));
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ireduce", comm, request, reduce_forms(sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  return start_nonblocking("MPI_Iallreduce", comm, request, allreduce_forms(sendbuf, recvbuf, count, datatype, op));
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ireduce_scatter", comm, request,
                           reduce_scatter_forms(sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  return start_nonblocking("MPI_Ireduce_scatter_block", comm, request,
                           reduce_scatter_block_forms(sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
  return start_nonblocking("MPI_Iscan", comm, request,
                           scan_forms(Reduction::scan, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  return start_nonblocking("MPI_Iexscan", comm, request,
                           scan_forms(Reduction::exscan, sendbuf, recvbuf, count, datatype, op));
}

// ---------------------------------------------------------------- persistent collectives (MPI-4)

int MPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Barrier_init", comm, request, barrier_forms());
}

int MPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info,
                   MPI_Request* request) {
  return init_persistent("MPI_Bcast_init", comm, request, bcast_forms(buffer, count, datatype, root));
}

int MPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Gather_init", comm, request,
                         gather_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Gatherv_init", comm, request,
                         gatherv_forms(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root));
}

int MPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Scatter_init", comm, request,
                         scatter_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info,
                      MPI_Request* request) {
  return init_persistent("MPI_Scatterv_init", comm, request,
                         scatterv_forms(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Allgather_init", comm, request,
                         allgather_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                        MPI_Request* request) {
  return init_persistent("MPI_Allgatherv_init", comm, request,
                         allgatherv_forms(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Alltoall_init", comm, request,
                         alltoall_forms(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent(
      "MPI_Alltoallv_init", comm, request,
      alltoallv_forms(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype));
}

int MPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent(
      "MPI_Alltoallw_init", comm, request,
      alltoallw_forms(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes));
}

int MPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Reduce_init", comm, request, reduce_forms(sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Allreduce_init", comm, request, allreduce_forms(sendbuf, recvbuf, count, datatype, op));
}

int MPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Reduce_scatter_init", comm, request,
                         reduce_scatter_forms(sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Reduce_scatter_block_init", comm, request,
                         reduce_scatter_block_forms(sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Scan_init", comm, request,
                         scan_forms(Reduction::scan, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Info, MPI_Request* request) {
  return init_persistent("MPI_Exscan_init", comm, request,
                         scan_forms(Reduction::exscan, sendbuf, recvbuf, count, datatype, op));
}
