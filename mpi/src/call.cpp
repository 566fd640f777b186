// The frame of every MPI call (call.hpp): the rank's state, argument checks, the error handler.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "types.hpp"

namespace touchstone::mpi {


namespace {
Session* g_session = nullptr;
}  // namespace


RankState& own_state(const char* call, bool need_init) {
  Proc* p = Proc::current();
  Session* s = g_session;
  if (!p || !s || !s->find_rank(p->rank())) {
    std::fprintf(stderr, "error: %s was called outside a program run by `touchstone mpirun` (or from a thread the "
                         "program created)\n", call);
    std::fflush(nullptr);
    std::_Exit(1);
  }
  RankState& rs = s->rank(p->rank());
  rs.proc = p;
  rs.last_call = call;
  if (s->compute_factor > 0) {
    settle_call_time(rs);  // takes the turn, as the charge does, and reads the clock before it moves
    charge_host_compute(rs, s->compute_factor);
  }
  if (need_init && !rs.usable()) {
    if (rs.finalized) throw UsageError(fmt::format("{} called after MPI_Finalize on rank {}", call, p->rank()));
    if (!rs.mpi_sessions.empty())
      throw UsageError(
          fmt::format("{} called after the last MPI_Session_finalize on rank {}, which has no session "
                      "open and did not call MPI_Init",
                      call, p->rank()));
    throw UsageError(fmt::format("{} called before MPI_Init on rank {}", call, p->rank()));
  }
  return rs;
}

RankState& state(const char* call, bool need_init) {
  if (Proc* p = Proc::current()) p->await_turn();
  RankState& rs = own_state(call, need_init);
  settle_call_time(rs);
  if (rs.world_groups_pending) [[unlikely]]
    make_world_groups(rs);
  return rs;
}

void synchronize_collective(RankState& rs, const char* name, MPI_Comm c) {
  if (!g_session->synchronizing_collectives) return;
  // The blocking collectives whose algorithms may let a member leave before all have entered
  // (MPI_Barrier synchronizes already; nonblocking collectives complete in a wait, not here).
  static const std::set<std::string_view> kCollectives = {
      "MPI_Bcast",     "MPI_Reduce",  "MPI_Allreduce",      "MPI_Gather",         "MPI_Gatherv",
      "MPI_Scatter",   "MPI_Scatterv", "MPI_Allgather",     "MPI_Allgatherv",     "MPI_Alltoall",
      "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan",
      "MPI_Exscan"};
  if (!kCollectives.contains(name)) return;
  const Comm& comm = comm_of(rs, c);
  if (!comm.inter) rs.proc->barrier(comm.coll);
}

const char* error_text(int code) {
  switch (code) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer";
    case MPI_ERR_COUNT: return "invalid count";
    case MPI_ERR_TYPE: return "invalid datatype";
    case MPI_ERR_TAG: return "invalid tag";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_REQUEST: return "invalid request";
    case MPI_ERR_ROOT: return "invalid root";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimension argument";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_IN_STATUS: return "error code in status";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported by Touchstone";
    case MPI_ERR_KEYVAL: return "invalid keyval";
    case MPI_ERR_INFO: return "invalid info object";
    case MPI_ERR_INFO_KEY: return "invalid info key";
    case MPI_ERR_INFO_VALUE: return "invalid info value";
    case MPI_ERR_INFO_NOKEY: return "no such info key";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_SIZE: return "invalid size";
    case MPI_ERR_DISP: return "invalid displacement unit";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_ASSERT: return "invalid assertion";
    case MPI_ERR_RMA_CONFLICT: return "conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC: return "RMA call outside its synchronization";
    case MPI_ERR_RMA_RANGE: return "target memory outside the window";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR: return "wrong window flavor";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_SESSION: return "invalid session";
    case MPI_ERR_NAME: return "service name not published";
    case MPI_ERR_PORT: return "invalid port name";
    case MPI_ERR_SERVICE: return "service name already published, or not published by this process";
    case MPI_ERR_SPAWN: return "the processes asked for cannot be started";
    case MPI_ERR_FILE: return "invalid file handle";
    case MPI_ERR_NOT_SAME: return "arguments not the same on every process of a collective";
    case MPI_ERR_AMODE: return "invalid access mode";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "unsupported data representation";
    case MPI_ERR_NO_SUCH_FILE: return "no such file";
    case MPI_ERR_FILE_EXISTS: return "the file exists";
    case MPI_ERR_BAD_FILE: return "invalid file name";
    case MPI_ERR_ACCESS: return "permission denied";
    case MPI_ERR_NO_SPACE: return "no space left";
    case MPI_ERR_QUOTA: return "quota exceeded";
    case MPI_ERR_READ_ONLY: return "read-only file or file system";
    case MPI_ERR_FILE_IN_USE: return "the file is in use";
    case MPI_ERR_DUP_DATAREP: return "data representation already defined";
    case MPI_ERR_CONVERSION: return "data conversion failed";
    case MPI_ERR_IO: return "I/O error";
    case MPI_T_ERR_MEMORY: return "out of memory (tool interface)";
    case MPI_T_ERR_NOT_INITIALIZED: return "the tool interface is not initialized";
    case MPI_T_ERR_CANNOT_INIT: return "the tool interface cannot be initialized";
    case MPI_T_ERR_INVALID_INDEX: return "invalid variable or category index";
    case MPI_T_ERR_INVALID_ITEM: return "invalid enumeration item";
    case MPI_T_ERR_INVALID_HANDLE: return "invalid tool interface handle";
    case MPI_T_ERR_OUT_OF_HANDLES: return "no more tool interface handles";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "no more performance variable sessions";
    case MPI_T_ERR_INVALID_SESSION: return "invalid performance variable session";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "the control variable cannot be set now";
    case MPI_T_ERR_CVAR_SET_NEVER: return "the control variable can never be set";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "the performance variable cannot be started or stopped";
    case MPI_T_ERR_PVAR_NO_WRITE: return "the performance variable cannot be written or reset";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "the performance variable cannot be read and reset atomically";
    case MPI_T_ERR_INVALID_NAME: return "no variable or category of that name";
    case MPI_T_ERR_INVALID: return "invalid use of the tool interface";
    default: return "unknown error";
  }
}

Comm* find_comm(RankState& rs, MPI_Comm c) {
  if (c <= 0 || c >= static_cast<int>(rs.comms.size())) return nullptr;
  return rs.comms[static_cast<std::size_t>(c)].get();
}

Comm& comm_of(RankState& rs, MPI_Comm c) {
  Comm* x = find_comm(rs, c);
  if (!x) throw MpiError{MPI_ERR_COMM, fmt::format("communicator {} is not valid", c)};
  return *x;
}

MPI_Comm_errhandler_function* user_errhandler(const RankState& rs, MPI_Errhandler eh) {
  const bool user = eh >= kFirstErrhandler && eh - kFirstErrhandler < static_cast<int>(rs.errhandlers.size());
  return user ? rs.errhandlers[static_cast<std::size_t>(eh - kFirstErrhandler)] : nullptr;
}

MPI_Errhandler add_errhandler(RankState& rs, MPI_Comm_errhandler_function* f) {
  rs.errhandlers.push_back(f);
  return static_cast<MPI_Errhandler>(kFirstErrhandler + rs.errhandlers.size() - 1);
}

void check_errhandler(const RankState& rs, MPI_Errhandler eh) {
  if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN && !user_errhandler(rs, eh))
    throw MpiError{MPI_ERR_ARG, fmt::format("error handler {} is not valid", eh)};
}

std::string error_kind(const RankState& rs, int code) {
  // A code the program added (MPI_Add_error_code) is named by its class, which may be predefined.
  const auto added = rs.added_error_class.find(code);
  return added == rs.added_error_class.end()
             ? error_text(code)
             : fmt::format("a code of error class {} added by the program", added->second);
}

void remember_returned(RankState& rs, MPI_Comm c, const char* call, const MpiError& e) {
  rs.returned_error = RankState::ReturnedError{
      CallSite{call, rs.caller, c}, c == MPI_COMM_NULL ? std::string() : " on " + comm_text(rs, c),
      fmt::format("{} ({}, error code {})", e.what, error_kind(rs, e.code), e.code)};
}

// Hands an error to the communicator's error handler (the world's when the communicator is not
// valid): MPI_ERRORS_ARE_FATAL ends the run with a report naming the rank and the call.
namespace {
// The communicator whose error handler gets an error in a call on c, and the handler.
std::pair<Comm*, MPI_Errhandler> handler_of(RankState& rs, MPI_Comm c) {
  Comm* x = find_comm(rs, c);
  if (!x) x = find_comm(rs, MPI_COMM_WORLD);
  return {x, x ? x->errhandler : MPI_ERRORS_ARE_FATAL};
}
}  // namespace

bool ends_the_run(const RankState& rs, MPI_Errhandler eh) {
  return eh != MPI_ERRORS_RETURN && !user_errhandler(rs, eh);
}

bool errors_are_fatal(RankState& rs, MPI_Comm c) { return ends_the_run(rs, handler_of(rs, c).second); }

std::string fatal_text(const RankState& rs, const char* call, int rank, const MpiError& e) {
  return fmt::format("{} on rank {}: {} ({}); the default error handler MPI_ERRORS_ARE_FATAL ends the run", call, rank,
                     e.what, error_kind(rs, e.code));
}

int raise(RankState& rs, MPI_Comm c, const char* call, const MpiError& e) {
  rs.proc->await_turn();  // a handler or the report may reach beyond the rank (an abort, the session)
  const auto [x, eh] = handler_of(rs, c);
  return hand_to(rs, eh, c, x ? c : MPI_COMM_NULL, call, e, [&] { return fatal_text(rs, call, rs.proc->rank(), e); });
}

const Type& type_of(RankState& rs, MPI_Datatype t) {
  if (const Type* p = predefined_type(t)) return *p;
  const int i = t - kFirstDerivedType;
  if (i < 0 || i >= static_cast<int>(rs.types.size()) || !rs.types[static_cast<std::size_t>(i)])
    throw MpiError{MPI_ERR_TYPE, fmt::format("datatype {} is not valid", t)};
  return *rs.types[static_cast<std::size_t>(i)];
}

const Type& committed(RankState& rs, MPI_Datatype t) {
  const Type& x = type_of(rs, t);
  if (!x.committed) throw MpiError{MPI_ERR_TYPE, fmt::format("datatype {} is used before MPI_Type_commit", t)};
  return x;
}

void check_count(int count) {
  if (count < 0) throw MpiError{MPI_ERR_COUNT, fmt::format("count {} is negative", count)};
}

void check_peer(const Comm& c, int r, bool wildcard_ok, const char* what) {
  if (r == MPI_PROC_NULL || (wildcard_ok && r == MPI_ANY_SOURCE)) return;
  if (r < 0 || r >= c.peers())
    throw MpiError{MPI_ERR_RANK, fmt::format("{} rank {} is out of range: the communicator has {} {}rank(s)", what, r,
                                             c.peers(), c.inter ? "remote " : "")};
}

void check_tag(int tag, bool wildcard_ok) {
  if ((wildcard_ok && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= kTagUb)) return;
  throw MpiError{MPI_ERR_TAG, fmt::format("tag {} is invalid (0 .. MPI_TAG_UB = {}{})", tag, kTagUb,
                                          wildcard_ok ? ", or MPI_ANY_TAG" : "")};
}

void check_root(const Comm& c, int root) {
  if (root < 0 || root >= c.size)
    throw MpiError{MPI_ERR_ROOT, fmt::format("root {} is out of range: the communicator has {} rank(s)", root, c.size)};
}

MPI_Status empty_status() {
  MPI_Status s{};
  s.MPI_SOURCE = MPI_ANY_SOURCE;
  s.MPI_TAG = MPI_ANY_TAG;
  return s;
}

MPI_Status proc_null_status() {
  MPI_Status s{};
  s.MPI_SOURCE = MPI_PROC_NULL;
  s.MPI_TAG = MPI_ANY_TAG;
  return s;
}

void set_status(MPI_Status* out, const MPI_Status& s) {
  if (out != MPI_STATUS_IGNORE) *out = s;
}

// MPI-3.1 3.2.5: calls that return one status leave its MPI_ERROR field alone; only a failure
// (a truncated receive) is written there.
void set_result_status(MPI_Status* out, const MPI_Status& s) {
  if (out == MPI_STATUS_IGNORE) return;
  const int error = out->MPI_ERROR;
  *out = s;
  if (s.MPI_ERROR == MPI_SUCCESS) out->MPI_ERROR = error;
}

Session* session() {
  if (Proc* p = Proc::current()) p->await_turn();
  return g_session;
}
const Session& settings() { return *g_session; }
void set_session(Session* s) { g_session = s; }

const UserOp* user_op(RankState& rs, MPI_Op op) {
  const int i = op - kFirstUserOp;
  if (i < 0 || i >= static_cast<int>(rs.ops.size()) || !rs.ops[static_cast<std::size_t>(i)]) return nullptr;
  return &*rs.ops[static_cast<std::size_t>(i)];
}

}  // namespace touchstone::mpi
