// MPI-4.0's sessions (chapter 11; docs/mpi.md, "Sessions"): a program, or a library inside one,
// uses MPI without MPI_Init. A session names two process sets, "mpi://WORLD" (the ranks of the run)
// and "mpi://SELF"; a group made from one gives, through MPI_Comm_create_from_group or
// MPI_Intercomm_create_from_groups, a communicator like any other. The members of such a call agree
// on its context without messages, as MPI_Comm_create_group's do: each makes the keyed subgroup
// (Proc::subgroup) of the machine's world with the group's members and a key from the string tag,
// and the runtime numbers the calls of one key and members alike on every member. MPI may be used
// while MPI_Init's world or a session is open (RankState::usable).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "comm.hpp"
#include "info.hpp"
#include "request.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace {

constexpr const char* kWorldPset = "mpi://WORLD";
constexpr const char* kSelfPset = "mpi://SELF";

MpiSession* find_session(RankState& rs, MPI_Session s) {
  const auto i = static_cast<std::size_t>(s) - 1;
  if (s <= 0 || i >= rs.mpi_sessions.size() || !rs.mpi_sessions[i]) return nullptr;
  return &*rs.mpi_sessions[i];
}

std::string session_text(MPI_Session s) {
  return s == MPI_SESSION_NULL ? "the session is MPI_SESSION_NULL" : fmt::format("session handle {} is not valid", s);
}

MpiSession& session_of(RankState& rs, MPI_Session s) {
  MpiSession* x = find_session(rs, s);
  if (!x) throw MpiError{MPI_ERR_SESSION, session_text(s)};
  return *x;
}

// An error of a call on session s goes to the session's error handler; one naming no valid session
// to the handler of errors that belong to no object (MPI_COMM_WORLD's, or MPI_ERRORS_ARE_FATAL).
int raise_on_session(RankState& rs, MPI_Session s, const char* call, const MpiError& e) {
  rs.proc->await_turn();
  const MpiSession* x = find_session(rs, s);
  if (!x) return raise(rs, MPI_COMM_NULL, call, e);
  return hand_to(rs, x->errhandler, s, MPI_COMM_NULL, call, e,
                 [&] { return fatal_text(rs, call, rs.proc->rank(), e); });
}

template <class Body>
[[gnu::always_inline]] inline int session_call(const char* name, MPI_Session s, Body&& body) {
  return object_call(
      name, false, [&](RankState& rs, const MpiError& e) { return raise_on_session(rs, s, name, e); },
      std::forward<Body>(body));
}

// Process set names are URIs, whose scheme and authority are not case-sensitive (RFC 3986 3.1, 3.2.2).
bool same_pset(const char* name, const char* pset) {
  return std::strlen(name) == std::strlen(pset) && std::equal(name, name + std::strlen(name), pset, [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(b);
         });
}

// The world ranks of process set `name`.
std::vector<int> pset_members(RankState& rs, const char* name) {
  if (!name) throw MpiError{MPI_ERR_ARG, "pset_name is a null pointer"};
  if (same_pset(name, kWorldPset)) {
    std::vector<int> all(static_cast<std::size_t>(settings().np));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  if (same_pset(name, kSelfPset)) return {rs.proc->rank()};
  throw MpiError{MPI_ERR_ARG,
                 fmt::format("there is no process set \"{}\" (the sets are {} and {})", name, kWorldPset, kSelfPset)};
}

std::string string_tag(const char* stringtag) {
  if (!stringtag) throw MpiError{MPI_ERR_ARG, "stringtag is a null pointer"};
  const std::size_t n = std::strlen(stringtag);
  if (n >= MPI_MAX_STRINGTAG_LEN)
    throw MpiError{MPI_ERR_ARG, fmt::format("stringtag of {} characters (at most MPI_MAX_STRINGTAG_LEN - 1 = {})", n,
                                            MPI_MAX_STRINGTAG_LEN - 1)};
  return stringtag;
}

// The runtime's key for the groups made with one string tag: its FNV-1a hash, with the low bit
// telling intercommunicators from intracommunicators of the same members.
std::uint64_t tag_key(const std::string& tag, bool inter) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char ch : tag) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  return h << 1 | (inter ? 1 : 0);
}

// What MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups take alike: the string tag,
// the info's hints and the error handler the communicator gets, all checked.
struct Creation {
  std::string tag;
  InfoPairs hints;
  Comm made_with;  // what the new communicator inherits: the handler the call names
};
Creation creation(RankState& rs, const char* stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Group group) {
  Creation c{string_tag(stringtag), info_of(rs, info), {}};
  check_errhandler(rs, errhandler);
  c.made_with.errhandler = errhandler;
  c.made_with.session = session_of_group(rs, group);
  return c;
}

// The caller's place in the group of world ranks `members`; MPI_ERR_GROUP when it is not a member.
void check_member(const RankState& rs, const std::vector<int>& members, const char* call, const char* which) {
  if (std::find(members.begin(), members.end(), rs.proc->rank()) == members.end())
    throw MpiError{MPI_ERR_GROUP,
                   fmt::format("rank {} called {} for a {}group it is not in", rs.proc->rank(), call, which)};
}

}  // namespace

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  return session_call("MPI_Session_init", MPI_SESSION_NULL, [&](RankState& rs) {
    check_out(session, "session");
    const InfoPairs& hints = info_of(rs, info);
    check_errhandler(rs, errhandler);
    MpiSession s;
    s.errhandler = errhandler;
    s.info = hints;
    // Every rank runs its program on one thread (MPI_Query_thread); a request for more is answered
    // with what is provided, as MPI_Init_thread answers it.
    set_info_value(s.info, "thread_level", "MPI_THREAD_SINGLE");
    if (rs.comms.size() < 3) rs.comms.resize(3);  // handles 1 and 2 stay MPI_COMM_WORLD's and MPI_COMM_SELF's
    rs.mpi_sessions.emplace_back(std::move(s));
    ++rs.sessions_open;
    *session = static_cast<MPI_Session>(rs.mpi_sessions.size());
  });
}

int MPI_Session_finalize(MPI_Session* session) {
  return session_call("MPI_Session_finalize", session ? *session : MPI_SESSION_NULL, [&](RankState& rs) {
    check_out(session, "session");
    MpiSession& s = session_of(rs, *session);
    if (s.buffer) settle_buffer(rs, *s.buffer);  // its buffered messages have left
    rs.mpi_sessions[static_cast<std::size_t>(*session) - 1].reset();
    --rs.sessions_open;
    *session = MPI_SESSION_NULL;
  });
}

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int* npset_names) {
  return session_call("MPI_Session_get_num_psets", session, [&](RankState& rs) {
    check_out(npset_names, "npset_names");
    session_of(rs, session);
    info_of(rs, info);
    *npset_names = 2;
  });
}

int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int* pset_len, char* pset_name) {
  return session_call("MPI_Session_get_nth_pset", session, [&](RankState& rs) {
    check_out(pset_len, "pset_len");
    session_of(rs, session);
    info_of(rs, info);
    if (n < 0 || n > 1)
      throw MpiError{MPI_ERR_ARG, fmt::format("process set {} does not exist (there are 2: 0 .. 1)", n)};
    const std::string name = n == 0 ? kWorldPset : kSelfPset;
    // A length of 0 asks for the length only (with the terminating null); otherwise the name is
    // written, cut to fit, and the length returned is the whole name's.
    if (*pset_len > 0) {
      check_out(pset_name, "pset_name");
      const std::size_t fit = std::min(name.size(), static_cast<std::size_t>(*pset_len) - 1);
      std::memcpy(pset_name, name.data(), fit);
      pset_name[fit] = '\0';
    } else if (*pset_len < 0) {
      throw MpiError{MPI_ERR_ARG, fmt::format("pset_len {} is negative", *pset_len)};
    }
    *pset_len = static_cast<int>(name.size()) + 1;
  });
}

int MPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  return session_call("MPI_Session_get_info", session, [&](RankState& rs) {
    check_out(info_used, "info_used");
    *info_used = new_info(rs, session_of(rs, session).info);
  });
}

int MPI_Session_get_pset_info(MPI_Session session, const char* pset_name, MPI_Info* info) {
  return session_call("MPI_Session_get_pset_info", session, [&](RankState& rs) {
    check_out(info, "info");
    session_of(rs, session);
    const std::size_t size = pset_members(rs, pset_name).size();
    *info = new_info(rs, {{"mpi_size", std::to_string(size)}});
  });
}

int MPI_Group_from_session_pset(MPI_Session session, const char* pset_name, MPI_Group* newgroup) {
  return session_call("MPI_Group_from_session_pset", session, [&](RankState& rs) {
    check_out(newgroup, "newgroup");
    session_of(rs, session);
    *newgroup = add_group(rs, pset_members(rs, pset_name), session);
  });
}

int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm* newcomm) {
  return call("MPI_Comm_create_from_group", MPI_COMM_NULL, [&](RankState& rs) {
    check_out(newcomm, "newcomm");
    const Creation made = creation(rs, stringtag, info, errhandler, group);
    const std::vector<int> members = group_of(rs, group);
    if (members.empty()) {
      *newcomm = MPI_COMM_NULL;
      return;
    }
    check_member(rs, members, "MPI_Comm_create_from_group", "");
    Proc& p = *rs.proc;
    *newcomm = add_intracomm(rs, made.made_with, p.subgroup(p.world(), members, tag_key(made.tag, false)));
    Comm& c = comm_of(rs, *newcomm);
    c.info = made.hints;
    c.provenance = fmt::format("MPI_Comm_create_from_group, tag \"{}\"", made.tag);
  });
}

// Both sides list the two groups alike, the one holding the lower world rank first (as
// MPI_Intercomm_create does); the leaders need no exchange here, only to be valid ranks.
int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader,
                                     const char* stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                     MPI_Comm* newintercomm) {
  return call("MPI_Intercomm_create_from_groups", MPI_COMM_NULL, [&](RankState& rs) {
    check_out(newintercomm, "newintercomm");
    const Creation made = creation(rs, stringtag, info, errhandler, local_group);
    const std::vector<int> local = group_of(rs, local_group);
    const std::vector<int> remote = group_of(rs, remote_group);
    if (local.empty() || remote.empty())
      throw MpiError{MPI_ERR_GROUP, "the local and the remote group must not be empty"};
    check_member(rs, local, "MPI_Intercomm_create_from_groups", "local ");
    auto check_leader = [](int leader, std::size_t size, const char* which) {
      if (leader < 0 || static_cast<std::size_t>(leader) >= size)
        throw MpiError{MPI_ERR_RANK, fmt::format("{} leader {} is out of range: the {} group has {} rank(s)", which,
                                                 leader, which, size)};
    };
    check_leader(local_leader, local.size(), "local");
    check_leader(remote_leader, remote.size(), "remote");
    std::vector<int> a = local, b = remote;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<int> shared;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
    if (!shared.empty())
      throw MpiError{MPI_ERR_ARG,
                     fmt::format("world rank {} is in both groups: they must be disjoint", shared.front())};
    const bool first = *std::min_element(local.begin(), local.end()) < *std::min_element(remote.begin(), remote.end());
    std::vector<int> both = first ? local : remote;
    const std::vector<int>& second = first ? remote : local;
    both.insert(both.end(), second.begin(), second.end());
    Proc& p = *rs.proc;
    const auto first_size = static_cast<int>((first ? local : remote).size());
    *newintercomm =
        add_intercomm(rs, made.made_with, p.subgroup(p.world(), both, tag_key(made.tag, true)), first_size, first);
    Comm& c = comm_of(rs, *newintercomm);
    c.info = made.hints;
    c.provenance = fmt::format("MPI_Intercomm_create_from_groups, tag \"{}\"", made.tag);
  });
}

// MPI-4.1's buffer of a session, for the buffered sends of its communicators that have none of
// their own (bsend.cpp).
int MPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
  return session_call("MPI_Session_attach_buffer", session, [&](RankState& rs) {
    MpiSession& s = session_of(rs, session);
    s.buffer = new_buffer(buffer, size, s.buffer != nullptr);
  });
}

int MPI_Session_detach_buffer(MPI_Session session, void* buffer_addr, int* size) {
  return session_call("MPI_Session_detach_buffer", session,
                      [&](RankState& rs) { detach_buffer(rs, session_of(rs, session).buffer, buffer_addr, size); });
}

int MPI_Session_flush_buffer(MPI_Session session) {
  return session_call("MPI_Session_flush_buffer", session, [&](RankState& rs) {
    if (const auto& b = session_of(rs, session).buffer) flush_buffer(rs, *b);
  });
}

int MPI_Session_iflush_buffer(MPI_Session session, MPI_Request* request) {
  return session_call("MPI_Session_iflush_buffer", session, [&](RankState& rs) {
    check_out(request, "request");
    *request = iflush_request(rs, session_of(rs, session).buffer);
  });
}

int MPI_Session_create_errhandler(MPI_Session_errhandler_function* session_errhandler_fn, MPI_Errhandler* errhandler) {
  return session_call("MPI_Session_create_errhandler", MPI_SESSION_NULL, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    check_out(reinterpret_cast<const void*>(session_errhandler_fn), "session_errhandler_fn");
    // A session's handler takes an MPI_Session*, a communicator's an MPI_Comm*: both are int handles.
    *errhandler = add_errhandler(rs, reinterpret_cast<MPI_Comm_errhandler_function*>(session_errhandler_fn));
  });
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
  return session_call("MPI_Session_set_errhandler", session, [&](RankState& rs) {
    MpiSession& s = session_of(rs, session);
    check_errhandler(rs, errhandler);
    s.errhandler = errhandler;
  });
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
  return session_call("MPI_Session_get_errhandler", session, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    *errhandler = session_of(rs, session).errhandler;
  });
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  RankState& rs = state("MPI_Session_call_errhandler", false);
  if (!find_session(rs, session))
    return raise_on_session(rs, session, "MPI_Session_call_errhandler",
                            MpiError{MPI_ERR_SESSION, session_text(session)});
  // Raised through the session's handler; the call returns MPI_SUCCESS when the handler returns.
  raise_on_session(rs, session, "MPI_Session_call_errhandler",
                   MpiError{errorcode, fmt::format("the program raised error code {}", errorcode)});
  return MPI_SUCCESS;
}
