// Harnesses: each collective's catalog entry wraps an algorithm in buffers filled with a known
// pattern and checks every byte that arrives. Algorithm files register their entries with these.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "collective.hpp"
#include "registry.hpp"
#include "scratch.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// Fills `out` with the bytes rank `src` sends to rank `dst`: 8-byte word j is a keyed hash of
/// (src, dst, j), with no period in any of the three, so data from another pair, another offset or
/// another block is caught on any machine size (two pairs' words agree with probability 2^-64).
void fill_pattern(int src, int dst, std::span<std::byte> out);

/// Fills `out` with bytes each unlike the pattern from src to dst (its complement): a receive
/// buffer marked so before a run fails check_pattern wherever the algorithm did not deliver, even
/// if the memory held that block from an earlier run.
void mark_undelivered(int src, int dst, std::span<std::byte> out);

/// Throws a runtime_error naming the algorithm, the rank and the first wrong byte unless `got`
/// holds exactly the pattern from src to dst.
void check_pattern(const std::string& algorithm, int src, int dst, std::span<const std::byte> got);

/// A harness's payload buffer for one VP: `bytes` bytes, left uninitialized. With real payloads,
/// or when `a.check` asks for the bytes to be checked, the VP's own. Under phantom payloads
/// (Proc::phantom_payloads) no byte of a harness buffer is ever read for its value, only written
/// and copied by the algorithm, so the VPs of a run share one region per `role` (Proc::run_local;
/// VPs run one at a time, and two runs never share) of `largest` bytes, the most any VP of the
/// run asks for with that role: an all-to-all's buffers take 2 p L bytes per run instead of
/// 2 p^2 L. Two roles, so that a VP's send and receive buffers never overlap, as with its own; a
/// third, `scratch`, for an algorithm's own message copies (alltoallv.cpp's message sets).
class PayloadBuffer {
 public:
  enum class Role { send, recv, scratch };
  PayloadBuffer(Proc& p, const Args& a, Role role, std::size_t bytes, std::size_t largest)
      : PayloadBuffer(p, !a.check && p.phantom_payloads(), role, bytes, largest) {}
  /// `shared`: the run's region of the role (the caller has checked that no byte is read for its
  /// value); otherwise the VP's own buffer.
  PayloadBuffer(Proc& p, bool shared, Role role, std::size_t bytes, std::size_t largest);
  std::span<std::byte> span() const { return span_; }

 private:
  ScratchBytes own_;  // empty when the buffer is the run's shared region
  std::span<std::byte> span_;
};

/// Host memory one emulation needs: `resident` bytes the process touches, `address_space` bytes it
/// maps (resident plus every VP's whole stack, which RLIMIT_AS counts).
struct HostMemory {
  std::size_t resident = 0, address_space = 0;
};

/// The runtime's own memory (docs/performance.md "Memory"). Heap, measured by
/// tests/memory/test_footprint.cpp with an accounting allocator: per VP (its record, mailboxes,
/// group and network state; 3.4 to 6.5 KiB measured), per message posted and not complete (its
/// records in the engine and the network; about 420 bytes measured), and once per run (the
/// machine's tables on small machines). Resident, measured as RSS: the touched part of every VP's
/// fiber stack, and the process itself (binary, libraries, thread pools).
inline constexpr std::size_t kVpHeapBytes = 8 * 1024, kMessageBytes = 512, kRunHeapBytes = 1024 * 1024;
inline constexpr std::size_t kVpStackBytes = 8 * 1024, kProcessBytes = 64 * 1024 * 1024;

/// The heap a run allocates at its worst moment by the footprint and the runtime's heap terms:
/// what tests/memory/test_footprint.cpp checks against the accounting allocator.
std::size_t heap_bound(const Footprint& footprint, int vps, bool phantom);

/// What an emulation of `footprint` on `vps` VPs needs: heap_bound, plus every VP's touched stack
/// and the process's own (kVpStackBytes, kProcessBytes); every VP's whole stack of `stack_bytes`
/// (plus a guard page) counts in the address space.
HostMemory host_memory(const Footprint& footprint, int vps, bool phantom, std::size_t stack_bytes);

/// How much memory this process may use: the least of physical memory and the cgroup's limit
/// (cgroup v2 memory.max, v1 memory.limit_in_bytes) for resident memory, RLIMIT_AS for the
/// address space; 0 where there is no limit.
struct HostLimits {
  std::size_t physical = 0, cgroup = 0, address_space = 0;
  std::size_t resident() const;  ///< the least of physical and cgroup (0: unknown)
};
/// Reads the limits of this process: /proc/self/cgroup resolved under `cgroup_root` (v2 unified
/// hierarchy, or v1's memory controller), sysconf for physical memory, getrlimit for RLIMIT_AS.
HostLimits host_limits(const std::string& proc_self_cgroup = "/proc/self/cgroup",
                       const std::string& cgroup_root = "/sys/fs/cgroup");

/// Refuses (UsageError naming `what` and the limit that would be exceeded) a run that needs more
/// than 90% of the resident memory this process may use or of its address space limit, instead
/// of letting the kernel kill the process.
void check_host_memory(const std::string& what, const HostMemory& need, const HostLimits& limits = host_limits());

/// The memory of an all-to-all beyond the harness's send and receive buffers, in halves of p^2 L
/// over the machine (half a p L buffer per processor is 1): scratch buffers, payload copies in
/// flight at the worst moment, and whether every processor posts all its p - 1 sends at once.
struct AlltoallMemory {
  int scratch_halves = 0, in_flight_halves = 2;
  bool all_sends_at_once = false;
};

/// Levels of partition a rooted collective on `vps` processors has at most (log2 p + 1, at least
/// 2): the unit of the scatter and gather memory bounds.
std::size_t rooted_levels(int vps);

/// All-to-all: send and recv hold one block of `size` bytes per group rank.
Algorithm alltoall_entry(std::string name, std::string summary, AlltoallFn fn, AlltoallMemory memory = {});

/// The all-gather harness's program: rank r's block of its buffer (p blocks of `size` bytes) holds
/// fill_pattern(r, r); `run` must fill every other block; every byte of every block is checked.
std::function<void(Proc&, const Args&)> allgather_program(
    std::string name, std::function<void(Proc&, std::span<std::byte> buf, std::size_t size)> run);

/// One-to-all (scatter.hpp): on the root, send holds g.size() blocks of `size` bytes; every
/// processor's recv (size bytes) receives its block. All-to-one (gather.hpp) mirrors it: send holds
/// the processor's block, the root's recv holds g.size() blocks.
/// Harness of scatter: the root's block for dst holds fill_pattern(root, dst); every processor
/// checks the block it received. `broadcast`: every processor receives all p blocks (1-lev-*-br),
/// which the host memory estimate must allow for.
Algorithm scatter_entry(std::string name, std::string summary, RootedFn fn, bool broadcast = false);
/// Harness of gather: every processor sends fill_pattern(me, root); the root checks every block.
Algorithm gather_entry(std::string name, std::string summary, RootedFn fn);

/// The programs of scatter_entry and gather_entry, for entries with a footprint of their own. With
/// `first`, the blocks are those of ranks first(p)..p-1 only (block i is rank first + i's), and the
/// ranks before take no part in the pattern: HPAM's level-2 collectives (hpam.cpp).
using FirstRank = int (*)(const Proc&);
std::function<void(Proc&, const Args&)> scatter_program(std::string name, RootedFn fn, FirstRank first = nullptr);
std::function<void(Proc&, const Args&)> gather_program(std::string name, RootedFn fn, FirstRank first = nullptr);

/// logp-lev-rec(gamma) entries for any gamma (registry.cpp's find() builds them from names such as
/// "scatter/logp-lev-rec(0.6)"); the catalog holds the paper's defaults (0.75 and 0.60).
Algorithm scatter_logp_lev_rec_entry(double gamma);
Algorithm gather_logp_lev_rec_entry(double gamma);


}  // namespace touchstone::algorithms
