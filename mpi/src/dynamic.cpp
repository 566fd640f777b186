// Dynamic processes (MPI-3.1 chapter 10): starting processes (MPI_Comm_spawn, 10.3), and
// establishing communication between groups that share no communicator (10.4): ports,
// MPI_Comm_accept and MPI_Comm_connect, published service names, and MPI_Comm_disconnect.
//
// Every process runs on a VP of the machine: -np's ranks from the start, and a spawn's on the VPs
// beyond them, which wait for it (Proc::await_start); a rank is named by its VP. A port is a name
// that says which VP opened it, and a connection is a request from the connecting root to that VP
// and its reply, carried as messages of the machine on the group of every VP (whose context no
// communicator has, so no receive of the program's can match them), each port with a tag of its
// own so that a rank's ports are accepted in any order. Both sides then broadcast the other side's
// members to their own and make the intercommunicator as MPI_Intercomm_create does.
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <sys/socket.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "comm.hpp"
#include "info.hpp"
#include "intercomm.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::mpi {

namespace {

constexpr std::string_view kPortPrefix = "touchstone-port:";
// The tags of the requests to port n (kPortTag + n, to the rank that opened it), of the replies,
// and of MPI_Comm_join's message to the side that came first.
constexpr int kPortTag = 0x50000000;
constexpr int kMaxPorts = 0x0fffffff;
constexpr int kReplyTag = 0x4f000000;
constexpr int kJoinTag = 0x4f000001;
// The first spawned process's word to the spawning root: the new MPI_COMM_WORLD is up.
constexpr int kSpawnedTag = 0x4f000002;
constexpr std::string_view kJoinToken = "touchstone-join:";

struct Port {
  int owner = -1;  // the world rank that opened it
  int number = 0;  // the owner's count of ports opened before it
};

// The port a name stands for, or nothing when the name is not one MPI_Open_port gives.
std::optional<Port> parse_port(std::string_view name, int np) {
  if (!name.starts_with(kPortPrefix)) return std::nullopt;
  name.remove_prefix(kPortPrefix.size());
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto owner = number_in_range(name.substr(0, colon), 0, np - 1);
  const auto number = number_in_range(name.substr(colon + 1), 0, kMaxPorts - 1);
  if (!owner || !number) return std::nullopt;
  return Port{*owner, *number};
}

// A string argument that must be given: MPI_ERR_ARG when null.
std::string text_of(const char* s, const char* what) {
  check_out(s, what);
  return s;
}

// The ports and names are the process's (Session): a split run's processes would each see only
// their own ranks' names.
void check_one_process(const char* what) {
  if (session()->split)
    throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                   fmt::format("{} is not supported in a run split over processes: published names are kept per "
                               "process",
                               what)};
}

// The group of every VP, where the roots' requests and replies travel: group rank = VP (its
// context is Session::machine_context).
Group machine_group(Proc& p) { return p.world(); }

Group rendezvous(RankState& rs) {
  if (!rs.initialized)
    throw MpiError{
        MPI_ERR_UNSUPPORTED_OPERATION,
        "ports connect the ranks of MPI_COMM_WORLD: call MPI_Init before MPI_Comm_accept or MPI_Comm_connect"};
  return machine_group(*rs.proc);
}

// MPI_Comm_accept's or MPI_Comm_connect's checks of the arguments every member gives alike.
Comm& connecting_comm(RankState& rs, const char* call, MPI_Comm comm, int root, MPI_Comm* newcomm) {
  check_out(newcomm, "newcomm");
  Comm& c = comm_of(rs, comm);
  if (c.inter) throw MpiError{MPI_ERR_COMM, "the communicator must be an intracommunicator"};
  check_root(c, root);
  check_collective(rs, comm, call);
  return c;
}

// The root's outcome, broadcast over the local group: an error class (0 for none), then, without
// one, the other side's members. Every member returns the root's error; the root's says why.
std::vector<int> share_outcome(RankState& rs, const Comm& c, int root, std::vector<int> outcome,
                               const std::optional<MpiError>& failed) {
  outcome = bcast_list(*rs.proc, c.coll, root, std::move(outcome));
  if (failed) throw *failed;
  if (outcome.front() != 0)
    throw MpiError{outcome.front(), fmt::format("the call failed at its root, rank {} of the communicator", root)};
  outcome.erase(outcome.begin());
  return outcome;
}

// An IP socket's two addresses, its own and its peer's, and the same seen from the other end: the
// ends of one connection in this process find each other by them. Empty for other sockets.
std::pair<std::string, std::string> socket_ends(int fd) {
  sockaddr_storage own{}, peer{};
  socklen_t own_len = sizeof own, peer_len = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&own), &own_len) != 0)
    throw MpiError{MPI_ERR_ARG, fmt::format("fd {} is not a socket: {}", fd, std::strerror(errno))};
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0)
    throw MpiError{MPI_ERR_ARG, fmt::format("socket {} is not connected: {}", fd, std::strerror(errno))};
  if (own.ss_family != AF_INET && own.ss_family != AF_INET6) return {};
  const std::string a(reinterpret_cast<const char*>(&own), own_len), b(reinterpret_cast<const char*>(&peer), peer_len);
  return {a + '|' + b, b + '|' + a};
}

// Another kind of socket (a socketpair): the first side writes its rank into it, the second reads
// it. A stream between ranks of this process carries a write to the peer at once.
std::optional<int> exchange_token(int fd, int me) {
  char text[64] = {};
  const ssize_t got = recv(fd, text, sizeof text - 1, MSG_PEEK | MSG_DONTWAIT);
  if (got <= 0) {
    const std::string token = fmt::format("{}{}\n", kJoinToken, me);
    if (send(fd, token.data(), token.size(), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(token.size()))
      throw MpiError{MPI_ERR_OTHER, fmt::format("cannot write to socket {}: {}", fd, std::strerror(errno))};
    return std::nullopt;
  }
  const std::string_view seen(text, static_cast<std::size_t>(got));
  const std::size_t end = seen.find('\n');
  int peer = -1;
  if (!seen.starts_with(kJoinToken) || end == std::string_view::npos ||
      read_number(seen.substr(kJoinToken.size(), end - kJoinToken.size()), peer) != NumberText::fits)
    throw MpiError{MPI_ERR_OTHER, fmt::format("socket {} holds data that MPI_Comm_join did not write: it must be "
                                              "quiescent (MPI-3.1 10.4.6)",
                                              fd)};
  if (recv(fd, text, end + 1, MSG_DONTWAIT) != static_cast<ssize_t>(end + 1))
    throw MpiError{MPI_ERR_OTHER, fmt::format("cannot read socket {}: {}", fd, std::strerror(errno))};
  return peer;
}

// MPI_Comm_accept's and MPI_Comm_connect's frame: the arguments every member gives alike, the
// root's part (`exchange`: the other group's members, through the port named) with its error shared
// over the group, then the intercommunicator.
template <class Exchange>
void meet(RankState& rs, const char* call, const char* port_name, MPI_Info info, int root, MPI_Comm comm,
          MPI_Comm* newcomm, Exchange&& exchange) {
  Comm& c = connecting_comm(rs, call, comm, root, newcomm);
  const std::vector<int> mine = local_members(c);
  std::vector<int> outcome{0};
  std::optional<MpiError> failed;
  if (c.rank == root) {
    try {
      info_of(rs, info);
      const std::string name = text_of(port_name, "port_name");
      const std::vector<int> theirs = exchange(name, parse_port(name, session()->nodes), mine);
      outcome.insert(outcome.end(), theirs.begin(), theirs.end());
    } catch (const MpiError& e) {
      failed = e;
      outcome = {e.code};
    }
  }
  *newcomm = join_intercomm(rs, c, mine, share_outcome(rs, c, root, std::move(outcome), failed));
}

// One command of a spawn, as the root gives it.
struct Command {
  std::string command;
  std::vector<std::string> args;
  int maxprocs = 0;
};

// The root's part of a spawn: the processes take the lowest free VPs, each with its own copy of its
// command's program, and start at the root's clock; the root then waits for the first of them to
// say that their MPI_COMM_WORLD is up (join_parents). Returns their VPs.
std::vector<int> start_processes(RankState& rs, const Comm& c, const char* call, const std::vector<Command>& commands) {
  Session& s = *session();
  Proc& p = *rs.proc;
  if (s.split)
    throw MpiError{MPI_ERR_SPAWN, fmt::format("{} is not supported in a run split over processes: each process holds "
                                              "only its own share of the machine's VPs",
                                              call)};
  int total = 0;
  for (const Command& cmd : commands) {
    if (cmd.maxprocs <= 0)
      throw MpiError{MPI_ERR_ARG,
                     fmt::format("maxprocs is {} for '{}': it must be positive", cmd.maxprocs, cmd.command)};
    total += cmd.maxprocs;
  }
  const int free = static_cast<int>(s.released.size()) + s.nodes - s.next_free;
  if (total > free)
    throw MpiError{MPI_ERR_SPAWN,
                   fmt::format("{} process(es) cannot be started: the machine has {} processors and {} of them run "
                               "processes (MPI_UNIVERSE_SIZE is {}; give mpirun a larger machine or a smaller -np)",
                               total, s.nodes, s.nodes - free, s.nodes)};
  auto spawned = std::make_shared<Spawned>();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const Command& cmd = commands[i];
    for (const auto main : s.load_program(cmd.command, cmd.maxprocs)) {
      spawned->mains.push_back(main);
      spawned->apps.push_back(static_cast<int>(i));
    }
    std::vector<std::string> args{cmd.command};
    args.insert(args.end(), cmd.args.begin(), cmd.args.end());
    spawned->args.push_back(std::move(args));
  }
  spawned->parents = local_members(c);
  spawned->root = p.rank();
  // The lowest free VPs: those whose process ended (all below next_free), then new ones.
  std::vector<int>& vps = spawned->vps;
  while (static_cast<int>(vps.size()) < total) {
    if (s.released.empty()) {
      vps.push_back(s.next_free++);
    } else {
      vps.push_back(*s.released.begin());
      s.released.erase(s.released.begin());
    }
  }
  for (int k = 0; k < total; ++k) {
    auto child = std::make_unique<RankState>();
    child->world_rank = k;
    child->world_size = total;
    child->appnum = spawned->apps[static_cast<std::size_t>(k)];
    child->spawned = spawned;
    s.spawned_ranks[static_cast<std::size_t>(vps[static_cast<std::size_t>(k)] - s.np)] = std::move(child);
  }
  for (const int v : vps) p.start(v);
  int up = 0;
  p.recv(vps.front(), kSpawnedTag, std::as_writable_bytes(std::span(&up, 1)), machine_group(p));
  return vps;
}

// The argument vector of a spawned program, up to its null pointer (MPI_ARGV_NULL: none).
std::vector<std::string> argument_list(char** argv) {
  std::vector<std::string> args;
  if (argv == MPI_ARGV_NULL) return args;
  for (char** a = argv; *a; ++a) args.emplace_back(*a);
  return args;
}

// Both spawns: collective over `comm`, whose root's commands count; every member gets the
// intercommunicator to the started processes, and one error code per process.
int spawn(const char* call, MPI_Comm comm, int root, MPI_Comm* intercomm, int* errcodes,
          const std::function<std::vector<Command>(RankState&)>& commands_at_root) {
  return touchstone::mpi::call(call, comm, [&](RankState& rs) {
    Comm& c = connecting_comm(rs, call, comm, root, intercomm);
    std::vector<int> outcome{0};
    std::optional<MpiError> failed;
    std::size_t asked = 0;
    if (c.rank == root) {
      try {
        const std::vector<Command> commands = commands_at_root(rs);
        for (const Command& cmd : commands) asked += static_cast<std::size_t>(std::max(cmd.maxprocs, 0));
        const std::vector<int> started = start_processes(rs, c, call, commands);
        outcome.insert(outcome.end(), started.begin(), started.end());
      } catch (const MpiError& e) {
        failed = e;
        outcome = {e.code};
      }
    }
    std::vector<int> children;
    try {
      children = share_outcome(rs, c, root, std::move(outcome), failed);
    } catch (const MpiError& e) {
      if (errcodes != MPI_ERRCODES_IGNORE) std::fill_n(errcodes, asked, e.code);  // the root knows how many
      throw;
    }
    if (errcodes != MPI_ERRCODES_IGNORE) std::fill_n(errcodes, children.size(), MPI_SUCCESS);
    *intercomm = join_intercomm(rs, c, local_members(c), children);
  });
}

}  // namespace

void join_parents(RankState& rs) {
  const Spawned& spawned = *rs.spawned;
  Proc& p = *rs.proc;
  const Comm& world = *rs.comms[1];
  if (world.rank == 0) {
    const int up = 1;
    p.send(spawned.root, kSpawnedTag, std::as_bytes(std::span(&up, 1)), machine_group(p));
  }
  rs.parent = join_intercomm(rs, world, local_members(world), spawned.parents);
  rs.comms[static_cast<std::size_t>(rs.parent)]->name = "MPI_COMM_PARENT";  // MPI-3.1 6.8's default name
}

std::string connection_message(int tag, int dst) {
  if (tag >= kPortTag && tag - kPortTag < kMaxPorts)
    return fmt::format("MPI_Comm_connect's request to port '{}{}:{}'", kPortPrefix, dst, tag - kPortTag);
  if (tag == kSpawnedTag) return "the spawned processes' word to MPI_Comm_spawn's root";
  return tag == kReplyTag ? "MPI_Comm_accept's reply" : "";
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

// A name that says which rank opened the port and its number among that rank's ports.
int MPI_Open_port(MPI_Info info, char* port_name) {
  return call("MPI_Open_port", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(port_name, "port_name");
    info_of(rs, info);  // no key is read: the name is the port
    if (rs.ports_opened == kMaxPorts) throw MpiError{MPI_ERR_OTHER, "this rank has opened too many ports"};
    const std::string name = fmt::format("{}{}:{}", kPortPrefix, rs.proc->rank(), rs.ports_opened++);
    session()->open_ports.emplace(name, rs.proc->rank());
    std::memcpy(port_name, name.c_str(), name.size() + 1);
  });
}

int MPI_Close_port(const char* port_name) {
  return call("MPI_Close_port", MPI_COMM_WORLD, [&](RankState& rs) {
    const std::string name = text_of(port_name, "port_name");
    auto& ports = session()->open_ports;
    const auto open = ports.find(name);
    if (open == ports.end() || open->second != rs.proc->rank())
      throw MpiError{MPI_ERR_PORT, fmt::format("port '{}' is not open on this rank", name)};
    ports.erase(open);
  });
}

// The root takes the first request that reaches the port (waiting for one), answers it with its
// group's members, and both groups learn each other's.
int MPI_Comm_accept(const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm) {
  return call("MPI_Comm_accept", comm, [&](RankState& rs) {
    meet(rs, "MPI_Comm_accept", port_name, info, root, comm, newcomm,
         [&](const std::string& name, const std::optional<Port>& port, const std::vector<int>& mine) {
           Proc& p = *rs.proc;
           const auto& ports = session()->open_ports;
           if (!port || !ports.contains(name) || port->owner != p.rank())
             throw MpiError{MPI_ERR_PORT, port && ports.contains(name)
                                              ? fmt::format("port '{}' was opened by rank {}: only it can accept there",
                                                            name, port->owner)
                                              : fmt::format("port '{}' is not open", name)};
           const Group world = rendezvous(rs);
           std::vector<int> theirs(static_cast<std::size_t>(session()->nodes));
           const Status st =
               p.recv(any_source, kPortTag + port->number, std::as_writable_bytes(std::span(theirs)), world);
           theirs.resize(st.size / sizeof(int));
           p.send(st.source, kReplyTag, std::as_bytes(std::span(mine)), world);
           return theirs;
         });
  });
}

// The root sends its group's members to the port's rank and waits for the accepting group's.
int MPI_Comm_connect(const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm) {
  return call("MPI_Comm_connect", comm, [&](RankState& rs) {
    meet(rs, "MPI_Comm_connect", port_name, info, root, comm, newcomm,
         [&](const std::string& name, const std::optional<Port>& port, const std::vector<int>& mine) {
           Proc& p = *rs.proc;
           // Split over processes, the port's rank may be another process's: its opening is not seen here.
           if (!port || (!session()->split && !session()->open_ports.contains(name)))
             throw MpiError{MPI_ERR_PORT, fmt::format("port '{}' is not open", name)};
           if (port->owner == p.rank())
             throw MpiError{MPI_ERR_PORT, fmt::format("port '{}' is this rank's own: it would wait for itself", name)};
           const Group world = rendezvous(rs);
           p.send(port->owner, kPortTag + port->number, std::as_bytes(std::span(mine)), world);
           std::vector<int> theirs(static_cast<std::size_t>(session()->nodes));
           const Status st = p.recv(port->owner, kReplyTag, std::as_writable_bytes(std::span(theirs)), world);
           theirs.resize(st.size / sizeof(int));
           return theirs;
         });
  });
}

// Collective: the members meet (so that no member frees the communicator while another still
// communicates on it, MPI-3.1 10.5.4), then each frees it.
int MPI_Comm_disconnect(MPI_Comm* comm) {
  return call("MPI_Comm_disconnect", comm ? *comm : MPI_COMM_NULL, [&](RankState& rs) {
    check_out(comm, "comm");
    Comm& c = comm_of(rs, *comm);
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
      throw MpiError{MPI_ERR_COMM, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected"};
    if (c.inter) {
      inter_barrier_body(rs, c);
    } else {
      check_collective(rs, *comm, "MPI_Comm_disconnect");
      barrier(rs, c);
    }
    free_comm(rs, *comm);
    *comm = MPI_COMM_NULL;
  });
}

// The two ranks at the ends of a connected socket (MPI-3.1 10.4.6) learn each other's rank without
// waiting on the socket, which would keep every other rank of this process from running: the ends
// of an IP connection by their addresses, the ends of another socket by a line the first writes
// and the second reads. The second tells the first its rank in a message of the machine.
int MPI_Comm_join(int fd, MPI_Comm* intercomm) {
  return call("MPI_Comm_join", MPI_COMM_SELF, [&](RankState& rs) {
    check_out(intercomm, "intercomm");
    check_one_process("MPI_Comm_join");
    Proc& p = *rs.proc;
    const int me = p.rank();
    const Group world = rendezvous(rs);
    std::optional<int> peer;
    if (const auto [mine, theirs] = socket_ends(fd); !mine.empty()) {
      auto& waiting = session()->joins;
      if (const auto first = waiting.find(theirs); first != waiting.end()) {
        peer = first->second;
        waiting.erase(first);
      } else if (!waiting.emplace(mine, me).second) {
        throw MpiError{MPI_ERR_ARG, fmt::format("socket {} is already being joined", fd)};
      }
    } else {
      peer = exchange_token(fd, me);
    }
    if (peer == me) throw MpiError{MPI_ERR_ARG, fmt::format("both ends of socket {} are this rank's", fd)};
    if (peer) {
      p.send(*peer, kJoinTag, std::as_bytes(std::span(&me, 1)), world);
    } else {
      int first = -1;
      p.recv(any_source, kJoinTag, std::as_writable_bytes(std::span(&first, 1)), world);
      peer = first;
    }
    *intercomm = join_intercomm(rs, comm_of(rs, MPI_COMM_SELF), {me}, {*peer});
  });
}

// The intercommunicator to the parents of a spawned process, until it frees or disconnects it;
// MPI_COMM_NULL for -np's ranks (MPI-3.1 10.3.2).
int MPI_Comm_get_parent(MPI_Comm* parent) {
  return call("MPI_Comm_get_parent", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(parent, "parent");
    *parent = rs.parent;
  });
}

int MPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                   MPI_Comm* intercomm, int array_of_errcodes[]) {
  return spawn("MPI_Comm_spawn", comm, root, intercomm, array_of_errcodes, [&](RankState& rs) {
    info_of(rs, info);  // no key is read: every process runs on a VP of the machine
    return std::vector<Command>{{text_of(command, "command"), argument_list(argv), maxprocs}};
  });
}

int MPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[], const int array_of_maxprocs[],
                            const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm* intercomm,
                            int array_of_errcodes[]) {
  return spawn("MPI_Comm_spawn_multiple", comm, root, intercomm, array_of_errcodes, [&](RankState& rs) {
    if (count <= 0) throw MpiError{MPI_ERR_ARG, fmt::format("count is {}: it must be positive", count)};
    check_out(array_of_commands, "array_of_commands");
    check_out(array_of_maxprocs, "array_of_maxprocs");
    check_out(array_of_info, "array_of_info");
    std::vector<Command> commands;
    for (int i = 0; i < count; ++i) {
      info_of(rs, array_of_info[i]);
      commands.push_back(
          {text_of(array_of_commands[i], "array_of_commands[i]"),
           array_of_argv == MPI_ARGVS_NULL ? std::vector<std::string>{} : argument_list(array_of_argv[i]),
           array_of_maxprocs[i]});
    }
    return commands;
  });
}

int MPI_Publish_name(const char* service_name, MPI_Info info, const char* port_name) {
  return call("MPI_Publish_name", MPI_COMM_WORLD, [&](RankState& rs) {
    const std::string service = text_of(service_name, "service_name"), port = text_of(port_name, "port_name");
    info_of(rs, info);
    check_one_process("MPI_Publish_name");
    Session& s = *session();
    if (const auto open = s.open_ports.find(port); open == s.open_ports.end() || open->second != rs.proc->rank())
      throw MpiError{MPI_ERR_PORT, fmt::format("port '{}' is not open on this rank", port)};
    if (const auto known = s.published.find(service); known != s.published.end())
      throw MpiError{MPI_ERR_SERVICE, fmt::format("service '{}' is already published (by rank {}, for port '{}')",
                                                  service, known->second.second, known->second.first)};
    s.published.emplace(service, std::pair{port, rs.proc->rank()});
  });
}

int MPI_Unpublish_name(const char* service_name, MPI_Info info, const char* port_name) {
  return call("MPI_Unpublish_name", MPI_COMM_WORLD, [&](RankState& rs) {
    const std::string service = text_of(service_name, "service_name"), port = text_of(port_name, "port_name");
    info_of(rs, info);
    check_one_process("MPI_Unpublish_name");
    Session& s = *session();
    const auto known = s.published.find(service);
    if (known == s.published.end() || known->second != std::pair{port, rs.proc->rank()})
      throw MpiError{MPI_ERR_SERVICE,
                     fmt::format("service '{}' is not published by this rank for port '{}'", service, port)};
    s.published.erase(known);
  });
}

int MPI_Lookup_name(const char* service_name, MPI_Info info, char* port_name) {
  return call("MPI_Lookup_name", MPI_COMM_WORLD, [&](RankState& rs) {
    const std::string service = text_of(service_name, "service_name");
    check_out(port_name, "port_name");
    info_of(rs, info);
    check_one_process("MPI_Lookup_name");
    const auto& published = session()->published;
    const auto known = published.find(service);
    if (known == published.end())
      throw MpiError{MPI_ERR_NAME, fmt::format("no port is published under the service name '{}'", service)};
    std::memcpy(port_name, known->second.first.c_str(), known->second.first.size() + 1);
  });
}
