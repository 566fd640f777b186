// MPI communicators, groups and error handlers (docs/mpi.md): every communicator is a runtime
// group for point-to-point messages and another for its collectives.
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

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  return call("MPI_Comm_rank", comm, [&](RankState& rs) { *rank = comm_of(rs, comm).rank; });
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  return call("MPI_Comm_size", comm, [&](RankState& rs) { *size = comm_of(rs, comm).size; });
}

namespace touchstone::mpi {
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
}  // namespace touchstone::mpi

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return call("MPI_Comm_dup", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    std::vector<int> all(static_cast<std::size_t>(c.size));
    std::iota(all.begin(), all.end(), 0);
    *newcomm = add_comm(rs, c, rs.proc->subgroup(c.pt2pt, all));
    rs.comms[static_cast<std::size_t>(*newcomm)]->topology = c.topology;  // MPI-3.1 7.4: dup keeps the topology
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
