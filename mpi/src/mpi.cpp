// The MPI C interface over the public Proc API (docs/mpi.md). Every function finds its rank's
// state through Proc::current(), checks its arguments as MPI does and reports errors through the
// communicator's error handler.
#include <algorithm>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "coll.hpp"
#include "state.hpp"
#include "touchstone/error.hpp"
#include "types.hpp"

namespace touchstone::mpi {

namespace {

Session* g_session = nullptr;

constexpr int kTagUb = INT_MAX / 2;

RankState& state(const char* call, bool need_init = true) {
  Proc* p = Proc::current();
  Session* s = g_session;
  if (!p || !s || p->rank() >= s->np) {
    std::fprintf(stderr, "error: %s was called outside a program run by `touchstone mpirun` (or from a thread the "
                         "program created)\n", call);
    std::fflush(nullptr);
    std::_Exit(1);
  }
  RankState& rs = s->ranks[static_cast<std::size_t>(p->rank())];
  rs.proc = p;
  if (need_init && !rs.initialized) throw UsageError(fmt::format("{} called before MPI_Init on rank {}", call, p->rank()));
  if (need_init && rs.finalized) throw UsageError(fmt::format("{} called after MPI_Finalize on rank {}", call, p->rank()));
  return rs;
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
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_IN_STATUS: return "error code in status";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported by Touchstone";
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

// Hands an error to the communicator's error handler (the world's when the communicator is not
// valid): MPI_ERRORS_ARE_FATAL ends the run with a report naming the rank and the call.
int raise(RankState& rs, MPI_Comm c, const char* call, const MpiError& e) {
  Comm* x = find_comm(rs, c);
  if (!x) x = find_comm(rs, MPI_COMM_WORLD);
  const MPI_Errhandler eh = x ? x->errhandler : MPI_ERRORS_ARE_FATAL;
  if (eh == MPI_ERRORS_RETURN) return e.code;
  if (eh >= kFirstErrhandler && eh - kFirstErrhandler < static_cast<int>(rs.errhandlers.size())) {
    MPI_Comm cc = c;
    int code = e.code;
    rs.errhandlers[static_cast<std::size_t>(eh - kFirstErrhandler)](&cc, &code);
    return e.code;
  }
  throw UsageError(fmt::format("{} on rank {}: {} ({}); the default error handler MPI_ERRORS_ARE_FATAL ends the run",
                               call, rs.proc->rank(), e.what, error_text(e.code)));
}

// Runs body(rank state) as the MPI function `call` on communicator `c`.
template <class Body>
int call(const char* name, MPI_Comm c, Body&& body) {
  RankState& rs = state(name);
  try {
    body(rs);
    return MPI_SUCCESS;
  } catch (const MpiError& e) {
    return raise(rs, c, name, e);
  } catch (const AbortRequested&) {
    throw;
  } catch (const UsageError& e) {  // the runtime refused: the message says why
    return raise(rs, c, name, MpiError{MPI_ERR_OTHER, e.what()});
  }
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
  if (r < 0 || r >= c.size)
    throw MpiError{MPI_ERR_RANK, fmt::format("{} rank {} is out of range: the communicator has {} rank(s)", what, r, c.size)};
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

// The bytes to send: the user's buffer itself when the type is contiguous, else a packed copy.
std::span<const std::byte> send_bytes(const void* buf, int count, const Type& t, std::vector<std::byte>& scratch) {
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  if (t.contiguous() || n == 0) return {static_cast<const std::byte*>(buf), n};
  scratch.resize(n);
  pack(buf, count, t, scratch);
  return scratch;
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

// A new request slot; its handle is index + 1.
MPI_Request new_req(RankState& rs, std::unique_ptr<Req> q) {
  for (std::size_t i = 0; i < rs.reqs.size(); ++i)
    if (!rs.reqs[i]) {
      rs.reqs[i] = std::move(q);
      return static_cast<MPI_Request>(i + 1);
    }
  rs.reqs.push_back(std::move(q));
  return static_cast<MPI_Request>(rs.reqs.size());
}

Req* find_req(RankState& rs, MPI_Request h) {
  if (h == MPI_REQUEST_NULL) return nullptr;
  if (h < 0 || h > static_cast<int>(rs.reqs.size()) || !rs.reqs[static_cast<std::size_t>(h - 1)])
    throw MpiError{MPI_ERR_REQUEST, fmt::format("request {} is not valid", h)};
  return rs.reqs[static_cast<std::size_t>(h - 1)].get();
}

// The checks every point-to-point call makes (count, type, peer, tag) and its new request; a
// request to MPI_PROC_NULL is complete at once.
std::unique_ptr<Req> new_request(RankState& rs, MPI_Comm ch, int count, MPI_Datatype dt, int peer, int tag, bool recv) {
  const Comm& c = comm_of(rs, ch);
  check_count(count);
  committed(rs, dt);
  check_peer(c, peer, recv, recv ? "source" : "destination");
  check_tag(tag, recv);
  auto q = std::make_unique<Req>();
  q->recv = recv;
  q->comm = ch;
  if (peer == MPI_PROC_NULL) {
    q->done = true;
    q->status = proc_null_status();
  }
  return q;
}

// Posts a receive into the user's buffer (or a staging buffer for non-contiguous types).
std::unique_ptr<Req> post_recv(RankState& rs, MPI_Comm ch, void* buf, int count, MPI_Datatype dt, int src, int tag) {
  auto q = new_request(rs, ch, count, dt, src, tag, true);
  q->user_buf = buf;
  q->count = count;
  q->type = dt;
  if (q->done) return q;
  const Comm& c = comm_of(rs, ch);
  const Type& t = committed(rs, dt);
  const std::size_t n = static_cast<std::size_t>(count) * t.size;
  std::span<std::byte> into{static_cast<std::byte*>(buf), n};
  if (!t.contiguous() && n) {
    q->staging.resize(n);
    into = q->staging;
  }
  q->r = rs.proc->irecv_truncating(src == MPI_ANY_SOURCE ? any_source : src, tag == MPI_ANY_TAG ? any_tag : tag, into,
                                   c.pt2pt);
  return q;
}

std::unique_ptr<Req> post_send(RankState& rs, MPI_Comm ch, const void* buf, int count, MPI_Datatype dt, int dst,
                               int tag, bool synchronous) {
  auto q = new_request(rs, ch, count, dt, dst, tag, false);
  if (q->done) return q;
  const Comm& c = comm_of(rs, ch);
  const Type& t = committed(rs, dt);
  // A non-contiguous type is packed into the request's staging buffer: the runtime reads the send
  // buffer until the send completes (docs/model.md 1.5), so it must live as long as the request.
  const auto data = send_bytes(buf, count, t, q->staging);
  q->r = synchronous ? rs.proc->issend(dst, tag, data, c.pt2pt) : rs.proc->isend(dst, tag, data, c.pt2pt);
  return q;
}

// Turns a completed runtime request into its MPI status (unpacking a staged receive); the status's
// MPI_ERROR says MPI_ERR_TRUNCATE for a message longer than the buffer.
void finish(RankState& rs, Req& q, const Status& st) {
  q.done = true;
  q.status = MPI_Status{};
  if (!q.recv) {
    q.status = empty_status();
    return;
  }
  const Type& t = type_of(rs, q.type);
  const std::size_t cap = static_cast<std::size_t>(q.count) * t.size;
  const std::size_t got = std::min(st.size, cap);
  if (!q.staging.empty()) unpack(std::span(q.staging).first(got), q.user_buf, q.count, t);
  q.status.MPI_SOURCE = st.source;
  q.status.MPI_TAG = st.tag;
  q.status.touchstone_bytes = got;
  q.status.MPI_ERROR = st.truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
  q.message_size = st.size;
}

MpiError truncation(const Req& q) {
  return MpiError{MPI_ERR_TRUNCATE,
                  fmt::format("a message of {} bytes from rank {} (tag {}) is longer than the receive buffer of {} bytes",
                              q.message_size, q.status.MPI_SOURCE, q.status.MPI_TAG, q.status.touchstone_bytes)};
}

void set_status(MPI_Status* out, const MPI_Status& s) {
  if (out != MPI_STATUS_IGNORE) *out = s;
}

// Completes the request behind handle *h (blocking), frees it and reports truncation.
// Waitall and Testall, once every request is complete: frees them, sets their statuses and
// raises MPI_ERR_IN_STATUS for the first that failed (a truncated receive).
void release_all(RankState& rs, int count, MPI_Request requests[], MPI_Status statuses[]) {
    std::optional<MpiError> first;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      MPI_Status s = q ? q->status : empty_status();
      if (q && s.MPI_ERROR != MPI_SUCCESS && !first) first = truncation(*q);
      if (q) {
        rs.reqs[static_cast<std::size_t>(requests[i] - 1)].reset();
        requests[i] = MPI_REQUEST_NULL;
      }
      if (statuses != MPI_STATUSES_IGNORE) statuses[i] = s;
    }
    if (first) throw MpiError{MPI_ERR_IN_STATUS, first->what};
}

void wait_one(RankState& rs, MPI_Request* h, MPI_Status* status) {
  Req* q = find_req(rs, *h);
  if (!q) {
    set_status(status, empty_status());
    return;
  }
  if (!q->done) finish(rs, *q, rs.proc->wait(q->r));
  const MPI_Status s = q->status;
  const bool truncated = s.MPI_ERROR == MPI_ERR_TRUNCATE;
  const MpiError err = truncated ? truncation(*q) : MpiError{};
  rs.reqs[static_cast<std::size_t>(*h - 1)].reset();
  *h = MPI_REQUEST_NULL;
  set_status(status, s);
  if (truncated) throw err;
}

}  // namespace

Session* session() { return g_session; }
void set_session(Session* s) { g_session = s; }

// Helpers shared with coll.cpp.
RankState& rank_state(const char* call) { return state(call); }
Comm& comm_for(RankState& rs, MPI_Comm c) { return comm_of(rs, c); }
const Type& datatype_for(RankState& rs, MPI_Datatype t) { return committed(rs, t); }
void check_collective_root(const Comm& c, int root) { check_root(c, root); }
void check_collective_count(int count) { check_count(count); }
int run_call(const char* name, MPI_Comm c, const std::function<void(RankState&)>& body) { return call(name, c, body); }
const UserOp* user_op(RankState& rs, MPI_Op op) {
  const int i = op - kFirstUserOp;
  if (i < 0 || i >= static_cast<int>(rs.ops.size()) || !rs.ops[static_cast<std::size_t>(i)]) return nullptr;
  return &*rs.ops[static_cast<std::size_t>(i)];
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

// ------------------------------------------------------------------ environment

int MPI_Init(int*, char***) {
  RankState& rs = state("MPI_Init", false);
  if (rs.initialized) throw UsageError(fmt::format("MPI_Init called twice on rank {}", rs.proc->rank()));
  Proc& p = *rs.proc;
  const Session& s = *session();
  std::vector<int> world(static_cast<std::size_t>(s.np));
  std::iota(world.begin(), world.end(), 0);
  rs.comms.clear();
  rs.comms.resize(3);
  auto make = [&](const std::vector<int>& members) {
    auto c = std::make_unique<Comm>();
    c->pt2pt = p.group(members);
    c->coll = p.group(members);  // the same members again: a context of its own
    c->size = static_cast<int>(members.size());
    c->rank = c->pt2pt.local_rank(p.rank());
    c->world_identity = c->size == p.size() && std::is_sorted(members.begin(), members.end());
    return c;
  };
  rs.comms[1] = make(world);
  rs.comms[2] = make({p.rank()});
  rs.initialized = true;
  return MPI_SUCCESS;
}

int MPI_Init_thread(int* argc, char*** argv, int, int* provided) {
  if (provided) *provided = MPI_THREAD_SINGLE;
  return MPI_Init(argc, argv);
}

int MPI_Query_thread(int* provided) {
  state("MPI_Query_thread");
  *provided = MPI_THREAD_SINGLE;
  return MPI_SUCCESS;
}

int MPI_Finalize(void) {
  RankState& rs = state("MPI_Finalize");
  for (const auto& q : rs.reqs)
    if (q && q->recv && !q->done)
      throw UsageError(fmt::format("MPI_Finalize on rank {} with a receive request still active", rs.proc->rank()));
  // An active send completes on its own (as MPI_Request_free lets it); its Request must not outlive
  // the run (issue 20), so the rank's requests go now.
  rs.reqs.clear();
  rs.finalized = true;
  return MPI_SUCCESS;
}

int MPI_Initialized(int* flag) {
  *flag = state("MPI_Initialized", false).initialized;
  return MPI_SUCCESS;
}

int MPI_Finalized(int* flag) {
  *flag = state("MPI_Finalized", false).finalized;
  return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
  RankState& rs = state("MPI_Abort", false);
  Session& s = *session();
  if (!s.abort_code) {
    s.abort_code = errorcode;
    s.abort_report = fmt::format("rank {} called MPI_Abort(communicator {}, error code {})", rs.proc->rank(), comm, errorcode);
  }
  throw AbortRequested(s.abort_report);
}

double MPI_Wtime(void) { return static_cast<double>(state("MPI_Wtime", false).proc->now()) * 1e-12; }
double MPI_Wtick(void) { return 1e-12; }

int MPI_Get_processor_name(char* name, int* resultlen) {
  RankState& rs = state("MPI_Get_processor_name", false);
  const std::string n = fmt::format("{}-vp{}", rs.proc->machine().name, rs.proc->rank());
  const std::size_t len = std::min<std::size_t>(n.size(), MPI_MAX_PROCESSOR_NAME - 1);
  std::memcpy(name, n.data(), len);
  name[len] = '\0';
  *resultlen = static_cast<int>(len);
  return MPI_SUCCESS;
}

int MPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Get_library_version(char* version, int* resultlen) {
  const std::string v = "Touchstone MPI 0.1.0 (MPI-3.1 subset on an emulated machine; docs/mpi.md)";
  std::memcpy(version, v.c_str(), v.size() + 1);
  *resultlen = static_cast<int>(v.size());
  return MPI_SUCCESS;
}

int MPI_Alloc_mem(MPI_Aint size, void*, void* baseptr) {
  return call("MPI_Alloc_mem", MPI_COMM_WORLD, [&](RankState&) {
    if (size < 0) throw MpiError{MPI_ERR_ARG, fmt::format("size {} is negative", size)};
    void* p = std::malloc(size ? static_cast<std::size_t>(size) : 1);
    if (!p) throw MpiError{MPI_ERR_OTHER, fmt::format("cannot allocate {} bytes", size)};
    *static_cast<void**>(baseptr) = p;
  });
}

int MPI_Free_mem(void* base) {
  std::free(base);
  return MPI_SUCCESS;
}

// MPI-3.1 section 7.5.2: dimensions as close to each other as possible, in non-increasing order;
// entries already positive are kept.
int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
  return call("MPI_Dims_create", MPI_COMM_WORLD, [&](RankState&) {
    if (nnodes < 1 || ndims < 0) throw MpiError{MPI_ERR_ARG, fmt::format("nnodes {} or ndims {} is invalid", nnodes, ndims)};
    int left = nnodes, free_dims = 0;
    for (int i = 0; i < ndims; ++i) {
      if (dims[i] < 0) throw MpiError{MPI_ERR_ARG, fmt::format("dims[{}] = {} is negative", i, dims[i])};
      if (dims[i] > 0) {
        if (left % dims[i]) throw MpiError{MPI_ERR_DIMS, fmt::format("{} nodes cannot be divided by dims[{}] = {}", nnodes, i, dims[i])};
        left /= dims[i];
      } else {
        ++free_dims;
      }
    }
    if (free_dims == 0) {
      if (left != 1) throw MpiError{MPI_ERR_DIMS, fmt::format("the dimensions do not multiply to {}", nnodes)};
      return;
    }
    // Prime factors, largest first, each to the currently smallest free dimension.
    std::vector<int> factors;
    for (int f = 2; f * f <= left; ++f)
      while (left % f == 0) factors.push_back(f), left /= f;
    if (left > 1) factors.push_back(left);
    std::sort(factors.rbegin(), factors.rend());
    std::vector<int> d(static_cast<std::size_t>(free_dims), 1);
    for (int f : factors) *std::min_element(d.begin(), d.end()) *= f;
    std::sort(d.rbegin(), d.rend());
    for (int i = 0, k = 0; i < ndims; ++i)
      if (dims[i] == 0) dims[i] = d[static_cast<std::size_t>(k++)];
  });
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  const std::string s = fmt::format("MPI error {}: {}", errorcode, error_text(errorcode));
  const std::size_t len = std::min<std::size_t>(s.size(), MPI_MAX_ERROR_STRING - 1);
  std::memcpy(string, s.data(), len);
  string[len] = '\0';
  *resultlen = static_cast<int>(len);
  return MPI_SUCCESS;
}

int MPI_Error_class(int errorcode, int* errorclass) {
  *errorclass = errorcode;
  return MPI_SUCCESS;
}

// ------------------------------------------------------------------ communicators and groups

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  return call("MPI_Comm_rank", comm, [&](RankState& rs) { *rank = comm_of(rs, comm).rank; });
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  return call("MPI_Comm_size", comm, [&](RankState& rs) { *size = comm_of(rs, comm).size; });
}

namespace {
MPI_Comm add_comm(RankState& rs, const Comm& parent, Group pt2pt) {
  Proc& p = *rs.proc;
  auto c = std::make_unique<Comm>();
  c->size = pt2pt.size();
  c->rank = pt2pt.local_rank(p.rank());
  std::vector<int> all(static_cast<std::size_t>(c->size));
  std::iota(all.begin(), all.end(), 0);
  c->coll = p.subgroup(pt2pt, all);
  c->pt2pt = std::move(pt2pt);
  c->errhandler = parent.errhandler;
  const auto m = c->pt2pt.members();
  c->world_identity = c->size == p.size() && std::is_sorted(m.begin(), m.end());
  rs.comms.push_back(std::move(c));
  return static_cast<MPI_Comm>(rs.comms.size() - 1);
}
}  // namespace

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return call("MPI_Comm_dup", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    std::vector<int> all(static_cast<std::size_t>(c.size));
    std::iota(all.begin(), all.end(), 0);
    *newcomm = add_comm(rs, c, rs.proc->subgroup(c.pt2pt, all));
  });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return call("MPI_Comm_split", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    if (color < 0 && color != MPI_UNDEFINED)
      throw MpiError{MPI_ERR_ARG, fmt::format("color {} is negative and not MPI_UNDEFINED", color)};
    Group g = rs.proc->split(c.coll, color == MPI_UNDEFINED ? -1 : color, key);
    *newcomm = color == MPI_UNDEFINED ? MPI_COMM_NULL : add_comm(rs, c, std::move(g));
  });
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return call("MPI_Comm_create", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    const int gi = group - kFirstGroup;
    std::vector<int> members;
    if (group != MPI_GROUP_EMPTY) {
      if (gi < 0 || gi >= static_cast<int>(rs.groups.size()) || !rs.groups[static_cast<std::size_t>(gi)])
        throw MpiError{MPI_ERR_GROUP, fmt::format("group {} is not valid", group)};
      members = *rs.groups[static_cast<std::size_t>(gi)];
    }
    std::vector<int> local;
    for (int w : members) {
      const int l = c.pt2pt.local_rank(w);
      if (l < 0) throw MpiError{MPI_ERR_GROUP, fmt::format("world rank {} of the group is not in the communicator", w)};
      local.push_back(l);
    }
    // Every member of comm takes part (MPI_Comm_create is collective): a barrier keeps the
    // semantics' synchronization without a group exchange, as every member passes the same group.
    rs.proc->barrier(c.coll);
    if (std::find(members.begin(), members.end(), rs.proc->rank()) == members.end()) {
      *newcomm = MPI_COMM_NULL;
      return;
    }
    *newcomm = add_comm(rs, c, rs.proc->subgroup(c.pt2pt, local));
  });
}

int MPI_Comm_free(MPI_Comm* comm) {
  return call("MPI_Comm_free", *comm, [&](RankState& rs) {
    comm_of(rs, *comm);
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
      throw MpiError{MPI_ERR_COMM, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"};
    rs.comms[static_cast<std::size_t>(*comm)].reset();
    *comm = MPI_COMM_NULL;
  });
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return call("MPI_Comm_compare", comm1, [&](RankState& rs) {
    const Comm& a = comm_of(rs, comm1);
    const Comm& b = comm_of(rs, comm2);
    const auto ma = a.pt2pt.members(), mb = b.pt2pt.members();
    std::vector<int> sa(ma.begin(), ma.end()), sb(mb.begin(), mb.end());
    if (comm1 == comm2) *result = MPI_IDENT;
    else if (sa == sb) *result = MPI_CONGRUENT;
    else if (std::sort(sa.begin(), sa.end()), std::sort(sb.begin(), sb.end()), sa == sb) *result = MPI_SIMILAR;
    else *result = MPI_UNEQUAL;
  });
}

namespace {
MPI_Group add_group(RankState& rs, std::vector<int> world_ranks) {
  if (world_ranks.empty()) return MPI_GROUP_EMPTY;
  rs.groups.emplace_back(std::move(world_ranks));
  return static_cast<MPI_Group>(kFirstGroup + rs.groups.size() - 1);
}
const std::vector<int>& group_of(RankState& rs, MPI_Group g) {
  static const std::vector<int> empty;
  if (g == MPI_GROUP_EMPTY) return empty;
  const int i = g - kFirstGroup;
  if (i < 0 || i >= static_cast<int>(rs.groups.size()) || !rs.groups[static_cast<std::size_t>(i)])
    throw MpiError{MPI_ERR_GROUP, fmt::format("group {} is not valid", g)};
  return *rs.groups[static_cast<std::size_t>(i)];
}
}  // namespace

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return call("MPI_Comm_group", comm, [&](RankState& rs) {
    const auto m = comm_of(rs, comm).pt2pt.members();
    *group = add_group(rs, std::vector<int>(m.begin(), m.end()));
  });
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  static int tag_ub = kTagUb, yes = 1, proc_null = MPI_PROC_NULL, any = MPI_ANY_SOURCE;
  return call("MPI_Comm_get_attr", comm, [&](RankState& rs) {
    comm_of(rs, comm);
    int* v = nullptr;
    switch (keyval) {
      case MPI_TAG_UB: v = &tag_ub; break;
      case MPI_WTIME_IS_GLOBAL: v = &yes; break;  // every VP's clock is the one virtual time
      case MPI_HOST: v = &proc_null; break;
      case MPI_IO: v = &any; break;
      default: break;
    }
    *flag = v != nullptr;
    if (v) *static_cast<int**>(attribute_val) = v;
  });
}

int MPI_Group_size(MPI_Group group, int* size) {
  return call("MPI_Group_size", MPI_COMM_WORLD, [&](RankState& rs) { *size = static_cast<int>(group_of(rs, group).size()); });
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  return call("MPI_Group_rank", MPI_COMM_WORLD, [&](RankState& rs) {
    const auto& g = group_of(rs, group);
    const auto it = std::find(g.begin(), g.end(), rs.proc->rank());
    *rank = it == g.end() ? MPI_UNDEFINED : static_cast<int>(it - g.begin());
  });
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return call("MPI_Group_incl", MPI_COMM_WORLD, [&](RankState& rs) {
    const auto& g = group_of(rs, group);
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
      if (ranks[i] < 0 || ranks[i] >= static_cast<int>(g.size()))
        throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is not in the group of {}", ranks[i], g.size())};
      if (std::find(out.begin(), out.end(), g[static_cast<std::size_t>(ranks[i])]) != out.end())
        throw MpiError{MPI_ERR_RANK, fmt::format("rank {} appears twice", ranks[i])};
      out.push_back(g[static_cast<std::size_t>(ranks[i])]);
    }
    *newgroup = add_group(rs, std::move(out));
  });
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return call("MPI_Group_excl", MPI_COMM_WORLD, [&](RankState& rs) {
    const auto& g = group_of(rs, group);
    std::vector<bool> out(g.size(), false);
    for (int i = 0; i < n; ++i) {
      if (ranks[i] < 0 || ranks[i] >= static_cast<int>(g.size()) || out[static_cast<std::size_t>(ranks[i])])
        throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is not in the group of {}, or appears twice", ranks[i], g.size())};
      out[static_cast<std::size_t>(ranks[i])] = true;
    }
    std::vector<int> kept;
    for (std::size_t i = 0; i < g.size(); ++i)
      if (!out[i]) kept.push_back(g[i]);
    *newgroup = add_group(rs, std::move(kept));
  });
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  return call("MPI_Group_translate_ranks", MPI_COMM_WORLD, [&](RankState& rs) {
    const auto& a = group_of(rs, group1);
    const auto& b = group_of(rs, group2);
    for (int i = 0; i < n; ++i) {
      if (ranks1[i] == MPI_PROC_NULL) {
        ranks2[i] = MPI_PROC_NULL;
        continue;
      }
      if (ranks1[i] < 0 || ranks1[i] >= static_cast<int>(a.size()))
        throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is not in the first group", ranks1[i])};
      const auto it = std::find(b.begin(), b.end(), a[static_cast<std::size_t>(ranks1[i])]);
      ranks2[i] = it == b.end() ? MPI_UNDEFINED : static_cast<int>(it - b.begin());
    }
  });
}

int MPI_Group_free(MPI_Group* group) {
  return call("MPI_Group_free", MPI_COMM_WORLD, [&](RankState& rs) {
    group_of(rs, *group);
    if (*group != MPI_GROUP_EMPTY) rs.groups[static_cast<std::size_t>(*group - kFirstGroup)].reset();
    *group = MPI_GROUP_NULL;
  });
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler) {
  return call("MPI_Comm_create_errhandler", MPI_COMM_WORLD, [&](RankState& rs) {
    rs.errhandlers.push_back(function);
    *errhandler = static_cast<MPI_Errhandler>(kFirstErrhandler + rs.errhandlers.size() - 1);
  });
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return call("MPI_Comm_set_errhandler", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    const bool user = errhandler >= kFirstErrhandler && errhandler - kFirstErrhandler < static_cast<int>(rs.errhandlers.size());
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN && !user)
      throw MpiError{MPI_ERR_ARG, fmt::format("error handler {} is not valid", errhandler)};
    c.errhandler = errhandler;
  });
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return call("MPI_Comm_get_errhandler", comm, [&](RankState& rs) { *errhandler = comm_of(rs, comm).errhandler; });
}

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  *errhandler = MPI_ERRHANDLER_NULL;  // handlers live as long as the run
  return MPI_SUCCESS;
}

// ------------------------------------------------------------------ datatypes

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  return call("MPI_Type_size", MPI_COMM_WORLD, [&](RankState& rs) { *size = static_cast<int>(type_of(rs, datatype).size); });
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return call("MPI_Type_get_extent", MPI_COMM_WORLD, [&](RankState& rs) {
    *lb = 0;
    *extent = static_cast<MPI_Aint>(type_of(rs, datatype).extent);
  });
}

namespace {
int new_type(const char* name, int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    if (blocklength < 0) throw MpiError{MPI_ERR_ARG, fmt::format("block length {} is negative", blocklength)};
    if (stride < blocklength && count > 1)
      throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                     fmt::format("a vector whose stride ({}) is less than its block length ({}) is not supported", stride,
                                 blocklength)};
    const Type& old = type_of(rs, oldtype);
    rs.types.emplace_back(make_vector(count, blocklength, stride, old));
    *newtype = static_cast<MPI_Datatype>(kFirstDerivedType + rs.types.size() - 1);
  });
}
}  // namespace

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_contiguous", 1, count, 1, oldtype, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_vector", count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  return call("MPI_Type_commit", MPI_COMM_WORLD, [&](RankState& rs) {
    type_of(rs, *datatype);
    if (*datatype >= kFirstDerivedType) rs.types[static_cast<std::size_t>(*datatype - kFirstDerivedType)]->committed = true;
  });
}

int MPI_Type_free(MPI_Datatype* datatype) {
  return call("MPI_Type_free", MPI_COMM_WORLD, [&](RankState& rs) {
    type_of(rs, *datatype);
    if (*datatype < kFirstDerivedType) throw MpiError{MPI_ERR_TYPE, "a predefined datatype cannot be freed"};
    rs.types[static_cast<std::size_t>(*datatype - kFirstDerivedType)].reset();
    *datatype = MPI_DATATYPE_NULL;
  });
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_elements", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    const std::size_t base = t.base_count ? t.size / t.base_count : 0;  // bytes of one predefined element
    if (base == 0) *count = 0;
    else if (status->touchstone_bytes % base) *count = MPI_UNDEFINED;
    else *count = static_cast<int>(status->touchstone_bytes / base);
  });
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_count", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    if (t.size == 0) *count = 0;
    else if (status->touchstone_bytes % t.size) *count = MPI_UNDEFINED;
    else *count = static_cast<int>(status->touchstone_bytes / t.size);
  });
}

// ------------------------------------------------------------------ point-to-point

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Send", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (!q->done) rs.proc->wait(q->r);
  });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Rsend", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, false);
    if (!q->done) rs.proc->wait(q->r);
  });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return call("MPI_Ssend", comm, [&](RankState& rs) {
    auto q = post_send(rs, comm, buf, count, datatype, dest, tag, true);
    if (!q->done) rs.proc->wait(q->r);
  });
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Recv", comm, [&](RankState& rs) {
    MPI_Request h = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, tag));
    wait_one(rs, &h, status);
  });
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Isend", comm, [&](RankState& rs) {
    *request = new_req(rs, post_send(rs, comm, buf, count, datatype, dest, tag, false));
  });
}

int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Issend", comm, [&](RankState& rs) {
    *request = new_req(rs, post_send(rs, comm, buf, count, datatype, dest, tag, true));
  });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Irecv", comm, [&](RankState& rs) {
    *request = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, tag));
  });
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv", comm, [&](RankState& rs) {
    MPI_Request r = new_req(rs, post_recv(rs, comm, recvbuf, recvcount, recvtype, source, recvtag));
    MPI_Request s = new_req(rs, post_send(rs, comm, sendbuf, sendcount, sendtype, dest, sendtag, false));
    wait_one(rs, &s, MPI_STATUS_IGNORE);
    wait_one(rs, &r, status);
  });
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Sendrecv_replace", comm, [&](RankState& rs) {
    // The message is copied when the send is posted, so the receive may then reuse the buffer.
    MPI_Request s = new_req(rs, post_send(rs, comm, buf, count, datatype, dest, sendtag, false));
    MPI_Request r = new_req(rs, post_recv(rs, comm, buf, count, datatype, source, recvtag));
    wait_one(rs, &s, MPI_STATUS_IGNORE);
    wait_one(rs, &r, status);
  });
}

namespace {
MPI_Status probe_status(const Status& st) {
  MPI_Status s{};
  s.MPI_SOURCE = st.source;
  s.MPI_TAG = st.tag;
  s.touchstone_bytes = st.size;
  return s;
}
}  // namespace

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return call("MPI_Probe", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_peer(c, source, true, "source");
    check_tag(tag, true);
    if (source == MPI_PROC_NULL) return set_status(status, proc_null_status());
    set_status(status, probe_status(rs.proc->probe(source == MPI_ANY_SOURCE ? any_source : source,
                                                   tag == MPI_ANY_TAG ? any_tag : tag, c.pt2pt)));
  });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return call("MPI_Iprobe", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_peer(c, source, true, "source");
    check_tag(tag, true);
    if (source == MPI_PROC_NULL) {
      *flag = 1;
      return set_status(status, proc_null_status());
    }
    const auto st = rs.proc->iprobe(source == MPI_ANY_SOURCE ? any_source : source, tag == MPI_ANY_TAG ? any_tag : tag,
                                    c.pt2pt);
    *flag = st.has_value();
    if (st) set_status(status, probe_status(*st));
  });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  RankState& rs0 = state("MPI_Wait");
  const Req* q0 = nullptr;
  try {
    q0 = find_req(rs0, *request);
  } catch (const MpiError&) {
  }
  return call("MPI_Wait", q0 ? q0->comm : MPI_COMM_WORLD, [&](RankState& rs) { wait_one(rs, request, status); });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return call("MPI_Waitall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    std::vector<Request> active;
    std::vector<int> which;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (q && !q->done) {
        active.push_back(std::move(q->r));
        which.push_back(i);
      }
    }
    // The runtime completes receives in the order their messages arrived (docs/model.md).
    const auto st = rs.proc->waitall(active);
    for (std::size_t k = 0; k < which.size(); ++k) finish(rs, *find_req(rs, requests[which[k]]), st[k]);
    release_all(rs, count, requests, statuses);
  });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return call("MPI_Waitany", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    *index = MPI_UNDEFINED;
    std::vector<int> which;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (!q) continue;
      if (q->done) {  // already complete (MPI_PROC_NULL, or completed by a testall)
        *index = i;
        return wait_one(rs, &requests[i], status);
      }
      which.push_back(i);
    }
    if (which.empty()) return set_status(status, empty_status());
    std::vector<Request> active;
    for (int i : which) active.push_back(std::move(find_req(rs, requests[i])->r));
    Status st;
    const std::size_t k = rs.proc->waitany(active, &st);
    for (std::size_t j = 0; j < which.size(); ++j)
      if (j != k) find_req(rs, requests[which[j]])->r = std::move(active[j]);
    *index = which[k];
    finish(rs, *find_req(rs, requests[*index]), st);
    wait_one(rs, &requests[*index], status);
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", MPI_COMM_WORLD, [&](RankState& rs) {
    Req* q = find_req(rs, *request);
    *flag = 1;
    if (!q) return set_status(status, empty_status());
    if (!q->done) {
      Status st;
      if (!rs.proc->test(q->r, &st)) {
        *flag = 0;
        return;
      }
      finish(rs, *q, st);
    }
    wait_one(rs, request, status);
  });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return call("MPI_Testall", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    bool all = true;
    for (int i = 0; i < count; ++i) {
      Req* q = find_req(rs, requests[i]);
      if (!q || q->done) continue;
      Status st;
      if (rs.proc->test(q->r, &st)) finish(rs, *q, st);  // kept until all are complete
      else all = false;
    }
    *flag = all;
    if (!all) return;
    release_all(rs, count, requests, statuses);
  });
}

namespace {
// Completes (if complete by now, or `block`) and frees the request behind *h; returns its status's
// error code (MPI_ERR_TRUNCATE or MPI_SUCCESS). False if it is still in progress.
bool settle(RankState& rs, MPI_Request* h, MPI_Status* out, bool block) {
  Req* q = find_req(rs, *h);
  if (!q->done) {
    Status st;
    if (block) st = rs.proc->wait(q->r);
    else if (!rs.proc->test(q->r, &st)) return false;
    finish(rs, *q, st);
  }
  *out = q->status;
  rs.reqs[static_cast<std::size_t>(*h - 1)].reset();
  *h = MPI_REQUEST_NULL;
  return true;
}

// MPI_Waitsome and MPI_Testsome: every request complete by now (after a waitany when `wait`).
void some(RankState& rs, int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[],
          bool wait) {
  check_count(incount);
  bool any_active = false;
  for (int i = 0; i < incount; ++i) any_active |= find_req(rs, requests[i]) != nullptr;
  if (!any_active) {
    *outcount = MPI_UNDEFINED;
    return;
  }
  *outcount = 0;
  std::optional<std::string> error;
  auto take = [&](int i, const MPI_Status& s) {
    indices[*outcount] = i;
    if (statuses != MPI_STATUSES_IGNORE) statuses[*outcount] = s;
    ++*outcount;
    if (s.MPI_ERROR != MPI_SUCCESS && !error) error = fmt::format("request {} failed: {}", i, error_text(s.MPI_ERROR));
  };
  if (wait) {
    int index = MPI_UNDEFINED;
    MPI_Status s;
    const int rc = MPI_Waitany(incount, requests, &index, &s);
    if (index != MPI_UNDEFINED) take(index, s);
    if (rc != MPI_SUCCESS && !error) error = fmt::format("request {} failed: {}", index, error_text(rc));
  }
  for (int i = 0; i < incount; ++i) {
    if (!find_req(rs, requests[i])) continue;
    MPI_Status s;
    if (settle(rs, &requests[i], &s, false)) take(i, s);
  }
  if (error) throw MpiError{MPI_ERR_IN_STATUS, *error};
}
}  // namespace

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return call("MPI_Testany", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    *index = MPI_UNDEFINED;
    *flag = 1;
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
      if (!find_req(rs, requests[i])) continue;
      any_active = true;
      MPI_Status s;
      if (settle(rs, &requests[i], &s, false)) {
        *index = i;
        set_status(status, s);
        if (s.MPI_ERROR != MPI_SUCCESS) throw MpiError{s.MPI_ERROR, fmt::format("request {} failed", i)};
        return;
      }
    }
    *flag = !any_active;
    if (!any_active) set_status(status, empty_status());
  });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return call("MPI_Waitsome", MPI_COMM_WORLD,
              [&](RankState& rs) { some(rs, incount, requests, outcount, indices, statuses, true); });
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return call("MPI_Testsome", MPI_COMM_WORLD,
              [&](RankState& rs) { some(rs, incount, requests, outcount, indices, statuses, false); });
}

int MPI_Request_free(MPI_Request* request) {
  return call("MPI_Request_free", MPI_COMM_WORLD, [&](RankState& rs) {
    Req* q = find_req(rs, *request);
    if (!q) throw MpiError{MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be freed"};
    if (q->recv && !q->done)
      throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                     "freeing an active receive request is not supported (its buffer's fate would be unknown)"};
    rs.reqs[static_cast<std::size_t>(*request - 1)].reset();  // an active send completes on its own
    *request = MPI_REQUEST_NULL;
  });
}

int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return call("MPI_Op_create", MPI_COMM_WORLD, [&](RankState& rs) {
    rs.ops.emplace_back(UserOp{user_fn, commute != 0});
    *op = static_cast<MPI_Op>(kFirstUserOp + rs.ops.size() - 1);
  });
}

int MPI_Op_free(MPI_Op* op) {
  return call("MPI_Op_free", MPI_COMM_WORLD, [&](RankState& rs) {
    if (!user_op(rs, *op)) throw MpiError{MPI_ERR_OP, fmt::format("operation {} is not a user operation", *op)};
    rs.ops[static_cast<std::size_t>(*op - kFirstUserOp)].reset();
    *op = MPI_OP_NULL;
  });
}
