// MPI's environment (docs/mpi.md): initialization and finalization, MPI_Abort, the clock, names,
// memory, MPI_Dims_create and the error strings.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"


using namespace touchstone;
using namespace touchstone::mpi;

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
  // A collective still running would write into the program's buffers after it has ended.
  for (const auto& q : rs.reqs)
    if (q && q->failure && !q->done)
      throw UsageError(fmt::format("MPI_Finalize on rank {} with a nonblocking or persistent collective still active "
                                   "(complete it with MPI_Wait or MPI_Test first)",
                                   rs.proc->rank()));
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

int MPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
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
