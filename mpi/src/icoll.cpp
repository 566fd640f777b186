// Nonblocking (MPI_Ibcast, ...) and persistent (MPI_Bcast_init, ...) collectives (docs/mpi.md,
// "Nonblocking and persistent collectives"). Each runs the body of its blocking form (coll.hpp),
// so the same algorithm with the same messages, in a task of the rank (Proc::spawn): the task
// progresses beside the program on its own virtual clock, and its request completes through
// MPI_Wait, MPI_Test and the rest like any other. Each instance runs on a group of its own (the
// n-th task spawned on the communicator's collective group is the same instance on every rank),
// so concurrent collectives on one communicator never match each other's messages.
// On an intercommunicator the body is the intercommunicator form's (intercomm.hpp), whose
// instance makes the local group's intracommunicator for its local phases from its own group.
#include <algorithm>
#include <cstdint>
#include <cstring>
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
  s->sessions_open = rs.sessions_open;
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
// The body writes `recvbuf`; `staging`, the memory it may point into, lives as long as the task.
Request spawn_instance(RankState& rs, const std::shared_ptr<RankState>& state, const Comm& c, const Group& scope,
                       MPI_Comm comm, const char* name, const std::string& args, const CollectiveBody& body,
                       void* recvbuf, const std::shared_ptr<std::vector<std::byte>>& staging,
                       const std::shared_ptr<MpiError>& error) {
  auto describe = [&rs, comm, name, args, caller = rs.caller] {
    return fmt::format("{}{} on {}{}", name, args.empty() ? "" : "(" + args + ")", comm_text(rs, comm),
                       site_text(caller));
  };
  return rs.proc->spawn(scope, [&rs, state, c, comm, name, body, recvbuf, staging, error](const Group& instance) {
    Comm mine = c;
    mine.coll = instance;
    // Not the intercommunicator's hidden local communicator, which every instance and the blocking
    // calls share: the body makes the local group's own from the instance's group.
    mine.local_comm = MPI_COMM_NULL;
    try {
      body(*state, mine, recvbuf);
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

// The descriptor of the call for the consistency check (check.hpp). An argument it cannot be made of
// (a root out of range) is the body's to report, when the request completes: the call is then
// checked by its name and order alone.
Collective described(RankState& rs, const Comm& c, const char* name, const CollectiveDescription& describe) {
  if (describe) try {
      return describe(rs, c, name);
    } catch (const MpiError&) {
    }
  return describe_name(name);
}

// The consistency check of the call, at its entry, before its task sends anything. Returns the
// arguments as reports print them (empty when not described).
std::string check_entry(RankState& rs, MPI_Comm comm, const Comm& c, const char* name,
                        const CollectiveDescription& describe) {
  Collective d = described(rs, c, name, describe);
  std::string args = d.args;
  check_collective(rs, comm, std::move(d));
  return args;
}

// Buffer ownership (check.hpp own_buffer) of the collective started into q on intracommunicator c:
// its send buffers' runs checksummed; under --check its receive buffers' runs too, copied into a
// staging buffer that the body writes instead (so MPI_IN_PLACE and the body's reads see the program's
// data), copied back when the request completes. Returns the receive buffer the body is to write.
// `types`: the rank's datatypes as the collective's task sees them.
void* own_collective_buffers(RankState& rs, Req& q, RankState& types, const Comm& c, const CollectiveForms& forms) {
  if (!forms.buffers || c.inter || !owns_buffers(rs)) return forms.recvbuf;
  CollectiveBuffers b;
  try {
    b = forms.buffers(types, c);
  } catch (const MpiError&) {  // the body reports a bad argument when the request completes
    return forms.recvbuf;
  }
  const auto run = [](const BufferRuns& r, std::ptrdiff_t off, std::size_t n, bool recv) {
    return OwnedRun{
        .addr = static_cast<const std::byte*>(r.base) + off, .bytes = n, .recv = recv, .offset = r.blocks ? off : -1};
  };
  for (const auto& [off, n] : b.send.runs) own_run(q, run(b.send, off, n, false));
  if (!settings().owned_receive_buffers || b.recv.runs.empty()) return forms.recvbuf;
  std::ptrdiff_t lo = b.recv.runs.front().first, hi = lo;
  for (const auto& [off, n] : b.recv.runs) {
    lo = std::min(lo, off);
    hi = std::max(hi, off + static_cast<std::ptrdiff_t>(n));
  }
  auto staging = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(hi - lo));
  for (const auto& [off, n] : b.recv.runs) {
    OwnedRun r = run(b.recv, off, n, true);
    r.staged = staging->data() + (off - lo);
    std::memcpy(r.staged, r.addr, n);
    own_run(q, r);
  }
  q.owned_staging = staging;
  // The staging copy's address of the receive buffer argument: block `off` is at staging + off - lo.
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(staging->data()) - static_cast<std::uintptr_t>(lo));
}

// Starts an instance of the collective into q (MPI_Ixxx's request, or a persistent one's at MPI_Start).
void start_instance(RankState& rs, Req& q, const std::shared_ptr<RankState>& state, const Comm& c, const Group& scope,
                    MPI_Comm comm, const char* name, const CollectiveBody& body, const CollectiveForms& forms) {
  q.collective_error = std::make_shared<MpiError>(MpiError{MPI_SUCCESS, {}});
  q.owned.clear();
  q.owned_staging.reset();
  void* recvbuf = own_collective_buffers(rs, q, *state, c, forms);
  q.r = spawn_instance(rs, state, c, scope, comm, name, q.collective_args, body, recvbuf, q.owned_staging,
                       q.collective_error);
}

}  // namespace

int start_nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms) {
  return call(name, comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    check_out(request, "request");
    const CollectiveBody& body = body_for(c, name, forms.intra, forms.inter);
    auto q = std::make_unique<Req>();
    q->collective_args = check_entry(rs, comm, c, name, forms.describe);
    q->comm = comm;
    q->collective = true;
    start_instance(rs, *q, snapshot(rs), c, c.coll, comm, name, body, forms);
    *request = new_req(rs, std::move(q));
  });
}

// A persistent collective's count arrays may be filled between its init and its starts (they must
// not change once it is started), so the v-forms' inits are checked by name and order alone, and
// each of their starts as the call it stands for: the n-th start against the n-th of the request's
// peers (check_start).
// The instances of a persistent collective run on a group of its own, made now (the init call is
// collective, in the same order on every rank): the n-th MPI_Start of the request is the same
// instance on every rank, whatever other collectives start on the communicator in between.
int init_persistent(const char* name, MPI_Comm comm, MPI_Request* request, const CollectiveForms& forms) {
  return call(name, comm, [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    check_out(request, "request");
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
    CollectiveForms ownership;  // what start_instance reads of the forms beside the body
    ownership.recvbuf = forms.recvbuf;
    ownership.buffers = forms.buffers;
    const CollectiveDescription at_start = forms.count_arrays ? forms.describe : nullptr;
    const CallSite init{rs.last_call, rs.caller};
    auto starts = std::make_shared<std::uint64_t>(0);
    q->start = [c, scope, comm, name, body = std::move(body), state = snapshot(rs), ownership = std::move(ownership),
                at_start, init, starts](RankState& s, Req& req) {
      if (at_start) check_start(s, comm, c, scope.context(), ++*starts, described(*state, c, name, at_start), init);
      req.done = false;
      start_instance(s, req, state, c, scope, comm, name, body, ownership);
    };
    *request = new_req(rs, std::move(q));
  });
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

// ---------------------------------------------------------------- each collective's forms
//
// One function per collective gives its bodies, its descriptor and the buffers it owns while it is
// pending (its receive buffer argument last, the body's unless staged); its nonblocking form
// (MPI_Ixxx) starts them at once, its persistent form (MPI_Xxx_init) at every MPI_Start.

namespace {

// count elements of n per rank: none when count is negative (the body reports it).
long long times(int count, int n) { return count > 0 ? static_cast<long long>(count) * n : 0; }

// A whole buffer of `count` elements of dt: one run; none for MPI_IN_PLACE, no data, or a
// non-contiguous datatype (whose ownership is not checked).
BufferRuns whole(RankState& rs, const void* buf, long long count, MPI_Datatype dt) {
  BufferRuns r{buf, {}, false};
  if (!buf || buf == MPI_IN_PLACE || count <= 0) return r;
  const Type& t = committed(rs, dt);
  if (t.contiguous() && t.size) r.runs.emplace_back(0, static_cast<std::size_t>(count) * t.size);
  return r;
}

// A v-form's n blocks: block i of counts[i] elements at displs[i] extents of *types from buf, or
// (`per_block`: MPI_Alltoallw) of types[i] at displs[i] bytes; blocks of non-contiguous types left out.
BufferRuns blocks(RankState& rs, const void* buf, int n, const int counts[], const int displs[],
                  const MPI_Datatype types[], bool per_block) {
  BufferRuns r{buf, {}, true};
  if (!buf || buf == MPI_IN_PLACE || !counts || !displs || !types) return r;
  for (int i = 0; i < n; ++i) {
    if (counts[i] <= 0) continue;
    const Type& t = committed(rs, types[per_block ? i : 0]);
    if (!t.contiguous() || !t.size) continue;
    const std::ptrdiff_t at = per_block ? displs[i] : static_cast<std::ptrdiff_t>(displs[i]) * t.extent;
    r.runs.emplace_back(at, static_cast<std::size_t>(counts[i]) * t.size);
  }
  return r;
}

CollectiveForms barrier_forms() {
  return {[](RankState& rs, Comm& c) { barrier(rs, c); }, [](RankState& rs, Comm& c) { inter_barrier_body(rs, c); },
          {}};
}

CollectiveForms bcast_forms(void* buffer, int count, MPI_Datatype datatype, int root) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    const bool root_here = c.rank == root;
    return {root_here ? whole(rs, buffer, count, datatype) : BufferRuns{},
            root_here ? BufferRuns{} : whole(rs, buffer, count, datatype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) { bcast(rs, c, rb, count, datatype, root); },
          [=](RankState& rs, Comm& c, void* rb) { inter_bcast_body(rs, c, rb, count, datatype, root); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, root, MPI_OP_NULL);
          },
          false,
          buffer,
          buffers};
}

CollectiveForms gather_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {whole(rs, sendbuf, sendcount, sendtype),
            c.rank == root ? whole(rs, recvbuf, times(recvcount, c.size), recvtype) : BufferRuns{}};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            gather(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype, root);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_gather_body(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted(rs, c, name, true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          },
          false,
          recvbuf,
          buffers};
}

CollectiveForms gatherv_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {whole(rs, sendbuf, sendcount, sendtype),
            c.rank == root ? blocks(rs, recvbuf, c.size, recvcounts, displs, &recvtype, false) : BufferRuns{}};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            gatherv(rs, c, sendbuf, sendcount, sendtype, rb, recvcounts, displs, recvtype, root);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_gatherv_body(rs, c, sendbuf, sendcount, sendtype, rb, recvcounts, displs, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted_v(rs, c, name, true, root, recvcounts, recvtype, sendcount, sendtype,
                                     sendbuf == MPI_IN_PLACE);
          },
          true,
          recvbuf,
          buffers};
}

CollectiveForms scatter_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {c.rank == root ? whole(rs, sendbuf, times(sendcount, c.size), sendtype) : BufferRuns{},
            whole(rs, recvbuf, recvcount, recvtype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            scatter(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype, root);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_scatter_body(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted(rs, c, name, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
          },
          false,
          recvbuf,
          buffers};
}

CollectiveForms scatterv_forms(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {c.rank == root ? blocks(rs, sendbuf, c.size, sendcounts, displs, &sendtype, false) : BufferRuns{},
            whole(rs, recvbuf, recvcount, recvtype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            scatterv(rs, c, sendbuf, sendcounts, displs, sendtype, rb, recvcount, recvtype, root);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_scatterv_body(rs, c, sendbuf, sendcounts, displs, sendtype, rb, recvcount, recvtype, root);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_rooted_v(rs, c, name, false, root, sendcounts, sendtype, recvcount, recvtype,
                                     recvbuf == MPI_IN_PLACE);
          },
          true,
          recvbuf,
          buffers};
}

CollectiveForms allgather_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {whole(rs, sendbuf, sendcount, sendtype), whole(rs, recvbuf, times(recvcount, c.size), recvtype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            allgather(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_allgather_body(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_all(rs, c, name, sendbuf, sendcount, sendtype, recvcount, recvtype, false);
          },
          false,
          recvbuf,
          buffers};
}

CollectiveForms allgatherv_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {whole(rs, sendbuf, sendcount, sendtype), blocks(rs, recvbuf, c.size, recvcounts, displs, &recvtype, false)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            allgatherv(rs, c, sendbuf, sendcount, sendtype, rb, recvcounts, displs, recvtype);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_allgatherv_body(rs, c, sendbuf, sendcount, sendtype, rb, recvcounts, displs, recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_allgatherv(rs, c, name, sendbuf, sendcount, sendtype, recvcounts, recvtype);
          },
          true,
          recvbuf,
          buffers};
}

CollectiveForms alltoall_forms(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {whole(rs, sendbuf, times(sendcount, c.size), sendtype),
            whole(rs, recvbuf, times(recvcount, c.size), recvtype)};
  };
  return {
      [=](RankState& rs, Comm& c, void* rb) { alltoall(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype); },
      [=](RankState& rs, Comm& c, void* rb) {
        inter_alltoall_body(rs, c, sendbuf, sendcount, sendtype, rb, recvcount, recvtype);
      },
      [=](RankState& rs, const Comm& c, const char* name) {
        return describe_all(rs, c, name, sendbuf, sendcount, sendtype, recvcount, recvtype, true);
      },
      false,
      recvbuf,
      buffers};
}

CollectiveForms alltoallv_forms(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {blocks(rs, sendbuf, c.size, sendcounts, sdispls, &sendtype, false),
            blocks(rs, recvbuf, c.size, recvcounts, rdispls, &recvtype, false)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            alltoallv(rs, c, sendbuf, sendcounts, sdispls, sendtype, rb, recvcounts, rdispls, recvtype);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_alltoallv_body(rs, c, sendbuf, sendcounts, sdispls, sendtype, rb, recvcounts, rdispls, recvtype);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_pairwise(rs, c, name, sendbuf, sendcounts, &sendtype, recvcounts, &recvtype, false);
          },
          true,
          recvbuf,
          buffers};
}

CollectiveForms alltoallw_forms(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                const int rdispls[], const MPI_Datatype recvtypes[]) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {blocks(rs, sendbuf, c.size, sendcounts, sdispls, sendtypes, true),
            blocks(rs, recvbuf, c.size, recvcounts, rdispls, recvtypes, true)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            alltoallw(rs, c, sendbuf, sendcounts, sdispls, sendtypes, rb, recvcounts, rdispls, recvtypes);
          },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_alltoallw_body(rs, c, sendbuf, sendcounts, sdispls, sendtypes, rb, recvcounts, rdispls, recvtypes);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_pairwise(rs, c, name, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, true);
          },
          true,
          recvbuf,
          buffers};
}

CollectiveForms reduce_forms(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             int root) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    return {whole(rs, sendbuf, count, datatype), c.rank == root ? whole(rs, recvbuf, count, datatype) : BufferRuns{}};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            reduction(rs, c, Reduction::reduce, sendbuf, rb, count, datatype, op, root);
          },
          [=](RankState& rs, Comm& c, void* rb) { inter_reduce_body(rs, c, sendbuf, rb, count, datatype, op, root); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, root, op);
          },
          false,
          recvbuf,
          buffers};
}

CollectiveForms allreduce_forms(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  const auto buffers = [=](RankState& rs, const Comm&) -> CollectiveBuffers {
    return {whole(rs, sendbuf, count, datatype), whole(rs, recvbuf, count, datatype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) {
            reduction(rs, c, Reduction::allreduce, sendbuf, rb, count, datatype, op, 0);
          },
          [=](RankState& rs, Comm& c, void* rb) { inter_allreduce_body(rs, c, sendbuf, rb, count, datatype, op); },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, Collective::kNoRoot, op);
          },
          false,
          recvbuf,
          buffers};
}

CollectiveForms reduce_scatter_forms(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    if (!recvcounts) return {};
    long long total = 0;
    for (int i = 0; i < c.size; ++i) total += std::max(recvcounts[i], 0);
    // MPI_IN_PLACE: the receive buffer holds the whole input.
    return {whole(rs, sendbuf, total, datatype),
            whole(rs, recvbuf, sendbuf == MPI_IN_PLACE ? total : recvcounts[c.rank], datatype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) { reduce_scatter(rs, c, sendbuf, rb, recvcounts, datatype, op); },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_reduce_scatter_body(rs, c, sendbuf, rb, recvcounts, datatype, op);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_reduce_scatter(rs, c, name, recvcounts, datatype, op);
          },
          true,
          recvbuf,
          buffers};
}

CollectiveForms reduce_scatter_block_forms(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                           MPI_Op op) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    const long long input = times(recvcount, c.size);  // in the receive buffer for MPI_IN_PLACE
    return {whole(rs, sendbuf, input, datatype),
            whole(rs, recvbuf, sendbuf == MPI_IN_PLACE ? input : recvcount, datatype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) { reduce_scatter_block(rs, c, sendbuf, rb, recvcount, datatype, op); },
          [=](RankState& rs, Comm& c, void* rb) {
            inter_reduce_scatter_block_body(rs, c, sendbuf, rb, recvcount, datatype, op);
          },
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_reduce_scatter_block(rs, c, name, recvcount, datatype, op);
          },
          false,
          recvbuf,
          buffers};
}

// MPI defines no intercommunicator form of the scans (MPI_ERR_COMM there).
CollectiveForms scan_forms(Reduction kind, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op) {
  const auto buffers = [=](RankState& rs, const Comm& c) -> CollectiveBuffers {
    // MPI_Exscan's receive buffer at rank 0 is not significant.
    const bool none = kind == Reduction::exscan && c.rank == 0;
    return {whole(rs, sendbuf, count, datatype), none ? BufferRuns{} : whole(rs, recvbuf, count, datatype)};
  };
  return {[=](RankState& rs, Comm& c, void* rb) { reduction(rs, c, kind, sendbuf, rb, count, datatype, op, 0); },
          {},
          [=](RankState& rs, const Comm& c, const char* name) {
            return describe_data(rs, c, name, count, datatype, Collective::kNoRoot, op);
          },
          false,
          recvbuf,
          buffers};
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
