// MPI's environment (docs/mpi.md): initialization and finalization, MPI_Abort, the clock, names,
// memory (MPI_Dims_create is with the topologies, topology.cpp; error classes and strings in errors.cpp).
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "attributes.hpp"
#include "call.hpp"
#include "check.hpp"
#include "request.hpp"


using namespace touchstone;
using namespace touchstone::mpi;

// Only the rank's own state: the communicators' runtime groups wait for the rank's first call that
// takes its turn (make_world_groups), so a program's start up to there runs beside the other ranks'.
int MPI_Init(int*, char***) {
  RankState& rs = own_state("MPI_Init", false);
  if (rs.initialized) {
    rs.proc->await_turn();  // the error's report is made in the sequential order
    throw UsageError(fmt::format("MPI_Init called twice on rank {}", rs.proc->rank()));
  }
  const Proc& p = *rs.proc;
  if (rs.comms.size() < 3) rs.comms.resize(3);  // a session's communicators, made before, keep their handles
  auto make = [&](int size, int rank) {
    auto c = std::make_unique<Comm>();
    c->size = size;
    c->rank = rank;
    c->world_identity = size == p.size();  // members in world order
    return c;
  };
  rs.comms[1] = make(rs.world_size, rs.world_rank);
  rs.comms[2] = make(1, 0);
  rs.world_groups_pending = true;
  rs.initialized = true;
  return MPI_SUCCESS;
}

void touchstone::mpi::make_world_groups(RankState& rs) {
  rs.world_groups_pending = false;
  Proc& p = *rs.proc;
  // Made like the world where every VP is a rank, and like the first rank's group of ranks 0..np-1
  // otherwise: each rank making groups of all np ranks by listing them cost np^2 (4.6% of a
  // 16,384-rank run). Either way the group, and its context, is the one listing them would make.
  // A spawned world (dynamic.cpp) lists its members: it is made once per spawn.
  Comm& world = *rs.comms[1];
  Session& s = *session();
  if (rs.spawned) {
    world.pt2pt = p.group(rs.spawned->vps);
  } else if (rs.world_size == p.size()) {
    world.pt2pt = p.group_like(p.world());
  } else if (s.first_world.size() == rs.world_size) {
    world.pt2pt = p.group_like(s.first_world);
  } else {
    std::vector<int> members(static_cast<std::size_t>(rs.world_size));
    std::iota(members.begin(), members.end(), 0);
    world.pt2pt = p.group(std::move(members));
    s.first_world = world.pt2pt;
  }
  world.coll = p.group_like(world.pt2pt);  // the same members again: a context of its own
  Comm& self = *rs.comms[2];
  self.pt2pt = p.group({p.rank()});
  self.coll = p.group_like(self.pt2pt);
  // Connections and spawns carry their requests on the group of every VP (dynamic.cpp): the
  // reports of every process name them.
  if (!s.machine_context) s.machine_context = p.world().context();
  if (rs.spawned) join_parents(rs);
}

int MPI_Init_thread(int* argc, char*** argv, int, int* provided) {
  if (provided) *provided = MPI_THREAD_SINGLE;
  return MPI_Init(argc, argv);
}

int MPI_Query_thread(int* provided) {
  return call("MPI_Query_thread", MPI_COMM_WORLD, [&](RankState&) {
    check_out(provided, "provided");
    *provided = MPI_THREAD_SINGLE;
  });
}

// The rank's own fiber is its only thread that may call MPI: a call from a thread the program
// created ends the run (state() says so), so every call that returns here comes from the main one.
int MPI_Is_thread_main(int* flag) {
  return call("MPI_Is_thread_main", MPI_COMM_WORLD, [&](RankState&) {
    check_out(flag, "flag");
    *flag = 1;
  });
}

int MPI_Finalize(void) {
  RankState& rs = state("MPI_Finalize");
  if (!rs.initialized || rs.finalized)  // state() lets it through while a session is open
    throw UsageError(
        fmt::format("MPI_Finalize called {} on rank {}", rs.finalized ? "twice" : "before MPI_Init", rs.proc->rank()));
  // MPI_COMM_SELF's and MPI_COMM_WORLD's attributes go first, while MPI is still usable (MPI-3.1 8.7.1).
  const int rc = call("MPI_Finalize", MPI_COMM_WORLD, [](RankState& r) { finalize_attributes(r); });
  if (rc != MPI_SUCCESS) return rc;
  // Leaks and requests never completed (check.hpp): warnings, or the error of `mpirun --check`.
  if (const int leaks = call("MPI_Finalize", MPI_COMM_WORLD, [](RankState& r) { check_lifecycle(r); }); leaks)
    return leaks;
  for (const auto& q : rs.reqs)
    if (q && q->recv && !q->done)
      throw UsageError(fmt::format("MPI_Finalize on rank {} with a receive request still active", rs.proc->rank()));
  finalize_pt2pt(rs);  // buffered messages are sent before MPI_Finalize returns
  // A collective still running would write into the program's buffers after it has ended.
  for (const auto& q : rs.reqs)
    if (q && q->collective_error && !q->done)
      throw UsageError(fmt::format("MPI_Finalize on rank {} with a nonblocking or persistent collective still active "
                                   "(complete it with MPI_Wait or MPI_Test first)",
                                   rs.proc->rank()));
  // An active send completes on its own (as MPI_Request_free lets it); its Request must not outlive
  // the run, so the rank's requests go now.
  rs.reqs.clear();
  rs.finalized = true;
  return MPI_SUCCESS;
}

int MPI_Initialized(int* flag) {
  if (!flag) return MPI_ERR_ARG;  // before MPI_Init no error handler applies
  *flag = own_state("MPI_Initialized", false).initialized;
  return MPI_SUCCESS;
}

int MPI_Finalized(int* flag) {
  if (!flag) return MPI_ERR_ARG;
  *flag = own_state("MPI_Finalized", false).finalized;
  return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
  RankState& rs = state("MPI_Abort", false);
  Session& s = *session();
  if (!s.abort_code) {
    s.abort_code = errorcode;
    // In MPI's terms: the communicator's name and the program's line (MPI_Abort bypasses call()).
    s.abort_report = fmt::format("rank {} called MPI_Abort({}, error code {}){}", rs.proc->rank(),
                                 comm_text(rs, comm), errorcode, site_text(program_caller()));
  }
  throw AbortRequested(s.abort_report);
}

namespace touchstone::mpi {

namespace {
std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// MPI_Wtime calls in a row at one virtual time after which a rank is taken to busy-wait on the clock:
// about 0.2 host seconds of calls, far more than any program reads an unchanged clock for.
constexpr std::uint64_t kWtimeStreakLimit = std::uint64_t{1} << 24;
}  // namespace

// The burst is the rank's own CPU time on its host thread since it last resumed or called MPI:
// fibers share a thread, but none switches without an MPI call, so the burst is this rank's alone.
// The host time of the MPI call itself (before it blocks) joins the next burst.
void charge_host_compute(RankState& rs, double factor) {
  const std::int64_t now = thread_cpu_ns();
  if (rs.burst_start_ns >= 0 && now > rs.burst_start_ns) {
    const auto dt = static_cast<Time>(std::llround(static_cast<double>(now - rs.burst_start_ns) * 1e3 * factor));
    rs.burst_start_ns = now;
    if (dt > 0) rs.proc->compute(dt);
  }
  rs.burst_start_ns = thread_cpu_ns();
}

/// A rank resumed (the launcher's on_vp_resume): its next burst begins.
void begin_burst(RankState& rs) { rs.burst_start_ns = thread_cpu_ns(); }

}  // namespace touchstone::mpi

// Virtual time advances only in MPI calls (and, with --compute host, by the computation between
// them): a loop that waits for MPI_Wtime to advance with no other MPI call would never end. After
// kWtimeStreakLimit calls at one virtual time the rank fails with a report naming it.
double MPI_Wtime(void) {
  RankState& rs = own_state("MPI_Wtime", false);
  const Time now = rs.proc->now();
  if (now != rs.wtime_at) {
    rs.wtime_at = now;
    rs.wtime_streak = 0;
  } else if (++rs.wtime_streak == kWtimeStreakLimit) {
    throw UsageError(fmt::format(
        "MPI_Wtime on rank {}: called {} times in a row at t={} us with no time passing: virtual time advances only "
        "in MPI calls that communicate (computation costs nothing unless --compute host), so a loop waiting for "
        "MPI_Wtime to advance never ends; wait with an MPI call, or run with --compute host[:FACTOR]",
        rs.proc->rank(), kWtimeStreakLimit, to_us(now)));
  }
  return static_cast<double>(now) * 1e-12;
}
double MPI_Wtick(void) { return 1e-12; }

int MPI_Get_processor_name(char* name, int* resultlen) {
  RankState& rs = state("MPI_Get_processor_name", false);
  if (!name || !resultlen) return MPI_ERR_ARG;
  const std::string n = fmt::format("{}-vp{}", rs.proc->machine().name, rs.proc->rank());
  const std::size_t len = std::min<std::size_t>(n.size(), MPI_MAX_PROCESSOR_NAME - 1);
  std::memcpy(name, n.data(), len);
  name[len] = '\0';
  *resultlen = static_cast<int>(len);
  return MPI_SUCCESS;
}

// The two calls below may come before MPI_Init and outside `touchstone mpirun` (where no rank's
// state exists); only a null argument needs one, to report the error.
int MPI_Get_version(int* version, int* subversion) {
  if (!version || !subversion)
    return call("MPI_Get_version", MPI_COMM_WORLD, [&](RankState&) {
      check_out(version, "version");
      check_out(subversion, "subversion");
    }, false);
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Get_library_version(char* version, int* resultlen) {
  const std::string v = "Touchstone MPI 0.1.0 (MPI-3.1 subset on an emulated machine; docs/mpi.md)";
  if (!version || !resultlen)
    return call("MPI_Get_library_version", MPI_COMM_WORLD, [&](RankState&) {
      check_out(version, "version");
      check_out(resultlen, "resultlen");
    }, false);
  std::memcpy(version, v.c_str(), v.size() + 1);
  *resultlen = static_cast<int>(v.size());
  return MPI_SUCCESS;
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  return call("MPI_Alloc_mem", MPI_COMM_WORLD, [&](RankState&) {
    if (size < 0) throw MpiError{MPI_ERR_ARG, fmt::format("size {} is negative", size)};
    check_out(baseptr, "baseptr");
    void* p = std::malloc(size ? static_cast<std::size_t>(size) : 1);
    if (!p) throw MpiError{MPI_ERR_NO_MEM, fmt::format("cannot allocate {} bytes", size)};
    *static_cast<void**>(baseptr) = p;
  });
}

int MPI_Free_mem(void* base) {
  std::free(base);
  return MPI_SUCCESS;
}

// What mpi.h makes errno: the calling host thread's, asked anew (not const, unlike glibc's
// __errno_location, whose result a compiler may keep across a call after which the rank's code goes
// on on another thread). Here errno is glibc's: mpi.h's definition is undone first.
#undef errno
extern "C" __attribute__((visibility("default"))) int* touchstone_errno_location() {
  asm volatile("" ::: "memory");
  return &(*__errno_location());
}
