// MPI collectives (docs/mpi.md, "Collectives"): each runs an SPMD algorithm, from the papers'
// catalog (algorithms/registry.hpp) where one fits the call, else a generic one (algorithms/
// generic.hpp), on the communicator's collective group, with real messages.
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#include "touchstone/mpirun.hpp"
#pragma GCC visibility pop

#include "algorithms/bcast.hpp"
#include "algorithms/generic.hpp"
#include "algorithms/reduce.hpp"
#include "algorithms/registry.hpp"
#include "call.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "coll_select.hpp"
#include "intercomm.hpp"
#include "request.hpp"
#include "touchstone/error.hpp"
#include "types.hpp"

namespace touchstone::mpi {

namespace {

// A collective, its generic algorithms (the default first unless `default_catalog` names one of
// the catalog's), which member of algorithms::Collective its catalog algorithms provide, and the
// catalog family they come from (its name, but for exscan, which runs the scans).
struct CollectiveInfo {
  const char* name;
  std::vector<std::string> generic;
  const char* default_catalog;  // nullptr: the first generic algorithm is the default
  std::function<bool(const algorithms::Algorithm&)> usable;  // catalog entries MPI can call
  const char* family = nullptr;                              // nullptr: `name`
};

// The defaults are the algorithms MPI ran before the MPI libraries' algorithms joined the catalog
// (the machine's barrier, binomial trees, rings, 1-lev-xor, reduce + scatterv): what every recorded
// time of the documentation and the tests assumes. `--coll-selector` picks others per call.
const std::vector<CollectiveInfo>& collectives() {
  using A = algorithms::Algorithm;
  static const std::vector<CollectiveInfo> c{
      {"barrier", {"machine"}, nullptr, [](const A& a) { return bool(a.raw.barrier); }},
      {"bcast", {}, "binomial", [](const A& a) { return a.raw.bcast || a.raw.bcast_world; }},
      {"scatter", {}, "1-lev-dir", [](const A& a) { return bool(a.raw.rooted); }},
      {"gather", {}, "1-lev-dir", [](const A& a) { return bool(a.raw.rooted); }},
      {"scatterv", {"direct"}, nullptr, nullptr},
      {"gatherv", {"direct"}, nullptr, nullptr},
      {"allgather", {}, "ring", [](const A& a) { return a.raw.allgather || a.raw.allgather_world; }},
      {"allgatherv", {"ring"}, nullptr, nullptr},
      {"alltoall", {}, "1-lev-xor", [](const A& a) { return bool(a.raw.alltoall); }},
      {"alltoallv", {"pairwise"}, nullptr, nullptr},
      {"reduce", {}, "binomial", [](const A& a) { return bool(a.raw.reduce); }},
      {"allreduce", {}, "reduce-bcast", [](const A& a) { return bool(a.raw.allreduce); }},
      {"reduce_scatter", {}, "reduce-scatterv", [](const A& a) { return bool(a.raw.reduce_scatter); }},
      {"scan", {}, "linear", [](const A& a) { return bool(a.raw.scan); }},
      {"exscan", {}, "linear", [](const A& a) { return bool(a.raw.scan); }, "scan"},
  };
  return c;
}

const CollectiveInfo* info(const std::string& name) {
  for (const auto& c : collectives())
    if (name == c.name) return &c;
  return nullptr;
}

const char* family(const CollectiveInfo& c) { return c.family ? c.family : c.name; }

std::string default_algorithm(const CollectiveInfo& c) { return c.default_catalog ? c.default_catalog : c.generic[0]; }

bool is_generic(const char* coll, const std::string& alg) {
  const auto& g = info(coll)->generic;
  return std::find(g.begin(), g.end(), alg) != g.end();
}

const algorithms::Algorithm& catalog_entry(const char* coll, const std::string& alg) {
  return algorithms::find(fmt::format("{}/{}", family(*info(coll)), alg));
}

// The algorithm for this call of collective `coll`: the one --coll names, else the one the
// --coll-selector's rule picks for the call's shape, else the default. An algorithm that reorders
// operands gives way to the default (which keeps rank order) for a non-commutative operator.
std::string chosen(const char* coll, const CallShape& shape = {}) {
  const CollectiveInfo& ci = *info(coll);
  const auto& sel = session()->coll;
  std::string alg;
  if (const auto it = sel.find(coll); it != sel.end())
    alg = it->second;
  else
    alg = select_algorithm(session()->coll_selector, coll, shape);
  if (alg.empty()) alg = default_algorithm(ci);
  if (!shape.commutative && !is_generic(coll, alg) && catalog_entry(coll, alg).raw.needs_commutative)
    alg = default_algorithm(ci);
  return alg;
}

// The paper-004 and paper-001 algorithms of the catalog run on the whole machine only.
void require_whole_machine(const Comm& c, const char* coll, const std::string& alg) {
  if (!c.world_identity)
    throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                   fmt::format("{}/{} runs on the whole machine only (MPI_COMM_WORLD, or a duplicate, with -np equal "
                               "to the machine's processors); choose another with --coll {}=...",
                               coll, alg, coll)};
}

std::byte* bytes(void* p) { return static_cast<std::byte*>(p); }
const std::byte* cbytes(const void* p) { return static_cast<const std::byte*>(p); }

// A buffer of `count` elements of t as contiguous bytes: the user's memory when t is contiguous,
// else a packed copy (`load`: filled from the user's buffer) that store() writes back. The buffer is
// checked first (check_buffer), as a point-to-point call checks it.
class Packed {
 public:
  Packed(void* user, int count, const Type& t, bool load) : user_(user), count_(count), t_(t) {
    check_buffer(user, count, t);
    const std::size_t n = static_cast<std::size_t>(count) * t.size;
    if (t.contiguous() || n == 0) {
      span_ = {bytes(user), n};
    } else {
      copy_.resize(n);
      if (load) pack(user, count, t, copy_);
      span_ = copy_;
    }
  }
  std::span<std::byte> span() { return span_; }
  void store() {
    if (!copy_.empty()) unpack(copy_, user_, count_, t_);
  }

 private:
  void* user_;
  int count_;
  const Type& t_;
  std::vector<std::byte> copy_;
  std::span<std::byte> span_;
};

// The reduction of `op` on elements of t, on packed bytes (inout = in op inout).
algorithms::Reducer reducer(RankState& rs, MPI_Op op, MPI_Datatype dt, const Type& t, bool& commutative) {
  return packed_reducer(rs, op, dt, t, commutative);
}

// A reduction as the catalog's algorithms take it: the operator charged at the machine's gamma of
// its operand class (user operators by their datatype's base type), elements of t.size bytes.
struct MpiReduction {
  algorithms::Reduction r;
  bool builtin = true;
};
MpiReduction mpi_reduction(RankState& rs, MPI_Op op, MPI_Datatype dt, const Type& t) {
  MpiReduction m;
  m.builtin = user_op(rs, op) == nullptr;
  m.r.op = algorithms::charged(*rs.proc, reducer(rs, op, dt, t, m.r.commutative), operand_class(t.base));
  m.r.elem = t.size ? t.size : 1;
  return m;
}

// --- The selection: each collective runs the algorithm chosen() names for the call ---

void run_barrier(RankState& rs, const Comm& c) {
  const std::string alg = chosen("barrier", {.size = c.size});
  if (is_generic("barrier", alg))
    rs.proc->barrier(c.coll);
  else
    catalog_entry("barrier", alg).raw.barrier(*rs.proc, c.coll);
}

void run_bcast(RankState& rs, const Comm& c, int root, std::span<std::byte> buf) {
  const std::string alg = chosen("bcast", {.size = c.size, .bytes = buf.size()});
  // Open MPI's rules name a chain of the message's own size (chain(n)) for every n: run it
  // directly rather than make a catalog entry per size.
  if (alg.rfind("chain(", 0) == 0 && alg.back() == ')') {
    const std::size_t segment = std::stoull(alg.substr(6, alg.size() - 7));
    return algorithms::bcast_chain(*rs.proc, c.coll, root, buf, segment);
  }
  const auto& a = catalog_entry("bcast", alg);
  if (a.raw.bcast) return a.raw.bcast(*rs.proc, c.coll, root, buf);
  require_whole_machine(c, "bcast", alg);
  a.raw.bcast_world(*rs.proc, c.pt2pt.world_rank(root), buf);
}

void run_allgather(RankState& rs, const Comm& c, std::span<std::byte> buf, std::size_t block) {
  const std::string alg = chosen("allgather", {.size = c.size, .bytes = block});
  const auto& a = catalog_entry("allgather", alg);
  if (a.raw.allgather) return a.raw.allgather(*rs.proc, c.coll, buf, block);
  require_whole_machine(c, "allgather", alg);
  a.raw.allgather_world(*rs.proc, buf, block);
}

void run_alltoall(RankState& rs, const Comm& c, std::span<const std::byte> send, std::span<std::byte> recv,
                  std::size_t block, bool in_place) {
  const std::string alg = chosen("alltoall", {.size = c.size, .bytes = block, .in_place = in_place});
  catalog_entry("alltoall", alg).raw.alltoall(*rs.proc, c.coll, send, recv, block);
}

CallShape reduction_shape(const Comm& c, std::size_t bytes, const MpiReduction& m) {
  return {.size = c.size,
          .bytes = bytes,
          .count = bytes / m.r.elem,
          .commutative = m.r.commutative,
          .builtin_op = m.builtin};
}

std::vector<std::size_t> scaled(const int* v, const char* name, int n, std::size_t unit) {
  check_arrays(n, {{name, v}});
  std::vector<std::size_t> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0) throw MpiError{MPI_ERR_COUNT, fmt::format("count or displacement {} (entry {}) is negative", v[i], i)};
    out[static_cast<std::size_t>(i)] = static_cast<std::size_t>(v[i]) * unit;
  }
  return out;
}

// For the v-variants on a non-contiguous type: the packed layout (prefix sums of the counts).
std::vector<std::size_t> packed_displs(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> d(counts.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) d[i] = at, at += counts[i];
  return d;
}

// The per-rank blocks of a v-collective: the user's buffer when the type is contiguous, else
// packed blocks (loaded and stored block by block).
struct Blocks {
  std::vector<std::size_t> counts, displs;  // bytes, in `span`
  std::span<std::byte> span;
  std::vector<std::byte> copy;
  void* user = nullptr;
  const int* ucounts = nullptr;
  const int* udispls = nullptr;
  const Type* t = nullptr;

  // `names`: the user's names of c and d (recvcounts, displs; sendcounts, sdispls; ...).
  Blocks(void* buf, const int* c, const int* d, std::pair<const char*, const char*> names, int n, const Type& type,
         bool load)
      : user(buf), ucounts(c), udispls(d), t(&type) {
    counts = scaled(c, names.first, n, type.size);
    if (type.contiguous()) {
      displs = scaled(d, names.second, n, type.extent);
      std::size_t end = 0;
      for (int i = 0; i < n; ++i) end = std::max(end, displs[static_cast<std::size_t>(i)] + counts[static_cast<std::size_t>(i)]);
      span = {bytes(buf), end};
      return;
    }
    displs = packed_displs(counts);
    copy.resize(displs.empty() ? 0 : displs.back() + counts.back());
    span = copy;
    if (load)
      for (int i = 0; i < n; ++i)
        pack(cbytes(buf) + static_cast<std::size_t>(d[i]) * type.extent, c[i], type,
             std::span(copy).subspan(displs[static_cast<std::size_t>(i)], counts[static_cast<std::size_t>(i)]));
  }
  void store() {
    if (copy.empty()) return;
    for (std::size_t i = 0; i < counts.size(); ++i)
      unpack(std::span<const std::byte>(copy).subspan(displs[i], counts[i]),
             bytes(user) + static_cast<std::size_t>(udispls[i]) * t->extent, ucounts[i], *t);
  }
};

// The receive buffer of a regular collective (MPI_Allgather, MPI_Alltoall): `recvcount` elements
// of `recvtype` from each rank of `c`, packed when the type is not contiguous; `block` is one rank's
// share in bytes.
struct RegularBlocks {
  RegularBlocks(RankState& rs, const Comm& c, void* recvbuf, int recvcount, MPI_Datatype recvtype, bool load)
      : type((check_count(recvcount), committed(rs, recvtype))),
        block(static_cast<std::size_t>(recvcount) * type.size),
        packed(recvbuf, recvcount * c.size, type, load) {}
  const Type& type;
  std::size_t block;
  Packed packed;
};

// An all-gather's own contribution: the send buffer (when not MPI_IN_PLACE) copied into the rank's
// block of the receive buffer, whose size the send signature must match.
void place_own_block(RankState& rs, const void* sendbuf, int sendcount, MPI_Datatype sendtype, std::span<std::byte> mine) {
  if (sendbuf == MPI_IN_PLACE) return;
  check_count(sendcount);
  Packed s(const_cast<void*>(sendbuf), sendcount, committed(rs, sendtype), true);
  if (s.span().size() != mine.size()) throw MpiError{MPI_ERR_TRUNCATE, "send and receive signatures differ"};
  std::memcpy(mine.data(), s.span().data(), mine.size());
  rs.proc->local_copy(mine.size());
}

}  // namespace

void check_selection(const std::map<std::string, std::string>& coll) {
  for (const auto& [c, alg] : coll) {
    const CollectiveInfo* i = info(c);
    if (!i) {
      std::string known;
      for (const auto& x : collectives()) known += (known.empty() ? "" : ", ") + std::string(x.name);
      throw UsageError(fmt::format("--coll: unknown collective '{}' (known: {})", c, known));
    }
    if (is_generic(i->name, alg)) continue;
    if (!i->usable)
      throw UsageError(fmt::format("--coll {}={}: {} has the algorithm(s) {} only", c, alg, c, fmt::join(i->generic, ", ")));
    const auto& a = algorithms::find(fmt::format("{}/{}", family(*i), alg));  // UsageError with close names
    if (!i->usable(a)) throw UsageError(fmt::format("--coll {}={}: that algorithm cannot serve MPI calls", c, alg));
  }
}

std::vector<std::pair<std::string, std::vector<std::string>>> collective_algorithms() {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& c : collectives()) {
    std::vector<std::string> names{default_algorithm(c)};
    for (const auto& g : c.generic)
      if (g != names[0]) names.push_back(g);
    const std::string prefix = std::string(family(c)) + "/";
    if (c.usable) {
      for (const auto& a : algorithms::catalog())
        if (a.name.rfind(prefix, 0) == 0 && c.usable(a) && a.name.substr(prefix.size()) != names[0])
          names.push_back(a.name.substr(prefix.size()));
      // A parameterised family, named with its parameter's kind: N an integer, X a real number;
      // tried with one value of each kind, as the family itself checks its parameter.
      for (const auto& parameterised : algorithms::family_prefixes()) {
        if (parameterised.rfind(prefix, 0) != 0) continue;
        for (const auto& [sample, kind] : {std::pair{"2", "N"}, std::pair{"0.5", "X"}}) {
          try {
            if (c.usable(algorithms::find(parameterised + sample + ")")))
              names.push_back(fmt::format("{}{})", parameterised.substr(prefix.size()), kind));
            break;
          } catch (const UsageError&) {
          }
        }
      }
    }
    out.emplace_back(c.name, std::move(names));
  }
  return out;
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

void mpi::barrier(RankState& rs, Comm& c) { run_barrier(rs, c); }

int MPI_Barrier(MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_barrier(comm);
  return call("MPI_Barrier", comm, [&](RankState& rs) {
    check_collective(rs, comm, "MPI_Barrier");
    barrier(rs, comm_of(rs, comm));
  });
}

void mpi::bcast(RankState& rs, Comm& c, void* buffer, int count, MPI_Datatype datatype, int root) {
  check_count(count);
  check_root(c, root);
  const Type& t = committed(rs, datatype);
  Packed buf(buffer, count, t, c.rank == root);
  run_bcast(rs, c, root, buf.span());
  if (c.rank != root) buf.store();
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_bcast(buffer, count, datatype, root, comm);
  return call("MPI_Bcast", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_collective(rs, comm, describe_data(rs, c, "MPI_Bcast", count, datatype, root, MPI_OP_NULL));
    bcast(rs, c, buffer, count, datatype, root);
  });
}

namespace {
// Scatter and gather: `blocks` is the root's buffer of c.size blocks, `own` every rank's block.
void rooted(const char* coll, RankState& rs, Comm& c, int root, std::span<const std::byte> send, std::span<std::byte> recv,
            std::size_t size) {
  catalog_entry(coll, chosen(coll)).raw.rooted(*rs.proc, c.coll, root, send, recv, size);
}
}  // namespace

void mpi::scatter(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root) {
  check_root(c, root);
  const bool am_root = c.rank == root, in_place = am_root && recvbuf == MPI_IN_PLACE;
  std::size_t size = 0;
  std::vector<std::byte> all, own_copy;
  std::span<const std::byte> send;
  if (am_root) {
    check_count(sendcount);
    const Type& st = committed(rs, sendtype);
    size = static_cast<std::size_t>(sendcount) * st.size;
    Packed s(const_cast<void*>(sendbuf), sendcount * c.size, st, true);
    all.assign(s.span().begin(), s.span().end());
    send = all;
  }
  if (!in_place) {
    check_count(recvcount);
    const Type& rt = committed(rs, recvtype);
    if (!am_root) size = static_cast<std::size_t>(recvcount) * rt.size;
    else if (static_cast<std::size_t>(recvcount) * rt.size != size)
      throw MpiError{MPI_ERR_TRUNCATE, fmt::format("the root sends {} bytes per rank but receives {}", size,
                                                   static_cast<std::size_t>(recvcount) * rt.size)};
    Packed r(recvbuf, recvcount, rt, false);
    rooted("scatter", rs, c, root, send, r.span(), size);
    r.store();
  } else {
    own_copy.resize(size);
    rooted("scatter", rs, c, root, send, own_copy, size);
  }
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return call("MPI_Scatter", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_rooted(rs, comm_of(rs, comm), "MPI_Scatter", false, sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, root));
    scatter(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

void mpi::gather(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root) {
  check_root(c, root);
  const bool am_root = c.rank == root, in_place = am_root && sendbuf == MPI_IN_PLACE;
  if (am_root) {
    check_count(recvcount);
    const Type& rt = committed(rs, recvtype);
    const std::size_t size = static_cast<std::size_t>(recvcount) * rt.size;
    Packed r(recvbuf, recvcount * c.size, rt, in_place);
    std::vector<std::byte> own;
    if (in_place) {
      auto b = r.span().subspan(static_cast<std::size_t>(root) * size, size);
      own.assign(b.begin(), b.end());
    } else {
      check_count(sendcount);
      const Type& st = committed(rs, sendtype);
      if (static_cast<std::size_t>(sendcount) * st.size != size)
        throw MpiError{MPI_ERR_TRUNCATE, "the root's send and receive signatures differ"};
      Packed s(const_cast<void*>(sendbuf), sendcount, st, true);
      own.assign(s.span().begin(), s.span().end());
    }
    rooted("gather", rs, c, root, own, r.span(), size);
    r.store();
    return;
  }
  check_count(sendcount);
  const Type& st = committed(rs, sendtype);
  Packed s(const_cast<void*>(sendbuf), sendcount, st, true);
  rooted("gather", rs, c, root, s.span(), {}, s.span().size());
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return call("MPI_Gather", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_rooted(rs, comm_of(rs, comm), "MPI_Gather", true, sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, root));
    gather(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

void mpi::scatterv(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  check_root(c, root);
  const bool am_root = c.rank == root, in_place = am_root && recvbuf == MPI_IN_PLACE;
  std::optional<Blocks> b;
  if (am_root)
    b.emplace(const_cast<void*>(sendbuf), sendcounts, displs, std::pair("sendcounts", "displs"), c.size,
              committed(rs, sendtype), true);
  std::vector<std::byte> own;
  if (in_place) {
    own.resize(b->counts[static_cast<std::size_t>(root)]);
    algorithms::scatterv_direct(*rs.proc, c.coll, root, b->span, own, b->counts, b->displs);
    return;
  }
  check_count(recvcount);
  Packed r(recvbuf, recvcount, committed(rs, recvtype), false);
  static const std::vector<std::size_t> none;
  algorithms::scatterv_direct(*rs.proc, c.coll, root, am_root ? std::span<const std::byte>(b->span) : std::span<const std::byte>{},
                              r.span(), am_root ? b->counts : none, am_root ? b->displs : none);
  r.store();
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (is_intercomm(comm))
    return inter_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return call("MPI_Scatterv", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_rooted_v(rs, comm_of(rs, comm), "MPI_Scatterv", false, root, sendcounts, sendtype,
                                       recvcount, recvtype, recvbuf == MPI_IN_PLACE));
    scatterv(rs, comm_of(rs, comm), sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}

void mpi::gatherv(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root) {
  check_root(c, root);
  const bool am_root = c.rank == root, in_place = am_root && sendbuf == MPI_IN_PLACE;
  if (!am_root) {
    check_count(sendcount);
    Packed s(const_cast<void*>(sendbuf), sendcount, committed(rs, sendtype), true);
    algorithms::gatherv_direct(*rs.proc, c.coll, root, s.span(), {}, {}, {});
    return;
  }
  Blocks b(recvbuf, recvcounts, displs, {"recvcounts", "displs"}, c.size, committed(rs, recvtype), in_place);
  const auto me = static_cast<std::size_t>(root);
  std::vector<std::byte> own;
  if (in_place) {
    auto blk = b.span.subspan(b.displs[me], b.counts[me]);
    own.assign(blk.begin(), blk.end());
  } else {
    check_count(sendcount);
    Packed s(const_cast<void*>(sendbuf), sendcount, committed(rs, sendtype), true);
    own.assign(s.span().begin(), s.span().end());
  }
  if (own.size() != b.counts[me]) throw MpiError{MPI_ERR_TRUNCATE, "the root's send and receive signatures differ"};
  algorithms::gatherv_direct(*rs.proc, c.coll, root, own, b.span, b.counts, b.displs);
  b.store();
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (is_intercomm(comm))
    return inter_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  return call("MPI_Gatherv", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_rooted_v(rs, comm_of(rs, comm), "MPI_Gatherv", true, root, recvcounts, recvtype,
                                       sendcount, sendtype, sendbuf == MPI_IN_PLACE));
    gatherv(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}

void mpi::allgather(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype) {
  RegularBlocks blocks(rs, c, recvbuf, recvcount, recvtype, sendbuf == MPI_IN_PLACE);
  const std::size_t size = blocks.block;
  Packed& r = blocks.packed;
  place_own_block(rs, sendbuf, sendcount, sendtype, r.span().subspan(static_cast<std::size_t>(c.rank) * size, size));
  run_allgather(rs, c, r.span(), size);
  r.store();
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return call("MPI_Allgather", comm, [&](RankState& rs) {
    check_collective(
        rs, comm,
        describe_all(rs, comm_of(rs, comm), "MPI_Allgather", sendbuf, sendcount, sendtype, recvcount, recvtype, false));
    allgather(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

void mpi::allgatherv(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype) {
  Blocks b(recvbuf, recvcounts, displs, {"recvcounts", "displs"}, c.size, committed(rs, recvtype),
           sendbuf == MPI_IN_PLACE);
  const auto me = static_cast<std::size_t>(c.rank);
  place_own_block(rs, sendbuf, sendcount, sendtype, b.span.subspan(b.displs[me], b.counts[me]));
  algorithms::allgatherv_ring(*rs.proc, c.coll, b.span, b.counts, b.displs);
  b.store();
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm))
    return inter_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  return call("MPI_Allgatherv", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_allgatherv(rs, comm_of(rs, comm), "MPI_Allgatherv", sendbuf, sendcount, sendtype,
                                         recvcounts, recvtype));
    allgatherv(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}

void mpi::alltoall(RankState& rs, Comm& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  RegularBlocks blocks(rs, c, recvbuf, recvcount, recvtype, in_place);
  const std::size_t size = blocks.block;
  Packed& r = blocks.packed;
  std::vector<std::byte> in_place_copy;
  std::span<const std::byte> send;
  std::optional<Packed> s;
  if (in_place) {
    in_place_copy.assign(r.span().begin(), r.span().end());
    send = in_place_copy;
  } else {
    check_count(sendcount);
    s.emplace(const_cast<void*>(sendbuf), sendcount * c.size, committed(rs, sendtype), true);
    if (s->span().size() != r.span().size()) throw MpiError{MPI_ERR_TRUNCATE, "send and receive signatures differ"};
    send = s->span();
  }
  run_alltoall(rs, c, send, r.span(), size, in_place);
  r.store();
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return call("MPI_Alltoall", comm, [&](RankState& rs) {
    check_collective(
        rs, comm,
        describe_all(rs, comm_of(rs, comm), "MPI_Alltoall", sendbuf, sendcount, sendtype, recvcount, recvtype, true));
    alltoall(rs, comm_of(rs, comm), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}

void mpi::alltoallv(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype) {
  Blocks r(recvbuf, recvcounts, rdispls, {"recvcounts", "rdispls"}, c.size, committed(rs, recvtype),
           sendbuf == MPI_IN_PLACE);
  if (sendbuf == MPI_IN_PLACE) {
    const std::vector<std::byte> copy(r.span.begin(), r.span.end());
    algorithms::alltoallv_pairwise(*rs.proc, c.coll, copy, r.counts, r.displs, r.span, r.counts, r.displs);
  } else {
    Blocks s(const_cast<void*>(sendbuf), sendcounts, sdispls, {"sendcounts", "sdispls"}, c.size,
             committed(rs, sendtype), true);
    algorithms::alltoallv_pairwise(*rs.proc, c.coll, s.span, s.counts, s.displs, r.span, r.counts, r.displs);
  }
  r.store();
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (is_intercomm(comm))
    return inter_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  return call("MPI_Alltoallv", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_pairwise(rs, comm_of(rs, comm), "MPI_Alltoallv", sendbuf, sendcounts, &sendtype,
                                       recvcounts, &recvtype, false));
    alltoallv(rs, comm_of(rs, comm), sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
// MPI_Alltoallw: every block with its own type and a displacement in bytes, packed into one
// contiguous buffer per side and exchanged with the pairwise all-to-all of MPI_Alltoallv.
void mpi::alltoallw(RankState& rs, Comm& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                    const MPI_Datatype recvtypes[]) {
  const auto n = static_cast<std::size_t>(c.size);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  // One side's blocks: their packed sizes and places, and the packed bytes.
  struct Side {
    std::vector<std::size_t> counts, displs;
    std::vector<std::byte> packed;
  };
  auto layout = [&](const int counts[], const MPI_Datatype types[]) {
    Side side;
    for (std::size_t i = 0; i < n; ++i) {
      check_count(counts[i]);
      side.displs.push_back(side.packed.size());
      side.counts.push_back(static_cast<std::size_t>(counts[i]) * committed(rs, types[i]).size);
      side.packed.resize(side.packed.size() + side.counts.back());
    }
    return side;
  };
  auto load = [&](Side& side, const void* buf, const int counts[], const int displs[], const MPI_Datatype types[]) {
    for (std::size_t i = 0; i < n; ++i)
      pack(cbytes(buf) + displs[i], counts[i], committed(rs, types[i]),
           std::span(side.packed).subspan(side.displs[i], side.counts[i]));
  };
  // (The counts and types were checked with the call's description.)
  check_arrays(c.size, {{"rdispls", rdispls}});
  if (!in_place) check_arrays(c.size, {{"sdispls", sdispls}});
  Side r = layout(recvcounts, recvtypes);
  Side s = in_place ? r : layout(sendcounts, sendtypes);
  if (in_place) load(s, recvbuf, recvcounts, rdispls, recvtypes);
  else load(s, sendbuf, sendcounts, sdispls, sendtypes);
  algorithms::alltoallv_pairwise(*rs.proc, c.coll, s.packed, s.counts, s.displs, r.packed, r.counts, r.displs);
  for (std::size_t i = 0; i < n; ++i)
    unpack(std::span<const std::byte>(r.packed).subspan(r.displs[i], r.counts[i]), bytes(recvbuf) + rdispls[i],
           recvcounts[i], committed(rs, recvtypes[i]));
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm) {
  if (is_intercomm(comm))
    return inter_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
  return call("MPI_Alltoallw", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_pairwise(rs, comm_of(rs, comm), "MPI_Alltoallw", sendbuf, sendcounts, sendtypes,
                                       recvcounts, recvtypes, true));
    alltoallw(rs, comm_of(rs, comm), sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes);
  });
}

namespace {
void run_reduction(RankState& rs, const Comm& c, Reduction kind, int root, std::span<const std::byte> send,
                   std::span<std::byte> out, const MpiReduction& m) {
  static constexpr const char* kNames[] = {"reduce", "allreduce", "scan", "exscan"};
  const char* coll = kNames[static_cast<int>(kind)];
  const auto& a = catalog_entry(coll, chosen(coll, reduction_shape(c, send.size(), m)));
  switch (kind) {
    case Reduction::reduce: a.raw.reduce(*rs.proc, c.coll, root, send, out, m.r); break;
    case Reduction::allreduce: a.raw.allreduce(*rs.proc, c.coll, send, out, m.r); break;
    case Reduction::scan: a.raw.scan(*rs.proc, c.coll, send, out, m.r, false); break;
    case Reduction::exscan: a.raw.scan(*rs.proc, c.coll, send, out, m.r, true); break;
  }
}
}  // namespace

void mpi::reduction(RankState& rs, Comm& c, Reduction kind, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype dt, MPI_Op op, int root) {
  check_count(count);
  if (kind == Reduction::reduce) check_root(c, root);
  const Type& t = committed(rs, dt);
  const MpiReduction m = mpi_reduction(rs, op, dt, t);
  const bool gets_result = kind != Reduction::reduce || c.rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE && gets_result;
  std::optional<Packed> r;
  if (gets_result) r.emplace(recvbuf, count, t, in_place);
  std::vector<std::byte> send;
  if (in_place) {
    send.assign(r->span().begin(), r->span().end());
  } else {
    Packed s(const_cast<void*>(sendbuf), count, t, true);
    send.assign(s.span().begin(), s.span().end());
  }
  std::vector<std::byte> ignored(gets_result ? 0 : send.size());
  std::span<std::byte> out = gets_result ? r->span() : std::span<std::byte>(ignored);
  run_reduction(rs, c, kind, root, send, out, m);
  if (gets_result && !(kind == Reduction::exscan && c.rank == 0)) r->store();
}

namespace {

// A blocking reduction on an intracommunicator: the call's agreement checked, then the reduction.
// Only MPI_Reduce has a root; the others name none to the checks and give the algorithms rank 0.
// Inlined, so that the call site is the program's (call.hpp).
[[gnu::always_inline]] inline int reduction_call(const char* name, Reduction kind, const void* sendbuf, void* recvbuf,
                                                 int count, MPI_Datatype datatype, MPI_Op op, int root,
                                                 MPI_Comm comm) {
  return call(name, comm, [&](RankState& rs) {
    const int checked_root = kind == Reduction::reduce ? root : Collective::kNoRoot;
    check_collective(rs, comm, describe_data(rs, comm_of(rs, comm), name, count, datatype, checked_root, op));
    reduction(rs, comm_of(rs, comm), kind, sendbuf, recvbuf, count, datatype, op, root);
  });
}

}  // namespace

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
  return reduction_call("MPI_Reduce", Reduction::reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  return reduction_call("MPI_Allreduce", Reduction::allreduce, sendbuf, recvbuf, count, datatype, op, 0, comm);
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_refused("MPI_Scan", comm);
  return reduction_call("MPI_Scan", Reduction::scan, sendbuf, recvbuf, count, datatype, op, 0, comm);
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_refused("MPI_Exscan", comm);
  return reduction_call("MPI_Exscan", Reduction::exscan, sendbuf, recvbuf, count, datatype, op, 0, comm);
}

// MPI_Reduce_scatter(_block): the algorithm chosen for reduce_scatter (docs/mpi.md).
void mpi::reduce_scatter(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op) {
  const Type& t = committed(rs, datatype);
  const std::vector<std::size_t> counts = scaled(recvcounts, "recvcounts", c.size, t.size);
  int total = 0;
  for (int i = 0; i < c.size; ++i) total += recvcounts[i];
  const MpiReduction m = mpi_reduction(rs, op, datatype, t);
  Packed s(const_cast<void*>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf), total, t, true);
  const std::vector<std::byte> send(s.span().begin(), s.span().end());
  Packed r(recvbuf, recvcounts[c.rank], t, false);
  const std::string alg = chosen("reduce_scatter", reduction_shape(c, send.size(), m));
  catalog_entry("reduce_scatter", alg).raw.reduce_scatter(*rs.proc, c.coll, send, r.span(), counts, m.r);
  r.store();
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm) {
  if (is_intercomm(comm)) return inter_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  return call("MPI_Reduce_scatter", comm, [&](RankState& rs) {
    check_collective(rs, comm,
                     describe_reduce_scatter(rs, comm_of(rs, comm), "MPI_Reduce_scatter", recvcounts, datatype, op));
    reduce_scatter(rs, comm_of(rs, comm), sendbuf, recvbuf, recvcounts, datatype, op);
  });
}

void mpi::reduce_scatter_block(RankState& rs, Comm& c, const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op) {
  const std::vector<int> counts(static_cast<std::size_t>(c.size), recvcount);
  reduce_scatter(rs, c, sendbuf, recvbuf, counts.data(), datatype, op);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  int size = 0;
  if (const int rc = MPI_Comm_size(comm, &size); rc != MPI_SUCCESS) return rc;  // an intercommunicator's too
  const std::vector<int> counts(static_cast<std::size_t>(size), recvcount);
  if (is_intercomm(comm)) return MPI_Reduce_scatter(sendbuf, recvbuf, counts.data(), datatype, op, comm);
  return call("MPI_Reduce_scatter_block", comm, [&](RankState& rs) {
    check_collective(
        rs, comm,
        describe_data(rs, comm_of(rs, comm), "MPI_Reduce_scatter_block", recvcount, datatype, Collective::kNoRoot, op));
    reduce_scatter_block(rs, comm_of(rs, comm), sendbuf, recvbuf, recvcount, datatype, op);
  });
}
