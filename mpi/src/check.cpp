// Checking MPI programs (check.hpp, docs/debugging.md "Checking MPI programs").
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "touchstone/packed.hpp"
#include "touchstone/source_lines.hpp"

#include "call.hpp"
#include "check.hpp"
#include "comm.hpp"
#include "flag_lock.hpp"
#include "intercomm.hpp"
#include "topology.hpp"
#include "types.hpp"
#include "window_notes.hpp"

namespace touchstone::mpi {

// ------------------------------------------------------------------ signatures
//
// A sequence of basic types x_0 x_1 ... x_{n-1} hashes to sum code(x_i) B^i modulo the prime
// 2^61 - 1: a run of n copies of one type is code(x) (1 + B + ... + B^(n-1)), c copies of a
// sequence of hash h and length L are h (1 + B^L + ... + B^((c-1)L)), and two sequences joined
// are h1 + B^L1 h2. Each geometric sum takes log(n) products, so the signature of a million
// elements of a derived type costs what the type's own runs cost, and equal sequences hash alike
// however the types that make them are built (4 MPI_INT, or 2 of a contiguous pair of MPI_INT).
namespace {

constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;
constexpr std::uint64_t kBase = 0x1f3d5b79a3c1e7full % kPrime;

__extension__ typedef unsigned __int128 Wide;
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  const Wide p = static_cast<Wide>(a) * b;
  std::uint64_t r = static_cast<std::uint64_t>(p & kPrime) + static_cast<std::uint64_t>(p >> 61);
  return r >= kPrime ? r - kPrime : r;
}
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t r = a + b;
  return r >= kPrime ? r - kPrime : r;
}

// (1 + r + ... + r^(n-1), r^n)
std::pair<std::uint64_t, std::uint64_t> geometric(std::uint64_t r, std::uint64_t n) {
  if (n == 0) return {0, 1};
  auto [g, p] = geometric(r, n / 2);
  std::uint64_t g2 = add(g, mul(g, p)), p2 = mul(p, p);
  if (n & 1) {
    g2 = add(g2, p2);
    p2 = mul(p2, r);
  }
  return {g2, p2};
}

// A hashed sequence: its hash, its length and the base to its length.
struct Seq {
  std::uint64_t hash = 0, length = 0, power = 1;
};
Seq join(const Seq& a, const Seq& b) {
  return {add(a.hash, mul(a.power, b.hash)), a.length + b.length, mul(a.power, b.power)};
}
Seq repeat(const Seq& a, std::uint64_t times) {
  const auto [g, p] = geometric(a.power, times);
  return {mul(a.hash, g), a.length * times, p};
}
std::uint64_t code(MPI_Datatype t) {
  std::uint64_t z = static_cast<std::uint64_t>(t) + 0x9e3779b97f4a7c15ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) % (kPrime - 1) + 1;
}
Seq run(MPI_Datatype t, std::uint64_t n) {
  const auto [g, p] = geometric(kBase, n);
  return {mul(code(t), g), n, p};
}

Type::SignatureHash hash_elements(const Type& t) {
  Seq s;
  bool untyped = false;
  for (const auto& [basic, n] : t.signature) {
    s = join(s, run(basic, n));
    untyped |= basic == MPI_BYTE || basic == MPI_PACKED;
  }
  return Type::SignatureHash{s.hash, s.length, s.power, untyped};
}

// A predefined type is one object for every rank (types.cpp's static table), which a program that
// goes on past its receive reads beside the other ranks' turns (docs/parallel.md): its cache is
// never written. Its element's hash is a table of its own, made once; the hash of a count of them
// is kept per host thread (a program sends the same count again and again).
bool shared_type(const Type& t) { return predefined_type(t.handle) == &t; }

const Type::SignatureHash& predefined_element_hash(const Type& t) {
  static const auto table = [] {
    std::array<Type::SignatureHash, kPredefinedHandles> hashes{};
    for (std::size_t h = 0; h < hashes.size(); ++h)
      if (const Type* p = predefined_type(static_cast<MPI_Datatype>(h))) hashes[h] = hash_elements(*p);
    return hashes;
  }();
  return table[static_cast<std::size_t>(t.handle)];
}

std::uint64_t predefined_count_hash(const Type& t, std::uint64_t count) {
  struct Kept {
    std::uint64_t count = 0, hash = 0;
  };
  thread_local std::array<Kept, kPredefinedHandles> kept;
  Kept& k = kept[static_cast<std::size_t>(t.handle)];
  if (k.count != count || count == 0) {
    const Type::SignatureHash& e = predefined_element_hash(t);
    k = {count, repeat({e.hash, e.elements, e.power}, count).hash};
  }
  return k.hash;
}

Type::SignatureHash element_hash(const Type& t) {
  if (shared_type(t)) return predefined_element_hash(t);
  if (!t.signature_hash) t.signature_hash = hash_elements(t);
  return *t.signature_hash;
}

// The same without keeping it: for the receive side, whose code may run beside other ranks' (the
// programs of an instant, docs/parallel.md) while the type is a sender's snapshot in the queues
// below. The types' caches are written only in the sequential order, by the rank that owns them.
Type::SignatureHash element_hash_kept_or_made(const Type& t) {
  if (shared_type(t)) return predefined_element_hash(t);
  return t.signature_hash ? *t.signature_hash : hash_elements(t);
}

std::uint64_t count_hash(const Type& t, std::uint64_t count) {
  if (shared_type(t)) return predefined_count_hash(t, count);
  const auto e = element_hash_kept_or_made(t);
  return e.count == count && count != 0 ? e.count_hash : repeat({e.hash, e.elements, e.power}, count).hash;
}

}  // namespace
Signature signature(const Type& t, std::size_t count);
namespace {

// The hash of the first n basic types of count elements of t (no cache written: element_hash_kept_or_made).
std::uint64_t prefix_hash(const Type& t, std::uint64_t n) {
  const auto e = element_hash_kept_or_made(t);
  if (e.elements == 0) return 0;
  if (n % e.elements == 0) return count_hash(t, n / e.elements);
  Seq s = repeat({e.hash, e.elements, e.power}, n / e.elements);
  std::uint64_t rest = n % e.elements;
  for (auto it = t.signature.begin(); rest && it != t.signature.end(); ++it) {
    const std::uint64_t k = std::min<std::uint64_t>(rest, it->second);
    s = join(s, run(it->first, k));
    rest -= k;
  }
  return s.hash;
}

}  // namespace

Signature signature(const Type& t, std::size_t count) {
  if (shared_type(t)) {
    const Type::SignatureHash& e = predefined_element_hash(t);
    return {predefined_count_hash(t, count), e.elements * count, t.size * count, e.untyped};
  }
  // A program sends the same count of a type again and again: its hash is kept.
  element_hash(t);
  auto& e = *t.signature_hash;
  if (e.count != count || count == 0) {
    e.count = count;
    e.count_hash = repeat({e.hash, e.elements, e.power}, count).hash;
  }
  return {e.count_hash, e.elements * count, t.size * count, e.untyped};
}

// ------------------------------------------------------------------ call sites

namespace {

// The address range of this library's code, found once.
struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};
CodeRange library_code() {
  Dl_info self{};
  dladdr(reinterpret_cast<const void*>(&library_code), &self);
  CodeRange r{};
  struct Find {
    const void* base;
    CodeRange* out;
  } find{self.dli_fbase, &r};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& f = *static_cast<Find*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
          const std::uintptr_t b = info->dlpi_addr + ph.p_vaddr, e = b + ph.p_memsz;
          if (reinterpret_cast<std::uintptr_t>(f.base) > e) continue;
          if (reinterpret_cast<std::uintptr_t>(&library_code) >= b &&
              reinterpret_cast<std::uintptr_t>(&library_code) < e) {
            *f.out = {b, e};
            return 1;
          }
        }
        return 0;
      },
      &find);
  return r;
}

}  // namespace

bool in_mpi_library(const void* pc) {
  static const CodeRange r = library_code();
  const auto a = reinterpret_cast<std::uintptr_t>(pc);
  return a >= r.begin && a < r.end;
}

const void* program_caller() {
  std::array<void*, 24> frames{};
  const int n = ::backtrace(frames.data(), static_cast<int>(frames.size()));
  for (int i = 1; i < n; ++i)
    if (!in_mpi_library(frames[static_cast<std::size_t>(i)])) return frames[static_cast<std::size_t>(i)];
  return nullptr;
}

// " at FILE:LINE" of a return address (the runtime's source_line: the DWARF of the module that
// holds it, a program built with -g); "" when that is not known. Asked once per address, only when
// a report is written.
std::string site_text(const void* caller) {
  if (!caller) return "";
  static std::mutex lock;
  static std::map<const void*, std::string> known;
  const std::lock_guard<std::mutex> hold(lock);
  if (const auto it = known.find(caller); it != known.end()) return it->second;
  // The call instruction is just before the return address.
  const SourceLine where = source_line(static_cast<const char*>(caller) - 1);
  std::string text;
  if (where.has_line()) {
    const auto slash = where.file.rfind('/');
    text = fmt::format(" at {}:{}", slash == std::string::npos ? where.file : where.file.substr(slash + 1), where.line);
  }
  known.emplace(caller, text);
  return text;
}

// ------------------------------------------------------------------ names

namespace {
// A derived datatype: its name, else its handle and its type signature's first runs.
std::string derived_text(const Type& x, MPI_Datatype t) {
  if (!x.name.empty()) return x.name;
  std::string basics;
  for (std::size_t k = 0; k < x.signature.size() && k < 4; ++k)
    basics += fmt::format("{}{} x {}", k ? ", " : "", x.signature[k].second, type_name(x.signature[k].first));
  if (x.signature.size() > 4) basics += ", ...";
  (void)t;
  return fmt::format("datatype ({})", basics);
}
}  // namespace

std::string type_text(RankState& rs, MPI_Datatype t) {
  if (predefined_type(t)) return type_name(t);
  const int i = t - kFirstDerivedType;
  if (i >= 0 && i < static_cast<int>(rs.types.size()) && rs.types[static_cast<std::size_t>(i)])
    return derived_text(*rs.types[static_cast<std::size_t>(i)], t);
  return fmt::format("datatype {}", t);
}

std::string op_text(MPI_Op op) {
  static const char* names[] = {"MPI_OP_NULL", "MPI_MAX", "MPI_MIN",  "MPI_SUM",  "MPI_PROD",   "MPI_LAND",  "MPI_BAND",
                                "MPI_LOR",     "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"};
  if (op >= 0 && op <= MPI_MAXLOC) return names[op];
  return fmt::format("user operation {}", op);
}

std::string comm_text(RankState& rs, MPI_Comm comm) {
  const Comm* c = find_comm(rs, comm);
  if (c && c->name) return *c->name;
  if (comm == MPI_COMM_WORLD) return "MPI_COMM_WORLD";
  if (comm == MPI_COMM_SELF) return "MPI_COMM_SELF";
  if (c && !c->provenance.empty()) return fmt::format("the communicator of {}", c->provenance);
  return fmt::format("communicator {}", comm);
}

std::string made_from(RankState& rs, const Comm& parent) {
  const char* how = rs.last_call ? rs.last_call : "MPI";
  for (std::size_t h = 0; h < rs.comms.size(); ++h)
    if (rs.comms[h].get() == &parent) return fmt::format("{} of {}", how, comm_text(rs, static_cast<MPI_Comm>(h)));
  return how;
}

// ------------------------------------------------------------------ shared state

namespace {

// One published collective call: the descriptor, who made it and where.
struct Entered {
  Collective d;
  int rank = 0;   // in the communicator (its local group for an intercommunicator)
  int world = 0;  // whose RankState names its datatypes
  CallSite site;
  int index = 0;       // in the collective group: both groups of an intercommunicator, the first from 0
  bool inter = false;  // on an intercommunicator
  int side = 0;        // its group: 0 the one whose members come first, else 1
  CallSite start;      // a persistent collective's MPI_Start (site: its MPI_*_init)
  // A split run's: what reports say of the call, named in its rank's process (its code is loaded
  // there, at addresses of its own): the communicator, and where the call and its start were made.
  struct Named {
    std::string comm, site, start_site;
    std::map<MPI_Datatype, std::string> types;  // of the blocks
  };
  std::shared_ptr<const Named> named;
};

// The n-th collective of a communicator, as its members enter it.
struct Slot {
  Entered first;
  int arrived = 0;
  // The first to enter that gave a significant operator, type signature, or (by group) shape.
  std::optional<Entered> first_op, first_unit;
  std::array<std::optional<Entered>, 2> first_shape;
  std::optional<Entered> root;       // MPI_Gatherv, MPI_Scatterv, rooted intercommunicator calls: the root's call
  std::vector<Entered> before_root;  // their members that entered before the root
  std::vector<std::optional<Entered>> members;  // pairwise and neighborhood calls: each member's call
  // Rooted intercommunicator calls: each group's first member and how many entered.
  std::array<std::optional<Entered>, 2> first_of_side;
  std::array<int, 2> arrived_of_side{};
};

// The call that sent a message of another process's rank (a split run), as that process named it:
// its code is loaded there, at addresses of its own.
struct RemoteSite {
  std::string call, site;
};

struct Sent {
  Signature sig;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::shared_ptr<const Type> derived;  // a derived type, which the sender may free before the report
  int rank = 0, world = 0;
  CallSite site;
  std::shared_ptr<const RemoteSite> remote;  // sent by another process's rank: its call, named there
};

// "MPI_Send at prog.c:18"
std::string sent_by(const Sent& m) {
  return m.remote ? m.remote->call + m.remote->site : fmt::format("{}{}", m.site.call, site_text(m.site.caller));
}

struct MessageKey {
  std::uint64_t context;
  int from, to, tag;
  bool operator==(const MessageKey&) const = default;
};
struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const {
    std::uint64_t h = k.context * 0x9e3779b97f4a7c15ull;
    h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.from)) << 32 | static_cast<std::uint32_t>(k.to)) +
         0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.tag)) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
  }
};
// The messages sent and not yet received on one (context, sender, receiver, tag), in order: MPI's
// messages do not overtake one another there, so receives take them first in, first out.
struct Fifo {
  std::vector<Sent> items;
  std::size_t head = 0;
};

}  // namespace

struct WindowChecks;  // what a split run compares at the window's end (split_checks)

// What the ranks share: it is reached through session(), in the sequential order
// (Proc::await_turn), except a rank's own queues of messages to it, which only it reads and the
// sequential order fills.
struct CheckState {
  explicit CheckState(int ranks)
      : messages_to(static_cast<std::size_t>(ranks)), messages_to_lock(messages_to.size()),
        last_send(messages_to.size()), last_recv(messages_to.size()) {}
  std::unordered_map<std::uint64_t, std::map<std::uint64_t, Slot>> collectives;  // by collective context
  /// By the receiver's world rank: a receive completes in code of its rank's that may run beside
  /// other ranks' (the programs of an instant), and touches only its own rank's queues. A program
  /// that goes on past its receive runs beside the sequential order too, whose sends fill them:
  /// each rank's queues have a lock (a flag: it is almost never contended, and taken per message).
  std::vector<std::unordered_map<MessageKey, Fifo, MessageKeyHash>> messages_to;
  std::vector<FlagLock> messages_to_lock;
  // Each world rank's last sender-side and receiver-side queue: a program sends to and receives from
  // the same peers again and again, and the map's elements stay where they are.
  struct Last {
    MessageKey key{};
    Fifo* fifo = nullptr;
  };
  std::vector<Last> last_send, last_recv;
  // A split run (split_checks): this process's ranks, and the records of the messages they sent to
  // other processes' ranks since the last window's end, for the window's notes.
  int first_here = 0, end_here = std::numeric_limits<int>::max();
  std::mutex outbox_lock;
  Packed outbox;
  // ... and what targets in other processes found for this process's origins' passive-target
  // accesses (tell_lock_conflict), by (target, the target's window handle, origin); under outbox_lock.
  std::map<std::tuple<int, int, int>, std::string> told_conflicts;
  // ... and, at targets of this process, the origins elsewhere that have read theirs since.
  std::set<std::tuple<int, int, int>> conflicts_read;
  // ... and what every process compares at the window's end, under outbox_lock.
  std::shared_ptr<WindowChecks> window_checks;
};

namespace {

CheckState& shared() {
  Session& s = *session();
  if (!s.checks) s.checks = std::make_shared<CheckState>(s.split ? s.np : s.nodes);
  return *s.checks;
}

// The queue of the messages a rank sends on key, to world rank `receiver`.
Fifo& sent_fifo(CheckState& st, RankState& rs, const MessageKey& key, int receiver) {
  CheckState::Last& last = st.last_send[static_cast<std::size_t>(rs.proc->rank())];
  if (!last.fifo || !(last.key == key)) last = {key, &st.messages_to[static_cast<std::size_t>(receiver)][key]};
  return *last.fifo;
}

// The queue a rank receives from on key; nullptr when nothing was ever sent on it. No turn: this is
// the rank's own (CheckState::messages_to).
Fifo* received_fifo(RankState& rs, const MessageKey& key) {
  CheckState* st = settings().checks.get();
  if (!st) return nullptr;
  const auto me = static_cast<std::size_t>(rs.proc->rank());
  CheckState::Last& last = st->last_recv[me];
  if (!last.fifo || !(last.key == key)) {
    auto& mine = st->messages_to[me];
    const auto it = mine.find(key);
    if (it == mine.end()) return nullptr;
    last = {key, &it->second};
  }
  return last.fifo;
}

std::string ordinal(std::uint64_t n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return fmt::format("{}{}", n, suffix);
}

std::string call_text(const Entered& e) {
  return fmt::format("{}({}){}", e.d.name, e.d.args, e.named ? e.named->site : site_text(e.site.caller));
}

// A block's type, as the reports name it.
std::string block_type_text(const Entered& e, const Collective::Block& b) {
  return e.named ? e.named->types.at(b.type) : type_text(session()->rank(e.world), b.type);
}

// A rank of the communicator, with its world rank when they differ; on an intercommunicator, one
// of the other group than the reporting rank's (`viewer`) says so.
std::string rank_text(const char* role, const Entered& e, const Entered* viewer = nullptr) {
  std::string text = e.rank == e.world ? fmt::format("{} {}", role, e.rank)
                                       : fmt::format("{} {} (world rank {})", role, e.rank, e.world);
  if (viewer && e.inter && e.side != viewer->side) text += " of the remote group";
  return text;
}

// The communicator a collective runs on, named only when a report needs it.
struct Where {
  RankState& rs;
  MPI_Comm comm;
};

// How the call came to be compared: "as its 2nd collective on this communicator", or, for the start
// of a persistent collective, "and started it the 1st time with MPI_Start at prog.c:20".
std::string order_text(const Entered& e, std::uint64_t n) {
  if (e.start.call)
    return fmt::format("and started it the {} time with {}{}", ordinal(n), e.start.call,
                       e.named ? e.named->start_site : site_text(e.start.caller));
  return fmt::format("as its {} collective on this communicator", ordinal(n));
}

// `detail`, when given, says what differs before the two calls are named.
[[noreturn]] void mismatch(int code, const char* what, const Where& comm, const Entered& me, std::uint64_t n,
                           const Entered& other, const char* other_role = "rank", const std::string& detail = {}) {
  throw MpiError{code, fmt::format("{} on {}: {}{} called {} {}, while {} called {}", what,
                                   me.named ? me.named->comm : comm_text(comm.rs, comm.comm),
                                   detail.empty() ? "" : detail + "; ", rank_text("rank", me), call_text(me),
                                   order_text(me, n), rank_text(other_role, other, &me), call_text(other))};
}

// The name and root against the first member's; the operator, type signature and shape against the
// first member's that gave one (the shape: of the caller's group).
void compare(Slot& slot, const Entered& me, const Where& comm, std::uint64_t n) {
  const Entered& first = slot.first;
  if (std::string_view(me.d.name) != first.d.name)
    mismatch(MPI_ERR_OTHER, "collectives do not match", comm, me, n, first);
  if (!me.d.inter && me.d.root != first.d.root) mismatch(MPI_ERR_ROOT, "the roots differ", comm, me, n, first);
  if (me.d.has_op && slot.first_op) {
    // User operations are told apart from the predefined ones only: each rank has its own copy of
    // the program (and so of the function), and may have made its operations in another order.
    const Entered& other = *slot.first_op;
    const bool user = me.d.op >= kFirstUserOp, other_user = other.d.op >= kFirstUserOp;
    if (user != other_user || (!user && me.d.op != other.d.op))
      mismatch(MPI_ERR_OP, "the operators differ", comm, me, n, other);
  }
  if (me.d.has_unit && slot.first_unit && !(me.d.unit == slot.first_unit->d.unit))
    mismatch(me.d.unit.bytes != slot.first_unit->d.unit.bytes ? MPI_ERR_COUNT : MPI_ERR_TYPE,
             "the type signatures differ", comm, me, n, *slot.first_unit);
  const auto& shape = slot.first_shape[static_cast<std::size_t>(me.side)];
  if (me.d.has_shape && shape && me.d.shape != shape->d.shape)
    mismatch(MPI_ERR_COUNT, "the counts differ", comm, me, n, *shape);
  if (me.d.has_op && !slot.first_op) slot.first_op = me;
  if (me.d.has_unit && !slot.first_unit) slot.first_unit = me;
  if (me.d.has_shape && !shape) slot.first_shape[static_cast<std::size_t>(me.side)] = me;
}

// Rooted intercommunicator calls (MPI-3.1 5.2.2): the root passes MPI_ROOT, the rest of its group
// MPI_PROC_NULL, and every member of the other group the root's rank in its group.
bool root_group_value(int root) { return root == MPI_ROOT || root == MPI_PROC_NULL; }

void check_inter_roots(Slot& slot, const Entered& me, std::uint64_t n, const Where& comm, int size, int remote_size) {
  const auto mine = static_cast<std::size_t>(me.side), theirs = 1 - mine;
  const int r = me.d.root;
  const bool root_group = root_group_value(r);
  const auto differ = [&](const Entered& other, const std::string& detail) {
    mismatch(MPI_ERR_ROOT, "the roots differ", comm, me, n, other, "rank", detail);
  };
  if (const auto& mate = slot.first_of_side[mine]) {
    if (root_group != root_group_value(mate->d.root))
      differ(*mate, "one group passes both MPI_ROOT or MPI_PROC_NULL and a rank of the other group");
    if (!root_group && r != mate->d.root) differ(*mate, "");
  }
  const std::optional<Entered>& across = slot.first_of_side[theirs];
  if (across && root_group == root_group_value(across->d.root))
    differ(*across, root_group ? "both groups pass MPI_ROOT or MPI_PROC_NULL"
                               : "both groups name a rank of the other group as the root");
  if (r == MPI_ROOT && slot.root) differ(*slot.root, "two members of one group pass MPI_ROOT");
  const auto named = [](int root, int rank) {
    return fmt::format("one group names root {}, while rank {} of the other passes MPI_ROOT", root, rank);
  };
  if (r == MPI_ROOT && across && across->d.root != me.rank) differ(*across, named(across->d.root, me.rank));
  if (!root_group && slot.root && slot.root->rank != r) differ(*slot.root, named(r, slot.root->rank));
  ++slot.arrived_of_side[mine];
  if (!slot.first_of_side[mine]) slot.first_of_side[mine] = me;
  // Exactly one MPI_ROOT: known missing once the root's group has entered whole, and reported when a
  // member of the other group has entered too (the one its call names).
  const std::size_t root_side = root_group ? mine : theirs;
  const int root_group_size = root_group ? size : remote_size;
  const bool root_found = r == MPI_ROOT || (slot.root && slot.root->d.root == MPI_ROOT);
  if (!root_found && slot.arrived_of_side[root_side] == root_group_size && slot.first_of_side[1 - root_side])
    differ(root_group ? *slot.first_of_side[theirs] : *slot.first_of_side[root_side],
           "no member of the group that passes MPI_PROC_NULL passes MPI_ROOT");
}

// MPI_Gatherv, MPI_Scatterv, rooted intercommunicator calls: a member's block against the root's
// entry for it.
void compare_block(const Entered& member, std::uint64_t n, const Entered& root, const Where& comm, bool root_detects) {
  const auto i = static_cast<std::size_t>(member.rank);
  if (i >= root.d.blocks.size() || member.d.unit == root.d.blocks[i]) return;
  const int code = member.d.unit.bytes != root.d.blocks[i].bytes ? MPI_ERR_COUNT : MPI_ERR_TYPE;
  if (root_detects) mismatch(code, "the type signatures differ", comm, root, n, member);
  mismatch(code, "the type signatures differ", comm, member, n, root, "root");
}

// What `from` sends in its block `s` against what `to` receives in its block `r`; `me` finds it,
// comparing its call with `peer`'s.
void compare_blocks(const Entered& from, const Collective::Block& s, const Entered& to, const Collective::Block& r,
                    const Entered& me, const Entered& peer, std::uint64_t n, const Where& comm) {
  if (s.sig == r.sig) return;
  const std::string what =
      fmt::format("{} sends {} x {} to {}, which receives {} x {} from it", rank_text("rank", from, &me), s.count,
                  block_type_text(from, s), rank_text("rank", to, &me), r.count, block_type_text(to, r));
  mismatch(s.sig.bytes != r.sig.bytes ? MPI_ERR_COUNT : MPI_ERR_TYPE, "the type signatures differ", comm, me, n, peer,
           "rank", what);
}

// MPI_Alltoallv, MPI_Alltoallw and the intercommunicator's all-to-all and all-gather calls: what the
// member sends to each member already entered (of the other group on an intercommunicator) against
// what that one receives from it, and back. Blocks are by rank: a rank of the other group's on an
// intercommunicator, which is that member's own rank.
void compare_pairs(Slot& slot, const Entered& me, std::uint64_t n, const Where& comm, int members) {
  if (slot.members.empty()) slot.members.resize(static_cast<std::size_t>(members));
  const auto mine = static_cast<std::size_t>(me.rank);
  for (const std::optional<Entered>& peer : slot.members) {
    if (!peer || (me.inter && peer->side == me.side)) continue;
    const auto theirs = static_cast<std::size_t>(peer->rank);
    if (theirs < me.d.sends.size() && mine < peer->d.recvs.size())
      compare_blocks(me, me.d.sends[theirs], *peer, peer->d.recvs[mine], me, *peer, n, comm);
    if (mine < peer->d.sends.size() && theirs < me.d.recvs.size())
      compare_blocks(*peer, peer->d.sends[mine], me, me.d.recvs[theirs], me, *peer, n, comm);
  }
  if (static_cast<std::size_t>(me.index) < slot.members.size()) slot.members[static_cast<std::size_t>(me.index)] = me;
}

// The position in `to_list` (a neighbour's sources or destinations) of the block that meets block k
// of `list` (this rank's destinations or sources), or none: Cartesian, the opposite direction k ^ 1;
// otherwise blocks between two ranks meet in order, the j-th of one to the other in the j-th of the
// other from it.
std::optional<std::size_t> counterpart(const std::vector<int>& list, std::size_t k, int rank,
                                       const std::vector<int>& to_list, bool cartesian) {
  if (cartesian) {
    const std::size_t j = k ^ 1;
    return j < to_list.size() && to_list[j] == rank ? std::optional<std::size_t>(j) : std::nullopt;
  }
  const auto occurrence = std::count(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(k), list[k]);
  std::ptrdiff_t seen = 0;
  for (std::size_t j = 0; j < to_list.size(); ++j)
    if (to_list[j] == rank && seen++ == occurrence) return j;
  return std::nullopt;
}

// The neighborhood collectives: each block this rank sends against the block its destination
// receives it in, and each block it receives against the block its source sends, for the
// neighbours already entered (and this rank itself, a neighbour of its own).
void compare_neighbors(Slot& slot, const Entered& me, std::uint64_t n, const Where& comm, int members) {
  if (slot.members.empty()) slot.members.resize(static_cast<std::size_t>(members));
  const auto entered = [&](int r) -> const Entered* {
    if (r == me.rank) return &me;
    if (r < 0 || r >= members || !slot.members[static_cast<std::size_t>(r)]) return nullptr;
    const Entered& e = *slot.members[static_cast<std::size_t>(r)];
    return e.d.neighborhood ? &e : nullptr;
  };
  const Collective& d = me.d;
  for (std::size_t k = 0; k < d.destinations.size() && k < d.sends.size(); ++k)
    if (const Entered* to = entered(d.destinations[k]))
      if (const auto j = counterpart(d.destinations, k, me.rank, to->d.sources, d.cartesian);
          j && *j < to->d.recvs.size()) {
        if (to != &me) {
          compare_blocks(me, d.sends[k], *to, to->d.recvs[*j], me, *to, n, comm);
          continue;
        }
        // A neighbour of its own (a periodic dimension of one or two processes, a graph's loop).
        const auto text = [&](const Collective::Block& b) {
          return fmt::format("{} x {}", b.count, block_type_text(me, b));
        };
        check_own_blocks("block the rank sends itself", d.sends[k].sig, text(d.sends[k]), d.recvs[*j].sig,
                         text(d.recvs[*j]));
      }
  for (std::size_t k = 0; k < d.sources.size() && k < d.recvs.size(); ++k)
    if (const Entered* from = entered(d.sources[k]); from && from != &me)
      if (const auto j = counterpart(d.sources, k, me.rank, from->d.destinations, d.cartesian);
          j && *j < from->d.sends.size())
        compare_blocks(*from, from->d.sends[*j], me, d.recvs[k], me, *from, n, comm);
  slot.members[static_cast<std::size_t>(me.index)] = me;
}

// Where the n-th instance of a collective is compared: the context of its group and how many enter;
// the caller's group and the other's (an intercommunicator's).
struct Order {
  std::uint64_t context, n;
  int members, size, remote_size;
};
Order order_of(const Comm& c, std::uint64_t context, std::uint64_t n) {
  return Order{context, n, c.coll.size(), c.size, c.remote_size};
}

void check_in(RankState& rs, MPI_Comm comm, const Order& at, Entered me) {
  auto& slots = shared().collectives[at.context];
  auto [it, fresh] = slots.try_emplace(at.n);
  Slot& slot = it->second;
  // The last member to enter lets the slot go, whatever the outcome.
  struct Last {
    bool last;
    std::map<std::uint64_t, Slot>& slots;
    std::map<std::uint64_t, Slot>::iterator it;
    ~Last() {
      if (last) slots.erase(it);
    }
  } const last{++slot.arrived == at.members, slots, it};
  const Where name{rs, comm};
  const std::uint64_t n = at.n;
  if (fresh) slot.first = me;
  compare(slot, me, name, n);
  if (me.d.inter && me.d.root != Collective::kNoRoot) check_inter_roots(slot, me, n, name, at.size, at.remote_size);
  if (me.d.neighborhood) return compare_neighbors(slot, me, n, name, at.members);
  if (!me.d.sends.empty() || !me.d.recvs.empty()) return compare_pairs(slot, me, n, name, at.members);
  if (!me.d.per_rank) return;
  if (!me.d.blocks.empty()) {  // the root
    const auto early = std::move(slot.before_root);
    slot.before_root.clear();
    slot.root = me;
    for (const auto& e : early) compare_block(e, n, me, name, true);
  } else if (slot.root) {
    compare_block(me, n, *slot.root, name, false);
  } else {
    slot.before_root.push_back(me);
  }
}

Entered entered(RankState& rs, const Comm& c, Collective d, const CallSite& site, const CallSite& start) {
  return Entered{
      std::move(d), c.rank, rs.proc->rank(), site, c.local_base + c.rank, c.inter, c.inter && c.local_base != 0 ? 1 : 0,
      start,        nullptr};
}

void enter_split(RankState& rs, MPI_Comm comm, const Order& at, Entered me);

}  // namespace

void check_collective(RankState& rs, MPI_Comm comm, Collective d) {
  Session& s = *session();
  Comm& c = comm_of(rs, comm);
  const std::uint64_t n = ++c.collectives_entered;
  if (!s.check_consistency) return;
  Entered me = entered(rs, c, std::move(d), CallSite{rs.last_call, rs.caller}, {});
  if (s.split) return enter_split(rs, comm, order_of(c, c.coll.context(), n), std::move(me));
  check_in(rs, comm, order_of(c, c.coll.context(), n), std::move(me));
}

void check_collective(RankState& rs, MPI_Comm comm, const char* name) {
  check_collective(rs, comm, describe_name(name));
}

Collective describe_name(const char* name) {
  Collective d;
  d.name = name;
  return d;
}

void check_start(RankState& rs, MPI_Comm comm, const Comm& c, std::uint64_t context, std::uint64_t n, Collective d,
                 const CallSite& init) {
  const Session& s = *session();
  if (!s.check_consistency) return;
  Entered me = entered(rs, c, std::move(d), init, CallSite{rs.last_call, rs.caller});
  if (s.split) return enter_split(rs, comm, order_of(c, context, n), std::move(me));
  check_in(rs, comm, order_of(c, context, n), std::move(me));
}

void check_own_blocks(const char* what, const Signature& send, const std::string& send_text, const Signature& recv,
                      const std::string& recv_text) {
  if (send == recv) return;
  throw MpiError{
      send.bytes != recv.bytes ? MPI_ERR_TRUNCATE : MPI_ERR_TYPE,
      fmt::format("the {} ({}) and the block it receives ({}) differ in type signature", what, send_text, recv_text)};
}

// ------------------------------------------------------------------ descriptors

namespace {
Collective named(const char* name, int root, MPI_Op op) {
  Collective d;
  d.name = name;
  d.root = root;
  d.op = op;
  d.has_op = true;
  return d;
}
std::string root_value(int root) {
  return root == MPI_ROOT ? "MPI_ROOT" : root == MPI_PROC_NULL ? "MPI_PROC_NULL" : std::to_string(root);
}
std::string root_text(int root) { return root == Collective::kNoRoot ? "" : ", root=" + root_value(root); }
std::string counts_text(const int counts[], int n) {
  std::string s;
  for (int i = 0; i < n && i < 8; ++i) s += fmt::format("{}{}", i ? "," : "", counts[i]);
  return "{" + s + (n > 8 ? ",...}" : "}");
}
// n blocks of count elements of t.
std::vector<Collective::Block> uniform(RankState& rs, int n, int count, MPI_Datatype t) {
  check_count(count);
  return std::vector<Collective::Block>(static_cast<std::size_t>(n),
                                        {count, t, signature(committed(rs, t), static_cast<std::size_t>(count))});
}

// An intercommunicator call's descriptor (MPI-3.1 5.2.2), its root checked as the body checks it.
// Its root's group's members other than the root give nothing significant but the root.
// A call with no root (Collective::kNoRoot): every member gives its own data (nullopt).
std::optional<InterRole> role_in(const Comm& c, int root) {
  if (root == Collective::kNoRoot) return std::nullopt;
  return inter_role(c, root);
}
Collective inter_named(const Comm& c, const char* name, int root, MPI_Op op) {
  Collective d = named(name, root, op);
  d.inter = true;
  d.has_op = op != MPI_OP_NULL && role_in(c, root) != InterRole::idle;
  return d;
}
void no_in_place(const void* buf) {
  if (buf == MPI_IN_PLACE) throw MpiError{MPI_ERR_ARG, "MPI_IN_PLACE is not allowed on an intercommunicator"};
}

// "{1,2,3}, MPI_INT", or with a datatype per block "{1,2,3}, {MPI_INT,MPI_FLOAT,MPI_INT}".
std::string blocks_text(RankState& rs, const int counts[], int n, const MPI_Datatype types[], bool per_block_types) {
  if (!per_block_types) return fmt::format("{}, {}", counts_text(counts, n), type_text(rs, types[0]));
  std::string t;
  for (int i = 0; i < n && i < 4; ++i) t += fmt::format("{}{}", i ? "," : "", type_text(rs, types[i]));
  return fmt::format("{}, {{{}{}}}", counts_text(counts, n), t, n > 4 ? ",..." : "");
}

// The hash of a list of counts (MPI_Allgatherv's and MPI_Reduce_scatter's), as a sequence.
std::uint64_t counts_hash(const int counts[], int n) {
  Seq s;
  for (int i = 0; i < n; ++i) s = join(s, Seq{static_cast<std::uint64_t>(counts[i]) % kPrime + 1, 1, kBase});
  return s.hash;
}
}  // namespace

Collective describe_data(RankState& rs, const Comm& c, const char* name, int count, MPI_Datatype t, int root,
                         MPI_Op op) {
  check_count(count);
  if (c.inter) {
    // MPI_Bcast, MPI_Reduce: the root's data is every member's of the other group; MPI_Allreduce:
    // each group's is the other's.
    Collective d = inter_named(c, name, root, op);
    const std::optional<InterRole> role = role_in(c, root);
    d.args =
        fmt::format("count={}, {}{}{}", count, type_text(rs, t), d.has_op ? ", " + op_text(op) : "", root_text(root));
    if (role == InterRole::idle) return d;
    const Signature sig = signature(committed(rs, t), static_cast<std::size_t>(count));
    d.has_unit = !role;
    d.per_rank = !d.has_unit;
    d.unit = sig;
    if (role == InterRole::root) d.blocks.assign(static_cast<std::size_t>(c.remote_size), sig);
    return d;
  }
  if (root != Collective::kNoRoot) check_root(c, root);
  Collective d = named(name, root, op);
  d.has_unit = true;
  d.unit = signature(committed(rs, t), static_cast<std::size_t>(count));
  d.args = fmt::format("count={}, {}{}{}", count, type_text(rs, t), op == MPI_OP_NULL ? "" : ", " + op_text(op),
                       root_text(root));
  return d;
}

Collective describe_rooted(RankState& rs, const Comm& c, const char* name, bool gather, const void* sendbuf,
                           int sendcount, MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root) {
  if (c.inter) {
    // The root's block for each member of the other group against that member's own.
    Collective d = inter_named(c, name, root, MPI_OP_NULL);
    const std::optional<InterRole> role = role_in(c, root);
    d.args = "root=" + root_value(root);
    if (role == InterRole::idle) return d;
    const bool use_send = gather != (role == InterRole::root);
    const int count = use_send ? sendcount : recvcount;
    const MPI_Datatype t = use_send ? sendtype : recvtype;
    check_count(count);
    d.per_rank = true;
    d.unit = signature(committed(rs, t), static_cast<std::size_t>(count));
    if (role == InterRole::root) d.blocks.assign(static_cast<std::size_t>(c.remote_size), d.unit);
    d.args =
        fmt::format("{}count={}, {}, root={}", use_send ? "send" : "recv", count, type_text(rs, t), root_value(root));
    return d;
  }
  check_root(c, root);
  Collective d = named(name, root, MPI_OP_NULL);
  d.has_unit = true;
  const bool am_root = c.rank == root;
  // The block this rank sends or receives: a member's own, the root's for each rank.
  const bool use_send = gather != am_root;
  const int count = use_send ? sendcount : recvcount;
  const MPI_Datatype t = use_send ? sendtype : recvtype;
  check_count(count);
  d.unit = signature(committed(rs, t), static_cast<std::size_t>(count));
  d.args = fmt::format("{}count={}, {}, root={}", use_send ? "send" : "recv", count, type_text(rs, t), root);
  // The root's own block, unless in place, is sent to itself.
  const bool in_place = gather ? sendbuf == MPI_IN_PLACE : recvbuf == MPI_IN_PLACE;
  if (am_root && !in_place) {
    const int own_count = gather ? sendcount : recvcount;
    const MPI_Datatype own = gather ? sendtype : recvtype;
    check_count(own_count);
    const Signature mine = signature(committed(rs, own), static_cast<std::size_t>(own_count));
    const std::string own_text = fmt::format("{} x {}", own_count, type_text(rs, own));
    const std::string block_text = fmt::format("{} x {}", count, type_text(rs, t));
    if (gather)
      check_own_blocks("root's send block", mine, own_text, d.unit, block_text);
    else
      check_own_blocks("root's receive block", mine, own_text, d.unit, block_text);
  }
  return d;
}

Collective describe_rooted_v(RankState& rs, const Comm& c, const char* name, bool gather, int root,
                             const int root_counts[], MPI_Datatype root_type, int count, MPI_Datatype type,
                             bool root_in_place) {
  const char* side = gather ? "recv" : "send";
  if (c.inter) {
    Collective d = inter_named(c, name, root, MPI_OP_NULL);
    const std::optional<InterRole> role = role_in(c, root);
    d.args = "root=" + root_value(root);
    if (role == InterRole::idle) return d;
    d.per_rank = true;
    if (role == InterRole::root) {
      const Type& rt = committed(rs, root_type);
      check_arrays(c.remote_size, {{gather ? "recvcounts" : "sendcounts", root_counts}});
      for (int i = 0; i < c.remote_size; ++i) {
        check_count(root_counts[i]);
        d.blocks.push_back(signature(rt, static_cast<std::size_t>(root_counts[i])));
      }
      d.args = fmt::format("{}counts={}, {}, root=MPI_ROOT", side, counts_text(root_counts, c.remote_size),
                           type_text(rs, root_type));
      return d;
    }
    check_count(count);
    d.unit = signature(committed(rs, type), static_cast<std::size_t>(count));
    d.args = fmt::format("{}count={}, {}, root={}", gather ? "send" : "recv", count, type_text(rs, type), root);
    return d;
  }
  check_root(c, root);
  Collective d = named(name, root, MPI_OP_NULL);
  d.per_rank = true;
  if (c.rank == root) {
    const Type& rt = committed(rs, root_type);
    check_arrays(c.size, {{gather ? "recvcounts" : "sendcounts", root_counts}});
    for (int i = 0; i < c.size; ++i) {
      check_count(root_counts[i]);
      d.blocks.push_back(signature(rt, static_cast<std::size_t>(root_counts[i])));
    }
    d.unit = d.blocks[static_cast<std::size_t>(root)];
    d.args =
        fmt::format("{}counts={}, {}, root={}", side, counts_text(root_counts, c.size), type_text(rs, root_type), root);
    if (!root_in_place) {
      check_count(count);
      check_own_blocks(gather ? "root's send block" : "root's receive block",
                       signature(committed(rs, type), static_cast<std::size_t>(count)),
                       fmt::format("{} x {}", count, type_text(rs, type)), d.unit,
                       fmt::format("{} x {}", root_counts[root], type_text(rs, root_type)));
    }
    return d;
  }
  check_count(count);
  d.unit = signature(committed(rs, type), static_cast<std::size_t>(count));
  d.args = fmt::format("{}count={}, {}, root={}", gather ? "send" : "recv", count, type_text(rs, type), root);
  return d;
}

Collective describe_all(RankState& rs, const Comm& c, const char* name, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype, bool alltoall) {
  if (c.inter) {
    // A block from each member of one group to each of the other.
    no_in_place(sendbuf);
    Collective d = inter_named(c, name, Collective::kNoRoot, MPI_OP_NULL);
    d.sends = uniform(rs, c.remote_size, sendcount, sendtype);
    d.recvs = uniform(rs, c.remote_size, recvcount, recvtype);
    d.args = fmt::format("sendcount={}, {}, recvcount={}, {}", sendcount, type_text(rs, sendtype), recvcount,
                         type_text(rs, recvtype));
    return d;
  }
  Collective d = named(name, Collective::kNoRoot, MPI_OP_NULL);
  check_count(recvcount);
  d.has_unit = true;
  d.unit = signature(committed(rs, recvtype), static_cast<std::size_t>(recvcount));
  const std::string recv_text = fmt::format("{} x {}", recvcount, type_text(rs, recvtype));
  if (sendbuf == MPI_IN_PLACE) {
    d.args = fmt::format("MPI_IN_PLACE, recvcount={}, {}", recvcount, type_text(rs, recvtype));
    return d;
  }
  check_count(sendcount);
  d.args = fmt::format("sendcount={}, {}, recvcount={}, {}", sendcount, type_text(rs, sendtype), recvcount,
                       type_text(rs, recvtype));
  // A rank sends each block to one rank, itself among them, that receives it as the rest do.
  check_own_blocks(alltoall ? "block each rank sends" : "block the rank sends",
                   signature(committed(rs, sendtype), static_cast<std::size_t>(sendcount)),
                   fmt::format("{} x {}", sendcount, type_text(rs, sendtype)), d.unit, recv_text);
  return d;
}

Collective describe_allgatherv(RankState& rs, const Comm& c, const char* name, const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, const int recvcounts[], MPI_Datatype recvtype) {
  if (c.inter) {
    no_in_place(sendbuf);
    Collective d = inter_named(c, name, Collective::kNoRoot, MPI_OP_NULL);
    d.sends = uniform(rs, c.remote_size, sendcount, sendtype);
    const Type& rt = committed(rs, recvtype);
    check_arrays(c.remote_size, {{"recvcounts", recvcounts}});
    for (int i = 0; i < c.remote_size; ++i) {
      check_count(recvcounts[i]);
      d.recvs.push_back({recvcounts[i], recvtype, signature(rt, static_cast<std::size_t>(recvcounts[i]))});
    }
    d.args = fmt::format("sendcount={}, {}, recvcounts={}, {}", sendcount, type_text(rs, sendtype),
                         counts_text(recvcounts, c.remote_size), type_text(rs, recvtype));
    return d;
  }
  Collective d = named(name, Collective::kNoRoot, MPI_OP_NULL);
  const Type& rt = committed(rs, recvtype);
  // Every rank's blocks alike: their signatures in order, hashed (the same blocks may be built of
  // other datatypes on other ranks); blocks of MPI_BYTE or MPI_PACKED, which match any, are not.
  Seq blocks;
  check_arrays(c.size, {{"recvcounts", recvcounts}});
  for (int i = 0; i < c.size; ++i) {
    check_count(recvcounts[i]);
    const Signature b = signature(rt, static_cast<std::size_t>(recvcounts[i]));
    blocks = join(blocks, Seq{b.hash % (kPrime - 1) + 1, 1, kBase});
    blocks = join(blocks, Seq{b.elements % (kPrime - 1) + 1, 1, kBase});
  }
  d.has_shape = !element_hash(rt).untyped;
  d.shape = blocks.hash;
  d.args = fmt::format("{}recvcounts={}, {}",
                       sendbuf == MPI_IN_PLACE ? "MPI_IN_PLACE, "
                                               : fmt::format("sendcount={}, {}, ", sendcount, type_text(rs, sendtype)),
                       counts_text(recvcounts, c.size), type_text(rs, recvtype));
  if (sendbuf != MPI_IN_PLACE) {
    check_count(sendcount);
    check_own_blocks("block the rank sends", signature(committed(rs, sendtype), static_cast<std::size_t>(sendcount)),
                     fmt::format("{} x {}", sendcount, type_text(rs, sendtype)),
                     signature(rt, static_cast<std::size_t>(recvcounts[c.rank])),
                     fmt::format("{} x {}", recvcounts[c.rank], type_text(rs, recvtype)));
  }
  return d;
}

Collective describe_pairwise(RankState& rs, const Comm& c, const char* name, const void* sendbuf,
                             const int sendcounts[], const MPI_Datatype sendtypes[], const int recvcounts[],
                             const MPI_Datatype recvtypes[], bool per_block_types) {
  // By rank of the communicator; on an intercommunicator, of the other group.
  if (c.inter) no_in_place(sendbuf);
  Collective d =
      c.inter ? inter_named(c, name, Collective::kNoRoot, MPI_OP_NULL) : named(name, Collective::kNoRoot, MPI_OP_NULL);
  const int n = c.peers();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  auto blocks = [&](bool send, const int counts[], const MPI_Datatype types[]) {
    check_arrays(n, {{send ? "sendtypes" : "recvtypes", types}});
    std::vector<Collective::Block> out;
    check_arrays(n, {{send ? "sendcounts" : "recvcounts", counts}});
    for (int i = 0; i < n; ++i) {
      check_count(counts[i]);
      const MPI_Datatype t = types[per_block_types ? i : 0];
      out.push_back({counts[i], t, signature(committed(rs, t), static_cast<std::size_t>(counts[i]))});
    }
    return out;
  };
  d.recvs = blocks(false, recvcounts, recvtypes);
  d.sends = in_place ? d.recvs : blocks(true, sendcounts, sendtypes);
  // The block a rank sends itself is the one it receives from itself (no peer compares it).
  if (!c.inter && !in_place) {
    const auto me = static_cast<std::size_t>(c.rank);
    const auto block_text = [&](const Collective::Block& b) {
      return fmt::format("{} x {}", b.count, type_text(rs, b.type));
    };
    check_own_blocks("block the rank sends itself", d.sends[me].sig, block_text(d.sends[me]), d.recvs[me].sig,
                     block_text(d.recvs[me]));
  }
  auto text = [&](const int counts[], const MPI_Datatype types[]) {
    return blocks_text(rs, counts, n, types, per_block_types);
  };
  d.args = in_place
               ? fmt::format("MPI_IN_PLACE, recvcounts={}", text(recvcounts, recvtypes))
               : fmt::format("sendcounts={}, recvcounts={}", text(sendcounts, sendtypes), text(recvcounts, recvtypes));
  return d;
}

Collective describe_reduce_scatter(RankState& rs, const Comm& c, const char* name, const int recvcounts[],
                                   MPI_Datatype t, MPI_Op op) {
  Collective d = c.inter ? inter_named(c, name, Collective::kNoRoot, op) : named(name, Collective::kNoRoot, op);
  std::size_t total = 0;
  check_arrays(c.size, {{"recvcounts", recvcounts}});
  for (int i = 0; i < c.size; ++i) {
    check_count(recvcounts[i]);
    total += static_cast<std::size_t>(recvcounts[i]);
  }
  d.has_unit = true;
  // On an intercommunicator each group reduces vectors of its counts' sum, which the other group
  // scatters by its own counts (MPI-3.1 5.10.1): the sums alike across the groups, the counts within.
  d.unit = signature(committed(rs, t), c.inter ? total : 1);
  d.has_shape = true;
  d.shape = counts_hash(recvcounts, c.size);
  d.args = fmt::format("recvcounts={}, {}, {}", counts_text(recvcounts, c.size), type_text(rs, t), op_text(op));
  return d;
}

Collective describe_reduce_scatter_block(RankState& rs, const Comm& c, const char* name, int recvcount, MPI_Datatype t,
                                         MPI_Op op) {
  if (!c.inter) return describe_data(rs, c, name, recvcount, t, Collective::kNoRoot, op);
  check_count(recvcount);
  const std::vector<int> counts(static_cast<std::size_t>(c.size), recvcount);
  Collective d = describe_reduce_scatter(rs, c, name, counts.data(), t, op);
  d.args = fmt::format("recvcount={}, {}, {}", recvcount, type_text(rs, t), op_text(op));
  return d;
}

Collective describe_neighbor(RankState& rs, const Comm& c, const char* name, int sendcount, const int sendcounts[],
                             const MPI_Datatype sendtypes[], int recvcount, const int recvcounts[],
                             const MPI_Datatype recvtypes[], bool per_block_types, Varying varying) {
  const Neighbors nb = neighbors_of(c);
  if (varying == Varying::both) check_arrays(static_cast<int>(nb.destinations.size()), {{"sendcounts", sendcounts}});
  if (varying != Varying::none) check_arrays(static_cast<int>(nb.sources.size()), {{"recvcounts", recvcounts}});
  Collective d = named(name, Collective::kNoRoot, MPI_OP_NULL);
  d.neighborhood = true;
  d.cartesian = nb.cartesian;
  // A block of an MPI_PROC_NULL neighbour is sent nowhere: no signature (the body checks its datatype).
  auto blocks = [&](bool send, const std::vector<int>& peers, int count, const int counts[],
                    const MPI_Datatype types[]) {
    if (per_block_types) check_arrays(static_cast<int>(peers.size()), {{send ? "sendtypes" : "recvtypes", types}});
    std::vector<Collective::Block> out;
    for (std::size_t i = 0; i < peers.size(); ++i) {
      const int n = counts ? counts[i] : count;
      const MPI_Datatype t = types[per_block_types ? i : 0];
      check_count(n);
      out.push_back(
          {n, t, peers[i] == MPI_PROC_NULL ? Signature{} : signature(committed(rs, t), static_cast<std::size_t>(n))});
    }
    return out;
  };
  d.sends = blocks(true, nb.destinations, sendcount, sendcounts, sendtypes);
  d.recvs = blocks(false, nb.sources, recvcount, recvcounts, recvtypes);
  auto text = [&](const char* what, int count, const int counts[], const MPI_Datatype types[], std::size_t n) {
    if (!counts) return fmt::format("{}count={}, {}", what, count, type_text(rs, types[0]));
    return fmt::format("{}counts={}", what, blocks_text(rs, counts, static_cast<int>(n), types, per_block_types));
  };
  d.args = text("send", sendcount, sendcounts, sendtypes, nb.destinations.size()) + ", " +
           text("recv", recvcount, recvcounts, recvtypes, nb.sources.size());
  d.sources = nb.sources;
  d.destinations = nb.destinations;
  return d;
}

// ------------------------------------------------------------------ messages

namespace {

// What the window's notes carry (split_checks), each note after its kind.
enum class NoteKind : std::uint8_t {
  sent = 1,
  lock_conflict = 2,
  lock_conflict_read = 3,
  collective = 4,
  attached = 5,
  remote_access = 6
};

// A Sent as the window's notes carry it, followed by its derived type's signature runs and three
// texts: the type, the call and its site, as the sender's process names them.
struct SentNote {
  std::uint64_t context, hash, elements, bytes;
  std::int32_t receiver, from, to, tag, count, type, rank, world, runs, untyped;
};

// A note for the window's end (split_checks), from a rank's turn or a handler in the event loop;
// append_note with outbox_lock held.
void append_note(CheckState& st, const Packed& note) {
  st.outbox.bytes.insert(st.outbox.bytes.end(), note.bytes.begin(), note.bytes.end());
}
void post(CheckState& st, const Packed& note) {
  const std::lock_guard lock(st.outbox_lock);
  append_note(st, note);
}

}  // namespace

// ------------------------------------------------------------------ split runs: collective calls

// A collective call of a split run. Its members may enter in different processes within one window,
// and one process compares each call with its peers' as it enters: so every call of the window is
// published at its end to every process, which compares them all in the sequential order (by the
// time of the turn, then the turn's place at its instant, then the process's own order:
// docs/model.md 1.3) as one process does at entry. The first mismatch fails the run at the turn of
// the call that found it (window_failure).
struct SplitEntry {
  Time at = 0;              // the time of its turn
  std::uint64_t place = 0;  // ... and its place among that instant's (RunOptions::on_vp_resume)
  std::uint64_t seq = 0;    // its place among its process's calls
  Time clock = 0;         // the rank's clock, which the report gives
  Order order{};
  bool fatal = true;        // the communicator's error handler ends the run
  std::uint32_t piece = 0;  // the rank's output from the call on (RankOutput::cut)
  std::uint32_t mark = 0;   // its place inside the turn (Proc::mark), where a mismatch cuts the run
  std::string call;         // the MPI function
  Entered me;
};

// A change of a dynamic window's regions (note_attached), and an access an origin checked against
// a target's regions in another process (note_remote_access), in the window they were made in. The
// notes carry a SplitAttach as it is, and an access's fixed part followed by its texts.
struct SplitAttach {
  Time at;
  std::uint64_t place, seq, lo, size;
  std::int64_t handle;
  std::int32_t world, reset, attach;
};
struct SplitAccess {
  struct Fixed {
    Time at, clock;
    std::uint64_t place, seq, lo, hi;
    std::int64_t handle;
    std::int32_t world, target, fatal, covered, code;
    std::uint32_t piece, mark;
  } n;
  std::string call, what, fatal_report;
};

struct WindowChecks {
  std::uint64_t made = 0;  // this process's notes so far: their order among its ranks' calls
  // This window's, this process's as made, then the others' as taken.
  std::vector<SplitEntry> entries;
  std::vector<SplitAttach> attaches;
  std::vector<SplitAccess> accesses;
  // Each dynamic window's regions as this window's start found them, by (target world rank, its handle).
  std::map<std::pair<int, std::int64_t>, Regions> attached;
};

namespace {

// The names of MPI functions in another process's calls, kept for the run (Collective::name and
// CallSite::call are pointers to static strings in the process that made them).
const char* interned(std::string name) {
  if (name.empty()) return nullptr;
  static std::mutex lock;
  static std::set<std::string> names;
  const std::lock_guard guard(lock);
  return names.insert(std::move(name)).first->c_str();
}

void put_signature(Packed& p, const Signature& g) {
  p.put(std::array<std::uint64_t, 4>{g.hash, g.elements, g.bytes, g.untyped ? 1u : 0u});
}
Signature take_signature(Unpacker& in) {
  const auto [hash, elements, bytes, untyped] = in.take<std::array<std::uint64_t, 4>>();
  return Signature{hash, elements, bytes, untyped != 0};
}
void put_ints(Packed& p, const std::vector<int>& v) {
  p.put(v.size());
  for (const int x : v) p.put(x);
}
std::vector<int> take_ints(Unpacker& in) {
  std::vector<int> v(in.take<std::size_t>());
  for (int& x : v) x = in.take<int>();
  return v;
}
void put_blocks(Packed& p, const std::vector<Collective::Block>& blocks) {
  p.put(blocks.size());
  for (const Collective::Block& b : blocks) {
    p.put(std::array<std::int32_t, 2>{b.count, b.type});
    put_signature(p, b.sig);
  }
}
std::vector<Collective::Block> take_blocks(Unpacker& in) {
  std::vector<Collective::Block> blocks(in.take<std::size_t>());
  for (Collective::Block& b : blocks) {
    const auto [count, type] = in.take<std::array<std::int32_t, 2>>();
    b.count = count, b.type = type;
    b.sig = take_signature(in);
  }
  return blocks;
}

// The fixed part of a SplitEntry as the window's notes carry it.
struct EntryHead {
  Time at, clock;
  std::uint64_t place, seq, context, n, shape;
  std::int32_t members, size, remote_size, root, op, rank, world, index, side;
  std::uint32_t piece, mark;
  std::uint8_t fatal, inter, has_unit, has_shape, per_rank, has_op, collective_inter, neighborhood, cartesian;
};

void put_entry(Packed& p, const SplitEntry& e) {
  const Entered& me = e.me;
  const Collective& d = me.d;
  EntryHead h{};
  h.at = e.at, h.clock = e.clock, h.place = e.place, h.seq = e.seq, h.context = e.order.context, h.n = e.order.n,
  h.shape = d.shape;
  h.members = e.order.members, h.size = e.order.size, h.remote_size = e.order.remote_size, h.root = d.root;
  h.op = d.op, h.rank = me.rank, h.world = me.world, h.index = me.index, h.side = me.side, h.piece = e.piece;
  h.mark = e.mark;
  h.fatal = e.fatal, h.inter = me.inter, h.has_unit = d.has_unit, h.has_shape = d.has_shape;
  h.per_rank = d.per_rank, h.has_op = d.has_op, h.collective_inter = d.inter, h.neighborhood = d.neighborhood;
  h.cartesian = d.cartesian;
  p.put(NoteKind::collective);
  p.put(h);
  put_signature(p, d.unit);
  p.put(d.blocks.size());
  for (const Signature& g : d.blocks) put_signature(p, g);
  put_blocks(p, d.sends);
  put_blocks(p, d.recvs);
  put_ints(p, d.sources);
  put_ints(p, d.destinations);
  for (const std::string_view text :
       {std::string_view(d.name), std::string_view(d.args), std::string_view(e.call),
        std::string_view(me.start.call ? me.start.call : ""), std::string_view(me.named->comm),
        std::string_view(me.named->site), std::string_view(me.named->start_site)})
    p.put_text(text);
  p.put(me.named->types.size());
  for (const auto& [type, name] : me.named->types) {
    p.put(static_cast<std::int32_t>(type));
    p.put_text(name);
  }
}

SplitEntry take_entry(Unpacker& in) {
  const auto h = in.take<EntryHead>();
  SplitEntry e;
  e.at = h.at, e.clock = h.clock, e.place = h.place, e.seq = h.seq, e.piece = h.piece, e.mark = h.mark,
  e.fatal = h.fatal != 0;
  e.order = Order{h.context, h.n, h.members, h.size, h.remote_size};
  Entered& me = e.me;
  me.rank = h.rank, me.world = h.world, me.index = h.index, me.side = h.side, me.inter = h.inter != 0;
  Collective& d = me.d;
  d.root = h.root, d.op = h.op, d.shape = h.shape, d.has_unit = h.has_unit != 0, d.has_shape = h.has_shape != 0;
  d.per_rank = h.per_rank != 0, d.has_op = h.has_op != 0, d.inter = h.collective_inter != 0;
  d.neighborhood = h.neighborhood != 0, d.cartesian = h.cartesian != 0;
  d.unit = take_signature(in);
  d.blocks.resize(in.take<std::size_t>());
  for (Signature& g : d.blocks) g = take_signature(in);
  d.sends = take_blocks(in);
  d.recvs = take_blocks(in);
  d.sources = take_ints(in);
  d.destinations = take_ints(in);
  d.name = interned(in.take_text());
  d.args = in.take_text();
  e.call = in.take_text();
  me.start.call = interned(in.take_text());
  auto named = std::make_shared<Entered::Named>();
  named->comm = in.take_text();
  named->site = in.take_text();
  named->start_site = in.take_text();
  for (auto types = in.take<std::size_t>(); types > 0; --types) {
    const auto type = in.take<std::int32_t>();
    named->types.emplace(type, in.take_text());
  }
  me.named = std::move(named);
  if (!d.name || h.world < 0 || h.world >= session()->np)
    throw RunError("a split run's processes disagree on what they swap (a corrupt exchange)");
  return e;
}

// A split run's collective call at its entry: named here, published at the window's end, and
// compared there (compare_window). Its rank's output is cut at the call, so that what it writes after
// a call found to fail can be dropped.
void enter_split(RankState& rs, MPI_Comm comm, const Order& at, Entered me) {
  Session& s = *session();
  auto named = std::make_shared<Entered::Named>();
  named->comm = comm_text(rs, comm);
  named->site = site_text(me.site.caller);
  if (me.start.call) named->start_site = site_text(me.start.caller);
  for (const std::vector<Collective::Block>* blocks : {&me.d.sends, &me.d.recvs})
    for (const Collective::Block& b : *blocks)
      if (!named->types.contains(b.type)) named->types.emplace(b.type, type_text(rs, b.type));
  me.named = std::move(named);
  SplitEntry e;
  e.at = rs.turn_at;
  e.place = rs.turn_place;
  e.clock = rs.proc->now();
  e.order = at;
  e.fatal = errors_are_fatal(rs, comm);
  e.piece = s.cut_output ? s.cut_output(me.world) : 0;
  e.mark = rs.proc->mark();
  e.call = rs.last_call ? rs.last_call : "";
  e.me = std::move(me);
  CheckState& st = shared();
  Packed p;
  const std::lock_guard lock(st.outbox_lock);
  e.seq = st.window_checks->made++;
  put_entry(p, e);
  append_note(st, p);
  st.window_checks->entries.push_back(std::move(e));
}

// A dynamic window's change of regions, in the order its rank made them.
void apply(Regions& regions, const SplitAttach& a) {
  if (a.reset) return regions.clear();
  if (a.attach) {
    regions.emplace_back(a.lo, a.size);
    return;
  }
  const auto it = std::find_if(regions.begin(), regions.end(), [&](const auto& r) { return r.first == a.lo; });
  if (it != regions.end()) regions.erase(it);
}

// A remote access whose verdict at its call (against the regions of the window's start) is not
// the one the sequential order gives: the run fails there. Accepted at the call, one process would
// have raised its error there; refused at the call, one process would have accepted it.
std::string access_failure(const SplitAccess& a) {
  if (!a.n.covered)
    return fmt::format(
        "{} on rank {}: a run split over processes checked this access against the regions rank {}'s "
        "dynamic window had at the start of the window it was made in, and found it outside them; "
        "the target attached them before the access, without a message between the two, and the "
        "window's error handler returned the error to the call: run the program in one process",
        a.call, a.n.world, a.n.target);
  if (a.n.fatal) return a.fatal_report;
  return fmt::format(
      "{} on rank {}: {} ({}); its window's error handler would return the error to the call, but a "
      "run split over processes found it at the end of the window the call was made in (the target "
      "detached the memory before the access, without a message between the two): run the program "
      "in one process",
      a.call, a.n.world, a.what, error_text(a.n.code));
}

// Every process's collective calls, dynamic windows' changes and accesses to another process's
// target of the window, compared in the sequential order; the same in every process.
std::optional<RunOptions::WindowFailure> compare_window(CheckState& st) {
  std::vector<SplitEntry> entries;
  std::vector<SplitAttach> attaches;
  std::vector<SplitAccess> accesses;
  {
    const std::lock_guard lock(st.outbox_lock);
    WindowChecks& w = *st.window_checks;
    entries.swap(w.entries);
    attaches.swap(w.attaches);
    accesses.swap(w.accesses);
  }
  // Turns of different processes have different places at an instant; one process's notes at one
  // place are in the order it made them (seq).
  struct Key {
    Time at;
    std::uint64_t place, seq;
    int kind;  // 0 a collective call, 1 a change of regions, 2 an access
    std::size_t index;
  };
  std::vector<Key> order;
  for (std::size_t i = 0; i < entries.size(); ++i)
    order.push_back({entries[i].at, entries[i].place, entries[i].seq, 0, i});
  for (std::size_t i = 0; i < attaches.size(); ++i)
    order.push_back({attaches[i].at, attaches[i].place, attaches[i].seq, 1, i});
  for (std::size_t i = 0; i < accesses.size(); ++i)
    order.push_back({accesses[i].n.at, accesses[i].n.place, accesses[i].n.seq, 2, i});
  std::sort(order.begin(), order.end(),
            [](const Key& a, const Key& b) { return std::tie(a.at, a.place, a.seq) < std::tie(b.at, b.place, b.seq); });
  Session& s = *session();
  auto& attached = st.window_checks->attached;  // the event loop's thread alone reads and writes it now
  for (const Key& k : order) {
    if (k.kind == 1) {
      const SplitAttach& a = attaches[k.index];
      apply(attached[{a.world, a.handle}], a);
      continue;
    }
    if (k.kind == 2) {
      const SplitAccess& a = accesses[k.index];
      if (covers(attached[{a.n.target, a.n.handle}], a.n.lo, a.n.hi) == (a.n.covered != 0)) continue;
      if (s.drop_output_from) s.drop_output_from(a.n.world, a.n.at, a.n.place, a.n.piece);
      return RunOptions::WindowFailure{a.n.at, a.n.world, a.n.clock, access_failure(a), a.n.mark, a.n.place};
    }
    SplitEntry& e = entries[k.index];
    RankState& rs = s.rank(e.me.world);
    try {
      check_in(rs, MPI_COMM_NULL, e.order, std::move(e.me));
    } catch (const MpiError& err) {
      if (s.drop_output_from) s.drop_output_from(e.me.world, e.at, e.place, e.piece);
      std::string what =
          e.fatal ? fatal_text(rs, e.call.c_str(), e.me.world, err)
                  : fmt::format(
                        "{} on rank {}: {} ({}); its communicator's error handler would return the error to "
                        "the call, but a run split over processes compares a collective's calls at the end of "
                        "the window they were made in, after they returned: run the program in one process",
                        e.call, e.me.world, err.what, error_kind(rs, err.code));
      return RunOptions::WindowFailure{e.at, e.me.world, e.clock, std::move(what), e.mark, e.place};
    }
  }
  return std::nullopt;
}

void note_sent(CheckState& st, int receiver, const MessageKey& key, const Sent& m) {
  Packed p;
  p.put(NoteKind::sent);
  const std::size_t runs = m.derived ? m.derived->signature.size() : 0;
  p.put(SentNote{key.context, m.sig.hash, m.sig.elements, m.sig.bytes, receiver, key.from, key.to, key.tag, m.count,
                 m.type, m.rank, m.world, static_cast<std::int32_t>(runs), m.sig.untyped});
  for (std::size_t i = 0; i < runs; ++i) {
    p.put(static_cast<std::int32_t>(m.derived->signature[i].first));
    p.put(static_cast<std::uint64_t>(m.derived->signature[i].second));
  }
  p.put_text(m.derived ? derived_text(*m.derived, m.type) : std::string());
  p.put_text(m.site.call ? m.site.call : "");
  p.put_text(site_text(m.site.caller));
  post(st, p);
}

// Another process's records, in the order its ranks sent: each one to a rank of this process joins
// its receiver's queue as the sender's record would have in one process (the notes go to every
// process: the others pass over it).
void take_notes(CheckState& st, std::span<const std::byte> bytes) {
  Unpacker in(bytes);
  while (!in.empty()) {
    const auto kind = in.take<NoteKind>();
    if (kind == NoteKind::collective) {
      SplitEntry e = take_entry(in);
      const std::lock_guard lock(st.outbox_lock);
      st.window_checks->entries.push_back(std::move(e));
      continue;
    }
    if (kind == NoteKind::attached) {
      const auto a = in.take<SplitAttach>();
      const std::lock_guard lock(st.outbox_lock);
      st.window_checks->attaches.push_back(a);
      continue;
    }
    if (kind == NoteKind::remote_access) {
      SplitAccess a{in.take<SplitAccess::Fixed>(), {}, {}, {}};
      a.call = in.take_text();
      a.what = in.take_text();
      a.fatal_report = in.take_text();
      const std::lock_guard lock(st.outbox_lock);
      st.window_checks->accesses.push_back(std::move(a));
      continue;
    }
    if (kind == NoteKind::lock_conflict || kind == NoteKind::lock_conflict_read) {
      const auto [target, handle, origin] = in.take<std::array<std::int32_t, 3>>();
      const bool told = kind == NoteKind::lock_conflict;
      std::string text = told ? in.take_text() : std::string();
      const int to = told ? origin : target;
      if (to < st.first_here || to >= st.end_here) continue;
      const std::lock_guard lock(st.outbox_lock);
      if (told)
        st.told_conflicts[{target, handle, origin}] = std::move(text);
      else
        st.conflicts_read.insert({target, handle, origin});
      continue;
    }
    if (kind != NoteKind::sent)
      throw RunError("a split run's processes disagree on what they swap (a corrupt exchange)");
    const auto n = in.take<SentNote>();
    if (n.receiver < 0 || n.receiver >= static_cast<int>(st.messages_to.size()) || n.runs < 0)
      throw RunError("a split run's processes disagree on what they swap (a corrupt exchange)");
    if (n.receiver < st.first_here || n.receiver >= st.end_here) {
      for (std::int32_t i = 0; i < n.runs; ++i) in.first(sizeof(std::int32_t) + sizeof(std::uint64_t));
      for (int text = 0; text < 3; ++text) in.take_bytes();
      continue;
    }
    Sent m;
    m.sig = Signature{n.hash, n.elements, n.bytes, n.untyped != 0};
    m.count = n.count;
    m.type = n.type;
    m.rank = n.rank;
    m.world = n.world;
    std::shared_ptr<Type> derived;
    if (n.runs > 0 || !predefined_type(n.type)) derived = std::make_shared<Type>();
    for (std::int32_t i = 0; i < n.runs; ++i) {
      const auto basic = in.take<std::int32_t>();
      derived->signature.emplace_back(basic, in.take<std::uint64_t>());
    }
    std::string type = in.take_text();
    if (derived) {
      derived->name = std::move(type);  // derived_text names it so
      m.derived = std::move(derived);
    }
    std::string call = in.take_text();
    m.remote = std::make_shared<RemoteSite>(RemoteSite{std::move(call), in.take_text()});
    const auto r = static_cast<std::size_t>(n.receiver);
    const std::lock_guard lock(st.messages_to_lock[r]);
    Fifo& f = st.messages_to[r][MessageKey{n.context, n.from, n.to, n.tag}];
    if (f.head == f.items.size()) {
      f.items.clear();
      f.head = 0;
    }
    f.items.push_back(std::move(m));
  }
}

}  // namespace

void split_checks(Session& s, RunOptions& ro, int first, int end) {
  auto st = std::make_shared<CheckState>(s.split ? s.np : s.nodes);
  st->first_here = first;
  st->end_here = end;
  st->window_checks = std::make_shared<WindowChecks>();
  s.checks = st;
  ro.window_failure = [st] { return compare_window(*st); };
  add_window_notes(
      ro,
      [st] {
        const std::lock_guard lock(st->outbox_lock);
        return std::exchange(st->outbox.bytes, {});
      },
      [st](int, std::span<const std::byte> notes) { take_notes(*st, notes); });
}

bool runs_here(int world) {
  const CheckState* st = settings().checks.get();
  return !st || (world >= st->first_here && world < st->end_here);
}

void note_attached(RankState& rs, std::int64_t handle, std::uintptr_t at, std::size_t size, bool attach, bool reset) {
  CheckState* st = settings().checks.get();
  if (!st || !st->window_checks) return;  // one process: the target's regions are read where they are
  const std::lock_guard lock(st->outbox_lock);
  WindowChecks& w = *st->window_checks;
  const SplitAttach a{rs.turn_at, rs.turn_place, w.made++, at, size, handle, rs.proc->rank(), reset, attach};
  Packed p;
  p.put(NoteKind::attached);
  p.put(a);
  append_note(*st, p);
  w.attaches.push_back(a);
}

const Regions& attached_elsewhere(int world, std::int64_t handle) {
  // Written at the windows' ends on the event loop's thread, read in the ranks' turns: never at once.
  return settings().checks->window_checks->attached[{world, handle}];
}

bool covers(Regions regions, std::uintptr_t lo, std::uintptr_t hi) {
  std::sort(regions.begin(), regions.end());
  for (const auto& [at, n] : regions)
    if (at <= lo && at + n > lo) lo = at + n;
  return lo >= hi;
}

void note_remote_access(RankState& rs, int target_world, std::int64_t handle, std::uintptr_t lo, std::uintptr_t hi,
                        bool covered, const MpiError& error, bool fatal, std::string fatal_report) {
  Session& s = *session();
  CheckState& st = *s.checks;
  const std::uint32_t piece = s.cut_output ? s.cut_output(rs.proc->rank()) : 0;
  const std::uint32_t mark = rs.proc->mark();
  const char* call = rs.last_call ? rs.last_call : "";
  const std::lock_guard lock(st.outbox_lock);
  WindowChecks& w = *st.window_checks;
  const SplitAccess::Fixed n{rs.turn_at,      rs.proc->now(), rs.turn_place, w.made++, lo,         hi,    handle,
                             rs.proc->rank(), target_world,   fatal,         covered,  error.code, piece, mark};
  Packed p;
  p.put(NoteKind::remote_access);
  p.put(n);
  p.put_text(call);
  p.put_text(error.what);
  p.put_text(fatal_report);
  append_note(st, p);
  w.accesses.push_back({n, call, error.what, std::move(fatal_report)});
}

namespace {
void note_conflict(NoteKind kind, int target, int handle, int origin, const std::string* text) {
  CheckState& st = *settings().checks;  // a split run's (split_checks)
  Packed p;
  p.put(kind);
  p.put(std::array<std::int32_t, 3>{target, handle, origin});
  if (text) p.put_text(*text);
  post(st, p);
}
}  // namespace

void tell_lock_conflict(int target, int handle, int origin, const std::string& text) {
  note_conflict(NoteKind::lock_conflict, target, handle, origin, &text);
}

std::string take_told_lock_conflict(int target, int handle, int origin) {
  CheckState& st = *settings().checks;
  std::string text;
  {
    const std::lock_guard lock(st.outbox_lock);
    const auto it = st.told_conflicts.find({target, handle, origin});
    if (it == st.told_conflicts.end()) return {};
    text = std::move(it->second);
    st.told_conflicts.erase(it);
  }
  if (!text.empty()) note_conflict(NoteKind::lock_conflict_read, target, handle, origin, nullptr);
  return text;
}

bool take_lock_conflict_read(int target, int handle, int origin) {
  CheckState& st = *settings().checks;
  const std::lock_guard lock(st.outbox_lock);
  return st.conflicts_read.erase({target, handle, origin}) > 0;
}

void record_send(RankState& rs, const Comm& c, int to, int tag, int count, MPI_Datatype dt, const Type& t) {
  if (!settings().check_consistency) return;
  const int receiver = c.pt2pt.world_rank(to);
  CheckState& st = shared();
  const MessageKey key{c.pt2pt.context(), c.local_base + c.rank, to, tag};
  Sent m{signature(t, static_cast<std::size_t>(count)),
         count,
         dt,
         predefined_type(dt) ? nullptr : shared_copy(t),
         c.rank,
         rs.proc->rank(),
         CallSite{rs.last_call, rs.caller},
         nullptr};
  if (receiver < st.first_here || receiver >= st.end_here) return note_sent(st, receiver, key, m);
  const std::lock_guard lock(st.messages_to_lock[static_cast<std::size_t>(receiver)]);
  Fifo& f = sent_fifo(st, rs, key, receiver);
  if (f.head == f.items.size()) {
    f.items.clear();
    f.head = 0;
  }
  f.items.push_back(std::move(m));
}

namespace {
// Other receives of this rank still waiting on c: a message may have gone to one of them.
bool other_receives_pending(const RankState& rs, const Req& q) {
  for (const auto& r : rs.reqs)
    if (r && r.get() != &q && r->recv && !r->done && r->comm == q.comm && r->r.active()) return true;
  for (const auto& r : rs.messages)
    if (r && r.get() != &q && r->comm == q.comm) return true;
  for (const auto& r : rs.freed_receives)
    if (r && r.get() != &q && r->comm == q.comm) return true;
  return false;
}
}  // namespace

// Runs where the receive completes, which may be beside other ranks' code (the programs of an
// instant): it reads only this rank's state and its own queues, writes no type's cache, and takes
// its turn (session()) only to report a mismatch.
void check_receive(RankState& rs, const Comm& c, Req& q, int from, int tag, std::size_t bytes) {
  if (!settings().check_consistency) return;
  CheckState* st = settings().checks.get();
  if (!st) return;  // nothing was ever sent
  std::unique_lock lock(st->messages_to_lock[static_cast<std::size_t>(rs.proc->rank())]);
  Fifo* queue = received_fifo(rs, MessageKey{c.pt2pt.context(), from, c.local_base + c.rank, tag});
  if (!queue || queue->head == queue->items.size()) return;
  Fifo& f = *queue;
  const Type& t = q.recv_type ? *q.recv_type : type_of(rs, q.type);
  const auto mine = element_hash_kept_or_made(t);
  auto fits = [&](const Sent& m) {
    if (m.sig.untyped || mine.untyped) return true;
    const std::uint64_t room = mine.elements * static_cast<std::uint64_t>(q.count);
    if (m.sig.elements <= room) return prefix_hash(t, m.sig.elements) == m.sig.hash;
    // A message longer than the receive: the part that fits must match too, or the error is the
    // type, not only the length.
    const Type* sent = m.derived ? m.derived.get() : predefined_type(m.type);
    return !sent || prefix_hash(*sent, room) == count_hash(t, static_cast<std::uint64_t>(q.count));
  };
  std::size_t pick = f.head;
  if (!fits(f.items[pick]) && other_receives_pending(rs, q)) {
    // Messages of one (sender, tag) are matched in order, but their receives may complete in
    // another: the first one this receive fits is taken to be its own, so that a correct program
    // is never blamed for the order in which it completes its receives.
    for (std::size_t k = f.head + 1; k < f.items.size(); ++k)
      if (fits(f.items[k]) && f.items[k].sig.bytes == bytes) {
        std::swap(f.items[pick], f.items[k]);
        break;
      }
  }
  const Sent m = std::move(f.items[pick]);
  ++f.head;
  lock.unlock();  // a mismatch takes its turn (session()), in which senders fill the queues
  if (fits(m)) return;
  Session& s = *session();  // the sender's type by name: its rank's state, in turn
  auto who = [](int rank, int world) {
    return rank == world ? fmt::format("rank {}", rank) : fmt::format("rank {} (world rank {})", rank, world);
  };
  q.signature_error = std::make_shared<MpiError>(MpiError{
      MPI_ERR_TYPE,
      fmt::format("type signatures do not match on {}, tag {}: {} sent {} x {} with {}, and {} receives it as {} x {} "
                  "with {}{}",
                  comm_text(rs, q.comm), tag, who(m.rank, m.world), m.count,
                  m.derived ? derived_text(*m.derived, m.type) : type_text(s.rank(m.world), m.type), sent_by(m),
                  who(c.rank, rs.proc->rank()), q.count, type_text(rs, q.type), q.made_by.call,
                  site_text(q.made_by.caller))});
}

// ------------------------------------------------------------------ deadlocks

namespace {

std::string peer_text(int peer) {
  return peer == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE" : peer == MPI_PROC_NULL ? "MPI_PROC_NULL" : std::to_string(peer);
}

// A point-to-point request as the program posted it: "MPI_Irecv(source=1, tag=3, MPI_COMM_WORLD)".
std::string posted_text(RankState& rs, const Req& q) {
  // A blocking send's request has no handle and was not named: the call in progress posted it.
  const char* call = q.made_by.call ? q.made_by.call : rs.last_call;
  if (q.collective)
    return fmt::format("{}{} on {}", call, q.collective_args.empty() ? "" : "(" + q.collective_args + ")",
                       comm_text(rs, q.comm));
  auto tag = [](int t) { return t == MPI_ANY_TAG ? std::string("MPI_ANY_TAG") : std::to_string(t); };
  if (const Req* send = q.paired_send.get())  // MPI_Isendrecv(_replace)
    return fmt::format("{}(dest={}, sendtag={}, source={}, recvtag={}, {})", call, peer_text(send->peer), send->tag,
                       peer_text(q.peer), tag(q.tag), comm_text(rs, q.comm));
  return fmt::format("{}({}={}, tag={}, {})", call, q.recv ? "source" : "dest", peer_text(q.peer), tag(q.tag),
                     comm_text(rs, q.comm));
}

// Whether the runtime's pending operation is request q's.
bool waits_for(RankState& rs, const Req& q, const RunOptions::PendingOp& op) {
  const Comm* c = find_comm(rs, q.comm);
  if (q.collective || !c || op.send == q.recv || op.context != c->pt2pt.context()) return false;
  if ((q.tag == MPI_ANY_TAG) != (op.tag == any_tag) || (q.tag != MPI_ANY_TAG && q.tag != op.tag)) return false;
  if (q.peer == MPI_ANY_SOURCE) return op.peer == any_source;
  return op.peer == c->pt2pt.world_rank(c->peer_to_group(q.peer));
}

}  // namespace

std::string request_text(RankState& rs, const Req& q) { return posted_text(rs, q) + site_text(q.made_by.caller); }

std::string blocked_text(RankState& rs, const std::vector<RunOptions::PendingOp>& ops) {
  if (!rs.last_call || rs.call_depth == 0) return {};
  const std::string site = site_text(rs.caller);
  const Req* q = nullptr;
  for (const Req* w : rs.waiting)
    for (const auto& op : ops)
      if (!q && w && waits_for(rs, *w, op)) q = w;
  if (!q && !rs.waiting.empty()) q = rs.waiting.front();
  // Inside a collective (or another call that waits for no request of the program's).
  if (!q) return fmt::format("{} on {}{}", rs.last_call, comm_text(rs, rs.call_comm), site);
  // The call that posted the request blocks in it (MPI_Recv, MPI_Send): one call, one line.
  if (!q->made_by.call || (q->made_by.caller == rs.caller && q->made_by.call == rs.last_call))
    return posted_text(rs, *q) + site;
  const std::string of = rs.waiting.size() > 1 ? fmt::format(" (one of {} requests)", rs.waiting.size()) : "";
  return fmt::format("{}{} for {}{}{}", rs.last_call, site, posted_text(rs, *q), site_text(q->made_by.caller), of);
}

std::string finished_text(RankState& rs) {
  if (!rs.returned_error) return {};
  const RankState::ReturnedError& e = *rs.returned_error;
  return fmt::format("the last error returned to it: {}{}{}: {}", e.site.call, e.on, site_text(e.site.caller),
                     e.message);
}

namespace {
std::string message_on(Session& s, RankState& holder, bool at_receiver, const RunOptions::UnreceivedMessage& m);
}

std::string message_text(Session& s, const RunOptions::UnreceivedMessage& m) {
  if (!s.find_rank(m.src) || !s.find_rank(m.dst)) return {};
  // The machine's own messages between processes (dynamic.cpp): a connection's, a spawn's.
  if (s.machine_context && m.context == *s.machine_context) {
    const std::string what = connection_message(m.tag, m.dst);
    return what.empty() ? what : fmt::format("{} from rank {} to rank {}, {} bytes", what, m.src, m.dst, m.bytes);
  }
  // The communicator as the receiver holds it (the sender may have freed its handle since), else
  // as the sender does.
  for (const bool at_receiver : {true, false}) {
    RankState& holder = s.rank(at_receiver ? m.dst : m.src);
    if (auto text = message_on(s, holder, at_receiver, m); !text.empty()) return text;
  }
  return {};  // a message of no communicator (an interface inside MPI)
}

namespace {
std::string message_on(Session& s, RankState& holder, bool at_receiver, const RunOptions::UnreceivedMessage& m) {
  for (std::size_t h = 0; h < holder.comms.size(); ++h) {
    const Comm* c = holder.comms[h].get();
    if (!c || (c->pt2pt.context() != m.context && c->coll.context() != m.context)) continue;
    const bool collective = c->coll.context() == m.context;
    const auto members = (collective ? c->coll : c->pt2pt).members();
    const auto at = [&](int world) {
      return static_cast<int>(std::find(members.begin(), members.end(), world) - members.begin());
    };
    // Group ranks; on an intercommunicator the holder's side starts at local_base, the other side at
    // remote_base.
    const int from = at(m.src), to = at(m.dst);
    const int from_base = at_receiver ? c->remote_base : c->local_base;
    const int to_base = at_receiver ? c->local_base : c->remote_base;
    const auto who = [](int rank, int world) {
      return rank == world ? fmt::format("rank {}", rank) : fmt::format("rank {} (world rank {})", rank, world);
    };
    if (collective)
      return fmt::format("a message inside a collective on {} from {} to {}, {} bytes",
                         comm_text(holder, static_cast<MPI_Comm>(h)), who(from - from_base, m.src),
                         who(to - to_base, m.dst), m.bytes);
    std::string text = fmt::format("a message from {} to {} on {}, tag {}, {} bytes",
                                   who(from - from_base, m.src), who(to - to_base, m.dst),
                                   comm_text(holder, static_cast<MPI_Comm>(h)), m.tag, m.bytes);
    // The call that sent it, when the type check kept the sends of that holder, tag and receiver
    // and exactly the messages still waiting remain there.
    if (s.checks) {
      const auto& queues = s.checks->messages_to[static_cast<std::size_t>(m.dst)];
      const auto it = queues.find(MessageKey{m.context, from, to, m.tag});
      const Fifo* f = it == queues.end() ? nullptr : &it->second;
      if (f && f->items.size() - f->head == static_cast<std::size_t>(m.queued)) {
        const Sent& sent = f->items[f->head + static_cast<std::size_t>(m.earlier)];
        text += ", sent by " + sent_by(sent);
      }
    }
    return text;
  }
  return {};
}
}  // namespace

// ------------------------------------------------------------------ race reports

void note_wildcard(RankState& rs, std::uint64_t call, const char* mpi_call, const void* caller, int source, int tag,
                   MPI_Comm comm) {
  Session* s = session();
  if (!s || !s->races || (source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG)) return;
  if (const Comm* c = find_comm(rs, comm); c && !s->race_comms.contains(c->pt2pt.context()))
    s->race_comms[c->pt2pt.context()] = {{c->pt2pt.members().begin(), c->pt2pt.members().end()}, c->remote_base};
  s->wildcard_calls[{rs.proc->rank(), call}] =
      fmt::format("{}(source={}, tag={}, {}){}", mpi_call, peer_text(source),
                  tag == MPI_ANY_TAG ? "MPI_ANY_TAG" : std::to_string(tag), comm_text(rs, comm), site_text(caller));
}

std::string race_text(Session& s, const Race& race) {
  const auto it = s.wildcard_calls.find({race.rank, race.call});
  if (it == s.wildcard_calls.end() || !s.find_rank(race.rank)) return {};
  // "receive #N" is the rank's count of receives and probes, which --schedule RANK:N=SOURCE names.
  // The senders in the ranks of the receiver's communicator (its remote group's, on an
  // intercommunicator).
  const auto comm = s.race_comms.find(race.context);
  const auto sender = [&](int world) {
    if (comm != s.race_comms.end()) {
      const auto& members = comm->second.members;
      const auto at = std::find(members.begin(), members.end(), world);
      if (at != members.end())
        return fmt::format("rank {}", static_cast<int>(at - members.begin()) - comm->second.remote_base);
    }
    return fmt::format("world rank {}", world);
  };
  std::string text = fmt::format(
      "race: rank {} {} #{}: {}, {} t={} us, {} the message from {} (tag {}, arrived t={} us); it could also have "
      "matched:\n",
      race.rank, race.probe ? "probe" : "receive", race.call, it->second, race.probe ? "called" : "posted", exact_us(race.posted),
      race.forced ? "was forced by the schedule to take" : race.probe ? "found" : "took", sender(race.source),
      race.tag, exact_us(race.arrival));
  for (const auto& a : race.alternatives)
    text += fmt::format("  the message from {} (tag {}, arrived t={} us), which lost by {} us\n", sender(a.source),
                        a.tag, exact_us(a.arrival), exact_us(a.margin));
  return text;
}

// ------------------------------------------------------------------ buffer ownership

// A checksum of a buffer that need only tell a changed buffer from the same: Fletcher's sums over
// 64-bit words in four independent lanes (a word changed changes its lane's sums; the second sum
// depends on where it changed), which the compiler vectorizes: about a cycle per 32 bytes, so that
// checking every nonblocking send costs little beside the message itself.
std::uint64_t checksum(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    std::uint64_t w[4];
    std::memcpy(w, p + i, 32);
    for (int k = 0; k < 4; ++k) {
      a[k] += w[k];
      b[k] += a[k];
    }
  }
  std::uint64_t h = n;
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  for (int k = 0; k < 4; ++k) h = (h ^ a[k]) * 0x9e3779b97f4a7c15ull ^ b[k] * 0xff51afd7ed558ccdull;
  return h;
}

bool owns_buffers(RankState& rs) { return settings().check_consistency && !rs.proc->phantom_payloads(); }

void own_run(Req& q, OwnedRun run) {
  run.sum = checksum(run.addr, run.bytes);
  q.owned.push_back(run);
}

void own_buffer(RankState& rs, Req& q, const void* buf, std::size_t bytes) {
  if (q.done || !bytes || !buf || !owns_buffers(rs)) return;
  own_run(q, OwnedRun{.addr = buf, .bytes = bytes, .recv = q.recv});
}

void check_owned_buffer(RankState& rs, Req& q) {
  for (const OwnedRun& run : q.owned) {
    if (checksum(run.addr, run.bytes) == run.sum) continue;
    const char* what = run.recv ? "receive" : "send";
    // A collective names the operation, not the buffer's direction: it owns both kinds.
    const char* op = q.collective ? "collective" : what;
    const std::string part = run.offset < 0 ? fmt::format("{} bytes", run.bytes)
                                            : fmt::format("the block of {} bytes at offset {}", run.bytes, run.offset);
    q.buffer_error = std::make_shared<MpiError>(MpiError{
        MPI_ERR_BUFFER,
        fmt::format("the {} buffer ({}) of {} was written while the {} was pending, found when {}{} completed it "
                    "(a {} {} owns its {} until it completes)",
                    what, part, request_text(rs, q), op, rs.last_call, site_text(rs.caller),
                    q.persistent ? "started persistent" : "nonblocking", op, q.collective ? "buffers" : "buffer")});
    return;
  }
}

// ------------------------------------------------------------------ lifecycle

void made(RankState& rs, char kind, int h) {
  rs.made_by[{kind, h}] = CallSite{rs.last_call, rs.caller, rs.call_comm};
}
void unmade(RankState& rs, char kind, int h) { rs.made_by.erase({kind, h}); }

namespace {
// " made by MPI_Comm_group of MPI_COMM_WORLD at prog.c:19": a handle named by where it came from.
std::string made_text(RankState& rs, char kind, int h) {
  const auto it = rs.made_by.find({kind, h});
  if (it == rs.made_by.end() || !it->second.call) return "";
  const CallSite& m = it->second;
  // A communicator's own name already says how it was made.
  if (kind == 'c') return site_text(m.caller);
  // A group's communicator (MPI_Comm_group); types and operations name none of their own.
  const std::string of = kind != 'g' || m.comm == MPI_COMM_NULL ? "" : " of " + comm_text(rs, m.comm);
  return fmt::format(" made by {}{}{}", m.call, of, site_text(m.caller));
}
}  // namespace

void check_lifecycle(RankState& rs) {
  std::vector<std::string> found;
  // Communicators the program made (the world and self are MPI's, an intercommunicator's local
  // communicator is hidden inside it).
  std::vector<bool> hidden(rs.comms.size());
  for (const auto& c : rs.comms)
    if (c && c->inter && c->local_comm > 0) hidden[static_cast<std::size_t>(c->local_comm)] = true;
  const std::vector<FileLeft> files = files_left_open(rs);
  for (const FileLeft& f : files) hidden[static_cast<std::size_t>(f.comm)] = true;
  for (std::size_t h = 3; h < rs.comms.size(); ++h)
    if (rs.comms[h] && !hidden[h])
      found.push_back(fmt::format("{}{} was never freed (MPI_Comm_free)", comm_text(rs, static_cast<MPI_Comm>(h)),
                                  made_text(rs, 'c', static_cast<int>(h))));
  for (const FileLeft& f : files)
    found.push_back(
        fmt::format("the file \"{}\"{} was never closed (MPI_File_close)", f.name, made_text(rs, 'f', f.handle)));
  for (std::size_t i = 0; i < rs.groups.size(); ++i)
    if (rs.groups[i]) {
      const int h = kFirstGroup + static_cast<int>(i);
      found.push_back(fmt::format("the group{} was never freed (MPI_Group_free)", made_text(rs, 'g', h)));
    }
  for (std::size_t i = 0; i < rs.types.size(); ++i)
    if (rs.types[i] && !parameterized(*rs.types[i])) {
      const int h = kFirstDerivedType + static_cast<int>(i);
      found.push_back(fmt::format("the {}{} was never freed (MPI_Type_free)", type_text(rs, h), made_text(rs, 't', h)));
    }
  for (std::size_t i = 0; i < rs.ops.size(); ++i)
    if (rs.ops[i]) {
      const int h = kFirstUserOp + static_cast<int>(i);
      found.push_back(fmt::format("the user operation{} was never freed (MPI_Op_free)", made_text(rs, 'o', h)));
    }
  if (rs.attached)
    found.push_back(fmt::format("the buffer of {} bytes attached{} was never detached (MPI_Buffer_detach)",
                                rs.attached->size, site_text(rs.made_by[{'b', 0}].caller)));
  for (std::size_t i = 0; i < rs.reqs.size(); ++i) {
    const Req* q = rs.reqs[i].get();
    if (!q) continue;
    const std::string how = request_text(rs, *q);
    if (q->persistent && !q->started)
      found.push_back(fmt::format("the persistent request of {} was never freed (MPI_Request_free)", how));
    else
      found.push_back(fmt::format("the request of {} was never completed (MPI_Wait, MPI_Test, ...)", how));
  }
  for (const auto& f : rs.freed_active) found.push_back(f);
  rs.freed_active.clear();
  if (found.empty()) return;
  const Session& s = *session();
  const int rank = rs.proc->rank();
  if (s.leaks_are_errors) {
    std::string all;
    for (const auto& f : found) all += (all.empty() ? "" : "; ") + f;
    throw MpiError{MPI_ERR_OTHER, fmt::format("{} finding(s) of the lifecycle check (--check): {}", found.size(), all)};
  }
  for (const auto& f : found)
    std::fprintf(stderr, "touchstone mpirun: warning: rank %d at MPI_Finalize: %s\n", rank, f.c_str());
}

}  // namespace touchstone::mpi
