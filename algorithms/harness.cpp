#include "harness.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/run.hpp"

namespace touchstone::algorithms {

std::size_t heap_bound(const Footprint& f, int vps, bool phantom) {
  const std::size_t buffers = phantom ? f.buffers - f.harness + f.harness_phantom : f.buffers;
  return buffers + (phantom ? 0 : f.in_flight) + f.messages * kMessageBytes + static_cast<std::size_t>(vps) * kVpHeapBytes +
         kRunHeapBytes;
}

HostMemory host_memory(const Footprint& f, int vps, bool phantom, std::size_t stack_bytes) {
  const auto p = static_cast<std::size_t>(vps);
  HostMemory m;
  m.resident = heap_bound(f, vps, phantom) + p * kVpStackBytes + kProcessBytes;
  m.address_space = m.resident + p * (stack_bytes + static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE)));
  return m;
}

std::size_t HostLimits::resident() const {
  if (physical && cgroup) return std::min(physical, cgroup);
  return physical ? physical : cgroup;
}

HostLimits host_limits(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
  HostLimits l;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) l.physical = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  l.cgroup = cgroup_limits(proc_self_cgroup, cgroup_root).memory_bytes;
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) l.address_space = static_cast<std::size_t>(as.rlim_cur);
  return l;
}

void check_host_memory(const std::string& what, const HostMemory& need, const HostLimits& limits) {
  auto gb = [](std::size_t b) { return static_cast<double>(b) / 1e9; };
  const std::size_t resident = limits.resident();
  if (resident && need.resident > resident / 10 * 9) {
    const bool by_cgroup = limits.cgroup && limits.cgroup <= resident;
    throw UsageError(fmt::format("{} needs about {:.1f} GB of host memory (payload buffers and the runtime's own per "
                                 "processor); {} {:.1f} GB (try a smaller size or a smaller machine)",
                                 what, gb(need.resident), by_cgroup ? "this process's cgroup allows" : "this host has",
                                 gb(resident)));
  }
  if (limits.address_space && need.address_space > limits.address_space / 10 * 9)
    throw UsageError(fmt::format("{} needs about {:.1f} GB of address space (with every processor's stack); the address "
                                 "space limit (ulimit -v) is {:.1f} GB (try a smaller machine or --stack-kb)",
                                 what, gb(need.address_space), gb(limits.address_space)));
}

namespace {
// splitmix64's finalizer: a bijection on 64-bit words whose output bits each depend on every input bit.
constexpr std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The pattern from src to dst, 8 bytes per word: word k is key + k * step, with key a hash of
// (src, dst) and step odd. So every word of a block differs from every other (the step is odd, a
// block is shorter than 2^61 words) and, but with probability about 2^-40 over a 1024-VP machine,
// from every word at the same offset of another pair's; it never repeats with a period in src,
// dst or i (a ramp such as 131*src + 37*dst + i mod 256 repeats every 256 ranks, so a block from s
// put in slot s^256 would pass on 512 VPs). One add per word, which the compiler vectorizes: a hash
// of (src, dst, word) per word would make filling and checking a quarter of the CPU of a sweep with
// real payloads.
class Pattern {
 public:
  static constexpr std::uint64_t kStep = 0x9e3779b97f4a7c15ULL;
  Pattern(int src, int dst)
      : key_(mix(mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) + 0x7f4a7c15ULL) ^
                 (static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst)) << 32 | 0x9e3779b9ULL))) {}
  // Bytes [8 * word, 8 * word + n) of the pattern, into out; with flip = ~0, their complements,
  // each byte unlike the pattern's. Both loops count whole words and are unrolled: the compiler
  // does not vectorize them (64-bit lanes), and one word at a time they cost 6 instructions a
  // word, the loop's own test and count more than the word's work.
  void bytes(std::size_t word, std::byte* out, std::size_t n, std::uint64_t flip = 0) const {
    const std::uint64_t w = key_ + word * kStep;
    const std::size_t words = n / 8;
#pragma GCC unroll 8
    for (std::size_t i = 0; i < words; ++i) {
      const std::uint64_t v = (w + i * kStep) ^ flip;
      std::memcpy(out + 8 * i, &v, 8);
    }
    const std::uint64_t last = (w + words * kStep) ^ flip;
    if (8 * words < n) std::memcpy(out + 8 * words, &last, n - 8 * words);
  }
  // Whether got[0, n) holds bytes [8 * word, 8 * word + n) of the pattern.
  bool holds(std::size_t word, const std::byte* got, std::size_t n) const {
    const std::uint64_t w = key_ + word * kStep;
    const std::size_t words = n / 8;
    std::uint64_t diff = 0;
#pragma GCC unroll 8
    for (std::size_t i = 0; i < words; ++i) {
      std::uint64_t g;
      std::memcpy(&g, got + 8 * i, 8);
      diff |= g ^ (w + i * kStep);
    }
    const std::uint64_t last = w + words * kStep;
    return diff == 0 && (8 * words == n || std::memcmp(got + 8 * words, &last, n - 8 * words) == 0);
  }

 private:
  std::uint64_t key_;
};
}  // namespace

void fill_pattern(int src, int dst, std::span<std::byte> out) {
  const Pattern p(src, dst);
  p.bytes(0, out.data(), out.size());
}

void mark_undelivered(int src, int dst, std::span<std::byte> out) {
  const Pattern p(src, dst);
  p.bytes(0, out.data(), out.size(), ~std::uint64_t{0});
}

namespace {
// The first wrong byte, 4 KiB at a time: a function of its own, so that the 4 KiB it compares
// with are not in check_pattern's frame, which every VP's stack holds while the pattern is checked
// (a page more to fault in per VP).
[[gnu::noinline, gnu::cold]] void report_first_wrong_byte(const Pattern& p, const std::string& algorithm, int src,
                                                          int dst, std::span<const std::byte> got) {
  constexpr std::size_t kChunk = 4096;
  std::array<std::byte, kChunk> want;
  for (std::size_t at = 0; at < got.size(); at += kChunk) {
    const std::size_t n = std::min(kChunk, got.size() - at);
    p.bytes(at / 8, want.data(), n);
    std::size_t i = 0;
    while (i < n && got[at + i] == want[i]) ++i;
    if (i < n)
      throw std::runtime_error(fmt::format("{}: rank {} holds wrong data in the block from rank {} (byte {} of {})",
                                           algorithm, dst, src, at + i, got.size()));
  }
  throw std::logic_error(fmt::format("{}: the block from rank {} to rank {} failed its check but no byte differs",
                                     algorithm, src, dst));
}
}  // namespace

void check_pattern(const std::string& algorithm, int src, int dst, std::span<const std::byte> got) {
  const Pattern p(src, dst);
  if (!p.holds(0, got.data(), got.size())) report_first_wrong_byte(p, algorithm, src, dst, got);
}

namespace {
// The regions of one role that the VPs of a run share under phantom payloads. A region never
// shrinks or moves while the run lasts: a VP that asks for more than the largest so far (a program
// that runs the harness twice with a larger size) gets a new one, and the old one stays valid for
// the VPs still using it.
struct SharedRegions {
  std::vector<ScratchBytes> regions;
  std::size_t largest = 0;
};
// Proc::run_local's keys: one address per role.
constexpr char kRoleKeys[3] = {};
}  // namespace

PayloadBuffer::PayloadBuffer(Proc& p, bool shared_region, Role role, std::size_t bytes, std::size_t largest) {
  if (!shared_region) {
    own_ = ScratchBytes(bytes);
    span_ = {own_.data(), bytes};
    return;
  }
  if (bytes > largest) throw std::logic_error(fmt::format("PayloadBuffer: {} bytes asked, {} the largest", bytes, largest));
  std::shared_ptr<void>& slot = p.run_local(&kRoleKeys[static_cast<int>(role)]);
  if (!slot) slot = std::make_shared<SharedRegions>();
  auto& shared = *static_cast<SharedRegions*>(slot.get());
  if (shared.regions.empty() || largest > shared.largest) {
    shared.regions.emplace_back(largest);
    shared.largest = largest;
  }
  span_ = {shared.regions.back().data(), bytes};
}

std::size_t rooted_levels(int vps) {
  std::size_t levels = 2;
  while ((std::size_t{1} << levels) < static_cast<std::size_t>(vps)) ++levels;
  return levels;
}

// Harness of the all-to-all family: fills every block with its pattern, runs the algorithm on the
// whole machine, and checks every byte of every received block.
Algorithm alltoall_entry(std::string name, std::string summary, AlltoallFn fn, AlltoallMemory memory) {
  auto program = [name, fn](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank();
    const std::size_t L = a.size, total = static_cast<std::size_t>(n) * L;
    // Left uninitialized on purpose: the pattern fills send, the algorithm must fill recv.
    const PayloadBuffer send_mem(p, a, PayloadBuffer::Role::send, total, total),
        recv_mem(p, a, PayloadBuffer::Role::recv, total, total);
    const std::span<std::byte> send = send_mem.span(), recv = recv_mem.span();
    auto block = [&](std::span<std::byte> b, int k) { return b.subspan(static_cast<std::size_t>(k) * L, L); };
    if (a.check)
      for (int k = 0; k < n; ++k) fill_pattern(me, k, block(send, k)), mark_undelivered(k, me, block(recv, k));
    fn(p, p.world(), send, recv, L);
    p.leave();
    if (!a.check) return;
    for (int src = 0; src < n; ++src) check_pattern(name, src, me, block(recv, src));
  };
  // The send and receive buffers and the algorithm's scratch, the copies of messages in flight,
  // and the messages posted at once: all p - 1 sends and receives, or a few at a time.
  auto footprint = [memory](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps), half = p * p * size / 2;
    return Footprint{(4 + static_cast<std::size_t>(memory.scratch_halves)) * half,
                     static_cast<std::size_t>(memory.in_flight_halves) * half, memory.all_sends_at_once ? 2 * p * p : 8 * p,
                     4 * half, 2 * p * size};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.alltoall = std::move(fn);
  return alg;
}

std::function<void(Proc&, const Args&)> allgather_program(
    std::string name, std::function<void(Proc&, std::span<std::byte> buf, std::size_t size)> run) {
  return [name = std::move(name), run = std::move(run)](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank();
    const std::size_t L = a.size, total = static_cast<std::size_t>(n) * L;
    const PayloadBuffer mem(p, a, PayloadBuffer::Role::recv, total, total);
    const std::span<std::byte> buf = mem.span();
    auto block = [&](int k) { return buf.subspan(static_cast<std::size_t>(k) * L, L); };
    if (a.check)
      for (int k = 0; k < n; ++k) k == me ? fill_pattern(me, me, block(k)) : mark_undelivered(k, k, block(k));
    run(p, buf, L);
    p.leave();
    if (!a.check) return;
    for (int src = 0; src < n; ++src) check_pattern(name, src, src, block(src));
  };
}

namespace {
// The harness buffers of a rooted collective: on the root, `blocks` blocks of a.size bytes on the
// side `blocks_side` (send for a scatter, recv for a gather); one block on every processor's other
// side (none on the blocks side elsewhere).
struct RootedBuffers {
  PayloadBuffer send, recv;
  RootedBuffers(Proc& p, const Args& a, PayloadBuffer::Role blocks_side, int blocks)
      : send(make(p, a, PayloadBuffer::Role::send, blocks_side, blocks)),
        recv(make(p, a, PayloadBuffer::Role::recv, blocks_side, blocks)) {}

 private:
  static PayloadBuffer make(Proc& p, const Args& a, PayloadBuffer::Role role, PayloadBuffer::Role blocks_side,
                            int blocks) {
    if (role != blocks_side) return PayloadBuffer(p, a, role, a.size, a.size);
    const std::size_t all = static_cast<std::size_t>(blocks) * a.size;
    return PayloadBuffer(p, a, role, p.rank() == a.root ? all : 0, all);
  }
};
}  // namespace

std::function<void(Proc&, const Args&)> scatter_program(std::string name, RootedFn fn, FirstRank first) {
  return [name = std::move(name), fn = std::move(fn), first](Proc& p, const Args& a) {
    const int from = first ? first(p) : 0, n = p.size() - from, me = p.rank(), root = a.root;
    const std::size_t L = a.size;
    const RootedBuffers mem(p, a, PayloadBuffer::Role::send, n);
    const std::span<std::byte> send = mem.send.span(), recv = mem.recv.span();
    if (a.check && me == root)
      for (int i = 0; i < n; ++i) fill_pattern(root, from + i, send.subspan(static_cast<std::size_t>(i) * L, L));
    if (a.check && me >= from) mark_undelivered(root, me, recv);
    fn(p, p.world(), root, send, recv, L);
    p.leave();
    if (a.check && me >= from) check_pattern(name, root, me, recv);
  };
}

std::function<void(Proc&, const Args&)> gather_program(std::string name, RootedFn fn, FirstRank first) {
  return [name = std::move(name), fn = std::move(fn), first](Proc& p, const Args& a) {
    const int from = first ? first(p) : 0, n = p.size() - from, me = p.rank(), root = a.root;
    const std::size_t L = a.size;
    const RootedBuffers mem(p, a, PayloadBuffer::Role::recv, n);
    const std::span<std::byte> send = mem.send.span(), recv = mem.recv.span();
    if (a.check && me >= from) fill_pattern(me, root, send);
    if (a.check && me == root)
      for (int i = 0; i < n; ++i) mark_undelivered(from + i, root, recv.subspan(static_cast<std::size_t>(i) * L, L));
    fn(p, p.world(), root, send, recv, L);
    p.leave();
    if (!a.check || me != root) return;
    for (int i = 0; i < n; ++i) check_pattern(name, from + i, root, recv.subspan(static_cast<std::size_t>(i) * L, L));
  };
}

// Harness of the one-to-all family: the root's blocks carry the pattern from the root to each
// destination; every processor checks the one block it received.
Algorithm scatter_entry(std::string name, std::string summary, RootedFn fn, bool broadcast) {
  auto program = scatter_program(name, fn);
  // The root's blocks and every processor's own, the long messages combined on the way (each
  // block at most once per level of the partition, at most log2 p + 1 levels) and their copies in
  // flight. A broadcast leaves the long message of p - 1 blocks on every processor and has up to
  // one copy of it in flight per processor.
  auto footprint = [broadcast](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps), harness = 2 * p * size, shared = (p + 1) * size;
    if (broadcast) return Footprint{p * p * size + harness, p * p * size, 8 * p, harness, shared};
    return Footprint{(rooted_levels(vps) + 2) * p * size, rooted_levels(vps) * p * size, 8 * p, harness, shared};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.rooted = std::move(fn);
  return alg;
}

// Harness of the all-to-one family: every processor sends the pattern from itself to the root; the
// root checks every block.
Algorithm gather_entry(std::string name, std::string summary, RootedFn fn) {
  auto program = gather_program(name, fn);
  auto footprint = [](int vps, std::size_t size) {  // scatter_entry's, reversed
    const auto p = static_cast<std::size_t>(vps);
    return Footprint{(rooted_levels(vps) + 2) * p * size, rooted_levels(vps) * p * size, 8 * p, 2 * p * size,
                     (p + 1) * size};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.rooted = std::move(fn);
  return alg;
}

}  // namespace touchstone::algorithms
