// Communicators and groups shared by comm.cpp, intercomm.cpp and intercomm_coll.cpp. Internal.
#pragma once
#include <string>
#include <vector>

#include "call.hpp"
#include "state.hpp"

namespace touchstone::mpi {

/// The MPI function `name` on `comm` whose result is one value: *out (the argument out_name, checked
/// not null first) becomes value(rank state). Inlined, so that the call site is the program's (call.hpp).
template <class T, class Value>
[[gnu::always_inline]] inline int call_setting(const char* name, MPI_Comm comm, T* out, const char* out_name,
                                               Value value, Reach reach = Reach::shared) {
  return call(
      name, comm,
      [&](RankState& rs) {
        check_out(out, out_name);
        *out = value(rs);
      },
      true, reach);
}

/// A new group handle for these world ranks (MPI_GROUP_EMPTY when there are none), of `session`
/// when made from a session's process set or from a group of it.
MPI_Group add_group(RankState& rs, std::vector<int> world_ranks, MPI_Session session = MPI_SESSION_NULL);
/// The session group g was made from, or MPI_SESSION_NULL.
MPI_Session session_of_group(const RankState& rs, MPI_Group g);
/// The world ranks of group handle g; MpiError MPI_ERR_GROUP when g is not valid.
const std::vector<int>& group_of(RankState& rs, MPI_Group g);

/// The world ranks of a communicator's local group, and of an intercommunicator's remote group.
std::vector<int> local_members(const Comm& c);
std::vector<int> remote_members(const Comm& c);

/// Stores c as a new communicator handle.
MPI_Comm add_comm(RankState& rs, std::unique_ptr<Comm> c);
/// A new intracommunicator over the runtime group `pt2pt` (its collectives get a context of their own),
/// with the parent's error handler.
MPI_Comm add_intracomm(RankState& rs, const Comm& parent, Group pt2pt);
/// A new intercommunicator over `both`, which holds the first group's `first_size` members, then
/// the second group's; `first` says which of them is the caller's.
MPI_Comm add_intercomm(RankState& rs, const Comm& parent, Group both, int first_size, bool first);
/// Frees communicator handle h (its attributes deleted first).
void free_comm(RankState& rs, MPI_Comm h);

/// Broadcasts a list of ints from `root` over the group g (its length first; intercomm.cpp).
std::vector<int> bcast_list(Proc& p, const Group& g, int root, std::vector<int> list);
/// The intercommunicator of `local`'s members `mine` (world ranks) and the disjoint group `theirs`,
/// which every member of both makes alike: one runtime group, the side whose first member has the
/// lower world rank first. MPI_ERR_ARG when the groups share a rank (intercomm.cpp).
MPI_Comm join_intercomm(RankState& rs, const Comm& local, const std::vector<int>& mine, const std::vector<int>& theirs);
/// What a message of MPI_COMM_WORLD's collective context with this tag, sent to world rank dst, is
/// when it is one of MPI_Comm_connect and MPI_Comm_accept's (dynamic.cpp); "" otherwise.
std::string connection_message(int tag, int dst);
/// MPI_Comm_dup and MPI_Comm_split of an intercommunicator (intercomm.cpp).
MPI_Comm dup_intercomm(RankState& rs, const Comm& c);
MPI_Comm split_intercomm(RankState& rs, const Comm& c, int color, int key);
/// MPI_Comm_create of an intercommunicator: `members` (world ranks) of this side, the other side's
/// choice learned from its leader.
MPI_Comm create_intercomm(RankState& rs, const Comm& c, const std::vector<int>& members);

}  // namespace touchstone::mpi
