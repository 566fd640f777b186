// MPI communicators, groups and error handlers (docs/mpi.md): every communicator is a runtime
// group for point-to-point messages and another for its collectives. Intercommunicators are in
// intercomm.cpp, attributes in attributes.cpp, info objects in info.cpp.
#include <algorithm>
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
#include "comm.hpp"
#include "info.hpp"
#include "request.hpp"

namespace touchstone::mpi {

MPI_Group add_group(RankState& rs, std::vector<int> world_ranks, MPI_Session session) {
  if (world_ranks.empty()) return MPI_GROUP_EMPTY;
  rs.groups.emplace_back(std::move(world_ranks));
  const auto h = static_cast<MPI_Group>(kFirstGroup + rs.groups.size() - 1);  // never given out again
  made(rs, 'g', h);
  if (session != MPI_SESSION_NULL) rs.group_sessions[h] = session;
  return h;
}

MPI_Session session_of_group(const RankState& rs, MPI_Group g) {
  const auto it = rs.group_sessions.find(g);
  return it == rs.group_sessions.end() ? MPI_SESSION_NULL : it->second;
}

const std::vector<int>& group_of(RankState& rs, MPI_Group g) {
  static const std::vector<int> empty;
  if (g == MPI_GROUP_EMPTY) return empty;
  const int i = g - kFirstGroup;
  if (i < 0 || i >= static_cast<int>(rs.groups.size()) || !rs.groups[static_cast<std::size_t>(i)])
    throw MpiError{MPI_ERR_GROUP, fmt::format("group {} is not valid", g)};
  return *rs.groups[static_cast<std::size_t>(i)];
}

std::vector<int> local_members(const Comm& c) {
  const auto m = c.pt2pt.members().subspan(static_cast<std::size_t>(c.local_base), static_cast<std::size_t>(c.size));
  return {m.begin(), m.end()};
}

std::vector<int> remote_members(const Comm& c) {
  if (!c.inter) return {};
  const auto m =
      c.pt2pt.members().subspan(static_cast<std::size_t>(c.remote_base), static_cast<std::size_t>(c.remote_size));
  return {m.begin(), m.end()};
}

MPI_Comm add_comm(RankState& rs, std::unique_ptr<Comm> c) {
  rs.comms.push_back(std::move(c));
  const auto h = static_cast<MPI_Comm>(rs.comms.size() - 1);
  made(rs, 'c', h);
  return h;
}

namespace {
std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}
}  // namespace

MPI_Comm add_intracomm(RankState& rs, const Comm& parent, Group pt2pt) {
  Proc& p = *rs.proc;
  auto c = std::make_unique<Comm>();
  c->size = pt2pt.size();
  c->rank = pt2pt.local_rank(p.rank());
  c->coll = p.subgroup(pt2pt, iota(c->size));
  c->pt2pt = std::move(pt2pt);
  c->errhandler = parent.errhandler;
  c->session = parent.session;
  c->provenance = made_from(rs, parent);
  const auto m = c->pt2pt.members();
  c->world_identity = c->size == p.size() && std::is_sorted(m.begin(), m.end());
  return add_comm(rs, std::move(c));
}

MPI_Comm add_intercomm(RankState& rs, const Comm& parent, Group both, int first_size, bool first) {
  Proc& p = *rs.proc;
  auto c = std::make_unique<Comm>();
  const int n = both.size();
  c->inter = true;
  c->local_base = first ? 0 : first_size;
  c->remote_base = first ? first_size : 0;
  c->size = first ? first_size : n - first_size;
  c->remote_size = n - c->size;
  c->rank = both.local_rank(p.rank()) - c->local_base;
  // Both sides make the same subgroup of `both` (the same context); each side then its own part,
  // whose errors the intercommunicator's collectives report as their own.
  c->coll = p.subgroup(both, iota(n));
  std::vector<int> mine(static_cast<std::size_t>(c->size));
  std::iota(mine.begin(), mine.end(), c->local_base);
  Comm quiet;
  quiet.errhandler = MPI_ERRORS_RETURN;
  c->local_comm = add_intracomm(rs, quiet, p.subgroup(c->coll, mine));
  c->pt2pt = std::move(both);
  c->errhandler = parent.errhandler;
  c->session = parent.session;
  c->provenance = made_from(rs, parent);
  return add_comm(rs, std::move(c));
}

void free_comm(RankState& rs, MPI_Comm h) {
  delete_attributes(rs, AttrKind::comm, h);  // a failing delete callback leaves the communicator
  auto& c = rs.comms[static_cast<std::size_t>(h)];
  if (c->inter) rs.comms[static_cast<std::size_t>(c->local_comm)].reset();
  c.reset();
  if (h == rs.parent) rs.parent = MPI_COMM_NULL;  // MPI_Comm_get_parent gives MPI_COMM_NULL from now on
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  return call_setting(
      "MPI_Comm_rank", comm, rank, "rank", [&](RankState& rs) { return comm_of(rs, comm).rank; }, Reach::own);
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  return call_setting(
      "MPI_Comm_size", comm, size, "size", [&](RankState& rs) { return comm_of(rs, comm).size; }, Reach::own);
}

namespace {
// MPI_Comm_dup and its forms: the same group(s) in new contexts (no messages: every member makes
// the same runtime groups in the same order), the attributes copied through their callbacks, and
// the parent's info unless `info` replaces it.
MPI_Comm dup(RankState& rs, MPI_Comm comm, const InfoPairs* info) {
  Comm& c = comm_of(rs, comm);
  const MPI_Comm h = c.inter ? dup_intercomm(rs, c) : add_intracomm(rs, c, rs.proc->subgroup(c.pt2pt, iota(c.size)));
  Comm& n = *rs.comms[static_cast<std::size_t>(h)];
  n.info = info ? *info : comm_of(rs, comm).info;
  n.topology = comm_of(rs, comm).topology;  // MPI-3.1 7.4: a duplicate keeps the topology
  try {
    copy_attributes(rs, AttrKind::comm, comm, h);
  } catch (const MpiError&) {
    free_comm(rs, h);
    throw;
  }
  return h;
}
}  // namespace

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return call_setting("MPI_Comm_dup", comm, newcomm, "newcomm", [&](RankState& rs) { return dup(rs, comm, nullptr); });
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return call("MPI_Comm_dup_with_info", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    const InfoPairs hints = info_of(rs, info);
    *newcomm = dup(rs, comm, &hints);
  });
}

namespace {
// MPI_Comm_idup and MPI_Comm_idup_with_info: the duplicate needs no messages, so the request is
// complete when it is returned.
MPI_Request completed_dup(RankState& rs, MPI_Comm comm, const InfoPairs* info, MPI_Comm* newcomm) {
  *newcomm = dup(rs, comm, info);
  auto q = std::make_unique<Req>();
  q->done = true;
  q->status = empty_status();
  q->comm = comm;
  return new_req(rs, std::move(q));
}
}  // namespace

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return call("MPI_Comm_idup", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    check_out(request, "request");
    *request = completed_dup(rs, comm, nullptr, newcomm);
  });
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  return call("MPI_Comm_idup_with_info", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    check_out(request, "request");
    const InfoPairs hints = info_of(rs, info);
    *request = completed_dup(rs, comm, &hints, newcomm);
  });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return call("MPI_Comm_split", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    Comm& c = comm_of(rs, comm);
    if (color < 0 && color != MPI_UNDEFINED)
      throw MpiError{MPI_ERR_ARG, fmt::format("color {} is negative and not MPI_UNDEFINED", color)};
    if (c.inter) {
      check_collective(rs, comm, "MPI_Comm_split");
      *newcomm = split_intercomm(rs, c, color, key);
      return;
    }
    check_collective(rs, comm, "MPI_Comm_split");
    Group g = rs.proc->split(c.coll, color == MPI_UNDEFINED ? -1 : color, key);
    *newcomm = color == MPI_UNDEFINED ? MPI_COMM_NULL : add_intracomm(rs, c, std::move(g));
    if (*newcomm != MPI_COMM_NULL) comm_of(rs, *newcomm).provenance += fmt::format(", color {}", color);
  });
}

namespace {
Comm& intracomm_of(RankState& rs, MPI_Comm comm) {
  Comm& c = comm_of(rs, comm);
  if (c.inter) throw MpiError{MPI_ERR_COMM, fmt::format("communicator {} is an intercommunicator", comm)};
  return c;
}

// The ranks in c of a group's members; MPI_ERR_GROUP when one is not in c.
std::vector<int> ranks_in(RankState& rs, const Comm& c, MPI_Group group) {
  std::vector<int> local;
  for (int w : group_of(rs, group)) {
    const int l = c.pt2pt.local_rank(w);
    if (l < 0) throw MpiError{MPI_ERR_GROUP, fmt::format("world rank {} of the group is not in the communicator", w)};
    local.push_back(l);
  }
  return local;
}
}  // namespace

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return call("MPI_Comm_create", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    Comm& c = comm_of(rs, comm);
    if (c.inter) {
      const std::vector<int> members = group_of(rs, group);
      const std::vector<int> mine = local_members(c);
      for (int w : members)
        if (std::find(mine.begin(), mine.end(), w) == mine.end())
          throw MpiError{MPI_ERR_GROUP, fmt::format("world rank {} of the group is not in the local group", w)};
      *newcomm = create_intercomm(rs, c, members);
      return;
    }
    const std::vector<int> local = ranks_in(rs, c, group);
    check_collective(rs, comm, "MPI_Comm_create");
    // Every member of comm takes part (MPI_Comm_create is collective): a barrier keeps the
    // semantics' synchronization without a group exchange, as every member passes the same group.
    rs.proc->barrier(c.coll);
    if (std::find(local.begin(), local.end(), c.rank) == local.end()) {
      *newcomm = MPI_COMM_NULL;
      return;
    }
    *newcomm = add_intracomm(rs, c, rs.proc->subgroup(c.pt2pt, local));
  });
}

// Collective over the group's members only: they agree on the new context without messages (the
// runtime numbers groups made from one parent alike on every member), so the tag, which tells
// concurrent calls apart in MPI, only has to be valid.
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return call("MPI_Comm_create_group", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    Comm& c = intracomm_of(rs, comm);
    check_tag(tag, false);
    const std::vector<int> local = ranks_in(rs, c, group);
    if (std::find(local.begin(), local.end(), c.rank) == local.end()) {
      if (group != MPI_GROUP_EMPTY)
        throw MpiError{MPI_ERR_GROUP,
                       fmt::format("rank {} called MPI_Comm_create_group for a group it is not in", c.rank)};
      *newcomm = MPI_COMM_NULL;
      return;
    }
    // Made from the collective group, not pt2pt as duplicates are: an MPI_Comm_idup of comm
    // pending in the other order on some members must not take this context.
    *newcomm = add_intracomm(rs, c, rs.proc->subgroup(c.coll, local));
  });
}

// A shared-memory node of the emulated machine is one of its nodes (the topology's processors);
// every VP runs on a node of its own, so MPI_COMM_TYPE_SHARED gives each rank a communicator of
// itself alone.
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return call("MPI_Comm_split_type", comm, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    Comm& c = intracomm_of(rs, comm);
    info_of(rs, info);
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
      throw MpiError{MPI_ERR_ARG,
                     fmt::format("split type {} is not MPI_COMM_TYPE_SHARED or MPI_UNDEFINED", split_type)};
    check_collective(rs, comm, "MPI_Comm_split_type");
    const int node = rs.proc->rank();  // the VP's node
    Group g = rs.proc->split(c.coll, split_type == MPI_UNDEFINED ? -1 : node, key);
    *newcomm = split_type == MPI_UNDEFINED ? MPI_COMM_NULL : add_intracomm(rs, c, std::move(g));
  });
}

int MPI_Comm_free(MPI_Comm* comm) {
  return call("MPI_Comm_free", comm ? *comm : MPI_COMM_NULL, [&](RankState& rs) {
    check_out(comm, "comm");
    comm_of(rs, *comm);
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
      throw MpiError{MPI_ERR_COMM, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed"};
    free_comm(rs, *comm);
    *comm = MPI_COMM_NULL;
  });
}

namespace {
// MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two lists of world ranks.
int compare_members(std::vector<int> a, std::vector<int> b) {
  if (a == b) return MPI_IDENT;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b ? MPI_SIMILAR : MPI_UNEQUAL;
}
}  // namespace

// Intercommunicators compare both groups: congruent when both are the same in order, similar when
// both hold the same members; an intercommunicator and an intracommunicator are unequal.
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return call("MPI_Comm_compare", comm1, [&](RankState& rs) {
    check_out(result, "result");
    const Comm& a = comm_of(rs, comm1);
    const Comm& b = comm_of(rs, comm2);
    if (comm1 == comm2) {
      *result = MPI_IDENT;
      return;
    }
    if (a.inter != b.inter) {
      *result = MPI_UNEQUAL;
      return;
    }
    const int local = compare_members(local_members(a), local_members(b));
    const int remote = compare_members(remote_members(a), remote_members(b));
    const int worst = std::max(local, remote);
    *result = worst == MPI_IDENT ? MPI_CONGRUENT : worst;
  });
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return call_setting("MPI_Comm_group", comm, group, "group", [&](RankState& rs) {
    const Comm& c = comm_of(rs, comm);
    return add_group(rs, local_members(c), c.session);
  });
}

int MPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  return call("MPI_Comm_set_name", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    if (!comm_name) throw MpiError{MPI_ERR_ARG, "the name is a null pointer"};
    // Longer names are truncated to what MPI_Comm_get_name can return.
    c.name = std::string(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  });
}

int MPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  return call("MPI_Comm_get_name", comm, [&](RankState& rs) {
    check_out(comm_name, "comm_name");
    check_out(resultlen, "resultlen");
    const Comm& c = comm_of(rs, comm);
    const std::string n = c.name                   ? *c.name
                          : comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD"
                          : comm == MPI_COMM_SELF  ? "MPI_COMM_SELF"
                                                   : "";
    std::memcpy(comm_name, n.c_str(), n.size() + 1);
    *resultlen = static_cast<int>(n.size());
  });
}

// Touchstone uses no communicator hints, so it keeps every hint it is given and returns them all.
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  return call("MPI_Comm_set_info", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    merge_info(c.info, info_of(rs, info));
  });
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  return call_setting("MPI_Comm_get_info", comm, info_used, "info_used",
                      [&](RankState& rs) { return new_info(rs, comm_of(rs, comm).info); });
}

int MPI_Group_size(MPI_Group group, int* size) {
  return call_setting("MPI_Group_size", MPI_COMM_WORLD, size, "size",
                      [&](RankState& rs) { return static_cast<int>(group_of(rs, group).size()); });
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  return call("MPI_Group_rank", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(rank, "rank");
    const auto& g = group_of(rs, group);
    const auto it = std::find(g.begin(), g.end(), rs.proc->rank());
    *rank = it == g.end() ? MPI_UNDEFINED : static_cast<int>(it - g.begin());
  });
}

namespace {
// The group's members picked by rank, in the given order; MPI_ERR_RANK for a rank out of range or
// named twice.
std::vector<int> pick(const std::vector<int>& g, const std::vector<int>& ranks) {
  std::vector<bool> seen(g.size(), false);
  std::vector<int> out;
  for (int r : ranks) {
    if (r < 0 || r >= static_cast<int>(g.size()))
      throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is not in the group of {}", r, g.size())};
    if (seen[static_cast<std::size_t>(r)]) throw MpiError{MPI_ERR_RANK, fmt::format("rank {} appears twice", r)};
    seen[static_cast<std::size_t>(r)] = true;
    out.push_back(g[static_cast<std::size_t>(r)]);
  }
  return out;
}

// The group's members whose ranks are not in `ranks` (checked as pick does), in group order.
std::vector<int> without(const std::vector<int>& g, const std::vector<int>& ranks) {
  const std::vector<int> gone = pick(g, ranks);
  std::vector<int> kept;
  for (int w : g)
    if (std::find(gone.begin(), gone.end(), w) == gone.end()) kept.push_back(w);
  return kept;
}

// The ranks named by MPI_Group_range_incl/excl's (first, last, stride) triplets, in order.
std::vector<int> expand_ranges(int n, const int ranges[][3], int group_size) {
  if (n < 0) throw MpiError{MPI_ERR_ARG, fmt::format("n = {} is negative", n)};
  if (n > 0) check_out(ranges, "ranges");
  std::vector<int> out;
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) throw MpiError{MPI_ERR_ARG, fmt::format("range {} has stride 0", i)};
    for (const int end : {first, last})
      if (end < 0 || end >= group_size)
        throw MpiError{MPI_ERR_RANK, fmt::format("range {} names rank {}, not in the group of {}", i, end, group_size)};
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) continue;  // empty
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) out.push_back(static_cast<int>(r));
  }
  return out;
}

bool contains(const std::vector<int>& g, int w) { return std::find(g.begin(), g.end(), w) != g.end(); }

// A group made from two others by `make(a, b)` (the set operations).
template <class Make>
int group_op(const char* name, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, Make make) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newgroup, "newgroup");
    const std::vector<int> a = group_of(rs, group1), b = group_of(rs, group2);
    *newgroup = add_group(rs, make(a, b), session_of_group(rs, group1));
  });
}
}  // namespace

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return call("MPI_Group_incl", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newgroup, "newgroup");
    if (n < 0) throw MpiError{MPI_ERR_ARG, fmt::format("n = {} is negative", n)};
    if (n > 0) check_out(ranks, "ranks");
    *newgroup =
        add_group(rs, pick(group_of(rs, group), std::vector<int>(ranks, ranks + n)), session_of_group(rs, group));
  });
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return call("MPI_Group_excl", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newgroup, "newgroup");
    if (n < 0) throw MpiError{MPI_ERR_ARG, fmt::format("n = {} is negative", n)};
    if (n > 0) check_out(ranks, "ranks");
    *newgroup =
        add_group(rs, without(group_of(rs, group), std::vector<int>(ranks, ranks + n)), session_of_group(rs, group));
  });
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return call("MPI_Group_range_incl", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newgroup, "newgroup");
    const auto& g = group_of(rs, group);
    *newgroup =
        add_group(rs, pick(g, expand_ranges(n, ranges, static_cast<int>(g.size()))), session_of_group(rs, group));
  });
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return call("MPI_Group_range_excl", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newgroup, "newgroup");
    const auto& g = group_of(rs, group);
    *newgroup =
        add_group(rs, without(g, expand_ranges(n, ranges, static_cast<int>(g.size()))), session_of_group(rs, group));
  });
}

// The set operations order their result as MPI-3.1 section 6.3.2 says: the first group's members
// in its order, then (union) the second's that are not in the first.
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return group_op("MPI_Group_union", group1, group2, newgroup,
                  [](const std::vector<int>& a, const std::vector<int>& b) {
                    std::vector<int> out = a;
                    for (int w : b)
                      if (!contains(a, w)) out.push_back(w);
                    return out;
                  });
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return group_op("MPI_Group_intersection", group1, group2, newgroup,
                  [](const std::vector<int>& a, const std::vector<int>& b) {
                    std::vector<int> out;
                    for (int w : a)
                      if (contains(b, w)) out.push_back(w);
                    return out;
                  });
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return group_op("MPI_Group_difference", group1, group2, newgroup,
                  [](const std::vector<int>& a, const std::vector<int>& b) {
                    std::vector<int> out;
                    for (int w : a)
                      if (!contains(b, w)) out.push_back(w);
                    return out;
                  });
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  return call_setting("MPI_Group_compare", MPI_COMM_WORLD, result, "result",
                      [&](RankState& rs) { return compare_members(group_of(rs, group1), group_of(rs, group2)); });
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  return call("MPI_Group_translate_ranks", MPI_COMM_WORLD, [&](RankState& rs) {
    if (n < 0) throw MpiError{MPI_ERR_ARG, fmt::format("n = {} is negative", n)};
    if (n > 0) check_out(ranks1, "ranks1"), check_out(ranks2, "ranks2");
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
    check_out(group, "group");
    group_of(rs, *group);
    if (*group != MPI_GROUP_EMPTY) rs.groups[static_cast<std::size_t>(*group - kFirstGroup)].reset();
    *group = MPI_GROUP_NULL;
  });
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler) {
  return call_setting("MPI_Comm_create_errhandler", MPI_COMM_WORLD, errhandler, "errhandler",
                      [&](RankState& rs) {
                        check_out(reinterpret_cast<const void*>(function), "function");
                        return add_errhandler(rs, function);
                      });
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return call("MPI_Comm_set_errhandler", comm, [&](RankState& rs) {
    Comm& c = comm_of(rs, comm);
    check_errhandler(rs, errhandler);
    c.errhandler = errhandler;
  });
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return call_setting("MPI_Comm_get_errhandler", comm, errhandler, "errhandler",
                      [&](RankState& rs) { return comm_of(rs, comm).errhandler; });
}

// MPI-1's names of the three calls above, removed by MPI-3.0 and kept for older programs.
int MPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  return MPI_Comm_create_errhandler(function, errhandler);
}
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return MPI_Comm_set_errhandler(comm, errhandler); }
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) { return MPI_Comm_get_errhandler(comm, errhandler); }

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  return call("MPI_Errhandler_free", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    check_errhandler(rs, *errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;  // handlers live as long as the run
  });
}
