// Intercommunicators (MPI-3.1 section 6.6): creation from two intracommunicators' leaders, merge,
// duplicate, split and the queries. Both groups share one runtime group (comm.hpp,
// add_intercomm), so the two sides agree on its contexts without further messages.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "algorithms/generic.hpp"
#include "call.hpp"
#include "comm.hpp"
#include "intercomm.hpp"

namespace touchstone::mpi {

namespace {

// The tag of the leaders' exchanges on an intercommunicator's collective context (the generic
// collectives use kGenericTag there).
constexpr int kLeaderTag = algorithms::kGenericTag + 1;

Comm& intercomm_of(RankState& rs, MPI_Comm comm) {
  Comm& c = comm_of(rs, comm);
  if (!c.inter) throw MpiError{MPI_ERR_COMM, fmt::format("communicator {} is not an intercommunicator", comm)};
  return c;
}

std::span<const std::byte> as_bytes(const std::vector<int>& v) { return std::as_bytes(std::span(v)); }

}  // namespace

std::vector<int> bcast_list(Proc& p, const Group& g, int root, std::vector<int> list) {
  int n = static_cast<int>(list.size());
  algorithms::bcast_binomial(p, g, root, std::as_writable_bytes(std::span(&n, 1)));
  list.resize(static_cast<std::size_t>(n));
  algorithms::bcast_binomial(p, g, root, std::as_writable_bytes(std::span(list)));
  return list;
}

MPI_Comm join_intercomm(RankState& rs, const Comm& local, const std::vector<int>& mine,
                        const std::vector<int>& theirs) {
  for (int w : theirs)
    if (std::find(mine.begin(), mine.end(), w) != mine.end())
      throw MpiError{MPI_ERR_ARG, fmt::format("world rank {} is in both groups: they must be disjoint", w)};
  const bool first = mine.front() < theirs.front();
  std::vector<int> both = first ? mine : theirs;
  const std::vector<int>& second = first ? theirs : mine;
  both.insert(both.end(), second.begin(), second.end());
  return add_intercomm(rs, local, rs.proc->group(std::move(both)), static_cast<int>((first ? mine : theirs).size()),
                       first);
}

bool is_intercomm(MPI_Comm c) {
  Proc* p = Proc::current();
  Session* s = session();
  if (!p || !s || !s->find_rank(p->rank())) return false;
  RankState& rs = s->rank(p->rank());
  if (!rs.usable()) return false;
  const Comm* x = find_comm(rs, c);
  return x && x->inter;
}

MPI_Comm dup_intercomm(RankState& rs, const Comm& c) {
  const int n = c.pt2pt.size();
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  const bool first = c.local_base == 0;
  return add_intercomm(rs, c, rs.proc->subgroup(c.pt2pt, all), first ? c.size : c.remote_size, first);
}

// The members of both groups with the same color, ordered by (key, rank) within each group: one
// split over both groups (ordered by key, then by the shared group's rank, which keeps each
// group's order), then each group's part. A color found in one group only gives MPI_COMM_NULL.
MPI_Comm split_intercomm(RankState& rs, const Comm& c, int color, int key) {
  Group g = rs.proc->split(c.coll, color == MPI_UNDEFINED ? -1 : color, key);
  if (color == MPI_UNDEFINED) return MPI_COMM_NULL;
  const int first_size = c.local_base == 0 ? c.size : c.remote_size;
  std::vector<int> first, second;  // ranks in g
  for (int i = 0; i < g.size(); ++i) (c.pt2pt.local_rank(g.world_rank(i)) < first_size ? first : second).push_back(i);
  if (first.empty() || second.empty()) return MPI_COMM_NULL;
  const int nfirst = static_cast<int>(first.size());
  first.insert(first.end(), second.begin(), second.end());
  return add_intercomm(rs, c, rs.proc->subgroup(g, first), nfirst, c.local_base == 0);
}

// The leaders swap their sides' chosen members on the collective context and broadcast the other
// side's to their own; the chosen members of both sides then make the new runtime group.
MPI_Comm create_intercomm(RankState& rs, const Comm& c, const std::vector<int>& members) {
  Proc& p = *rs.proc;
  std::vector<int> theirs;
  if (c.rank == 0) {
    theirs.resize(static_cast<std::size_t>(session()->nodes));
    const Status st = p.sendrecv(c.remote_base, kLeaderTag, as_bytes(members), c.remote_base, kLeaderTag,
                                 std::as_writable_bytes(std::span(theirs)), c.coll);
    theirs.resize(st.size / sizeof(int));
  }
  theirs = bcast_list(p, comm_of(rs, c.local_comm).coll, 0, std::move(theirs));
  if (members.empty() || theirs.empty() || std::find(members.begin(), members.end(), p.rank()) == members.end())
    return MPI_COMM_NULL;
  const bool first = c.local_base == 0;
  std::vector<int> both;  // ranks in c.pt2pt: the first side's chosen members, then the second's
  for (int w : first ? members : theirs) both.push_back(c.pt2pt.local_rank(w));
  const int first_size = static_cast<int>(both.size());
  for (int w : first ? theirs : members) both.push_back(c.pt2pt.local_rank(w));
  return add_intercomm(rs, c, p.subgroup(c.pt2pt, both), first_size, first);
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

// The local leaders swap their groups' members over peer_comm (with `tag`) and broadcast the
// other group's to their own; then every member of both groups makes the same runtime group.
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm* newintercomm) {
  return call("MPI_Intercomm_create", local_comm, [&](RankState& rs) {
    check_out(newintercomm, "newintercomm");
    Comm& local = comm_of(rs, local_comm);
    if (local.inter) throw MpiError{MPI_ERR_COMM, "the local communicator must be an intracommunicator"};
    if (local_leader < 0 || local_leader >= local.size)
      throw MpiError{MPI_ERR_RANK, fmt::format("local leader {} is out of range: the local communicator has {} rank(s)",
                                               local_leader, local.size)};
    Proc& p = *rs.proc;
    const std::vector<int> mine = local_members(local);
    std::vector<int> theirs;
    if (local.rank == local_leader) {
      const Comm& peer = comm_of(rs, peer_comm);
      check_tag(tag, false);
      check_peer(peer, remote_leader, false, "remote leader");
      if (remote_leader == MPI_PROC_NULL) throw MpiError{MPI_ERR_RANK, "the remote leader is MPI_PROC_NULL"};
      theirs.resize(static_cast<std::size_t>(session()->nodes));
      const int leader = peer.peer_to_group(remote_leader);
      const Status st =
          p.sendrecv(leader, tag, as_bytes(mine), leader, tag, std::as_writable_bytes(std::span(theirs)), peer.pt2pt);
      theirs.resize(st.size / sizeof(int));
    }
    theirs = bcast_list(p, local.coll, local_leader, std::move(theirs));
    *newintercomm = join_intercomm(rs, local, mine, theirs);
  });
}

// The leaders swap their groups' `high` flags; the merged group puts the low group first, or, when
// both said the same, the intercommunicator's first group.
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return call("MPI_Intercomm_merge", intercomm, [&](RankState& rs) {
    check_out(newintracomm, "newintracomm");
    Comm& c = intercomm_of(rs, intercomm);
    Proc& p = *rs.proc;
    std::vector<int> flags{high ? 1 : 0, 0};  // mine, theirs
    if (c.rank == 0)
      p.sendrecv(c.remote_base, kLeaderTag, std::as_bytes(std::span(flags).first(1)), c.remote_base, kLeaderTag,
                 std::as_writable_bytes(std::span(flags).subspan(1)), c.coll);
    const Comm& local = comm_of(rs, c.local_comm);
    algorithms::bcast_binomial(p, local.coll, 0, std::as_writable_bytes(std::span(flags).subspan(1)));
    const bool me_first = flags[0] == flags[1] ? c.local_base == 0 : flags[0] == 0;
    std::vector<int> merged = me_first ? local_members(c) : remote_members(c);
    const std::vector<int> rest = me_first ? remote_members(c) : local_members(c);
    merged.insert(merged.end(), rest.begin(), rest.end());
    *newintracomm = add_intracomm(rs, c, p.group(std::move(merged)));
  });
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  return call_setting("MPI_Comm_test_inter", comm, flag, "flag",
                      [&](RankState& rs) { return comm_of(rs, comm).inter; });
}

int MPI_Comm_remote_size(MPI_Comm comm, int* size) {
  return call_setting("MPI_Comm_remote_size", comm, size, "size",
                      [&](RankState& rs) { return intercomm_of(rs, comm).remote_size; });
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  return call_setting("MPI_Comm_remote_group", comm, group, "group",
                      [&](RankState& rs) { return add_group(rs, remote_members(intercomm_of(rs, comm))); });
}
