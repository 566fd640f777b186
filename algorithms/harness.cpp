#include "harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::algorithms {

void check_host_memory(const std::string& what, std::size_t bytes) {
  const auto pages = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES));
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  if (pages > 0 && page > 0 && bytes > pages / 100 * 90 * page)
    throw UsageError(fmt::format("{} needs about {:.1f} GB of host memory for its buffers; this host has {:.1f} GB "
                                 "(try a smaller size or a smaller machine)",
                                 what, static_cast<double>(bytes) / 1e9, static_cast<double>(pages * page) / 1e9));
}

namespace {
// splitmix64's finalizer: a bijection on 64-bit words whose output bits each depend on every input bit.
constexpr std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The pattern from src to dst is a keyed hash of (src, dst, i / 8), 8 bytes per word: it never
// repeats with a period in src, dst or i (the old ramp, 131*src + 37*dst + i mod 256, repeated
// every 256 ranks, so a block from s put in slot s^256 passed on 512 VPs; issue 20).
class Pattern {
 public:
  Pattern(int src, int dst)
      : key_(mix(mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) + 0x7f4a7c15ULL) ^
                 (static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst)) << 32 | 0x9e3779b9ULL))) {}
  // Bytes [at, at + n) of the pattern (at a multiple of 8), into out.
  void bytes(std::size_t word, std::byte* out, std::size_t n) const {
    for (std::size_t k = 0; k < n; k += 8, ++word) {
      const std::uint64_t w = mix(key_ + word * 0x9e3779b97f4a7c15ULL);
      std::memcpy(out + k, &w, std::min<std::size_t>(8, n - k));
    }
  }

 private:
  std::uint64_t key_;
};

// Calls f(offset, length, expected) for each chunk of up to 4 KiB of the pattern from src to dst.
template <class F>
void for_each_chunk(int src, int dst, std::size_t size, F&& f) {
  constexpr std::size_t kChunk = 4096;
  const Pattern p(src, dst);
  std::array<std::byte, kChunk> buf;
  for (std::size_t at = 0; at < size; at += kChunk) {
    const std::size_t n = std::min(kChunk, size - at);
    p.bytes(at / 8, buf.data(), n);
    f(at, n, buf.data());
  }
}
}  // namespace

void fill_pattern(int src, int dst, std::span<std::byte> out) {
  const Pattern p(src, dst);
  p.bytes(0, out.data(), out.size());
}

void check_pattern(const std::string& algorithm, int src, int dst, std::span<const std::byte> got) {
  for_each_chunk(src, dst, got.size(), [&](std::size_t at, std::size_t n, const std::byte* want) {
    if (std::memcmp(got.data() + at, want, n) == 0) return;
    std::size_t i = 0;
    while (got[at + i] == want[i]) ++i;
    throw std::runtime_error(fmt::format("{}: rank {} holds wrong data in the block from rank {} (byte {} of {})",
                                         algorithm, dst, src, at + i, got.size()));
  });
}

// Harness of the all-to-all family: fills every block with its pattern, runs the algorithm on the
// whole machine, and checks every byte of every received block.
Algorithm alltoall_entry(std::string name, std::string summary, AlltoallFn fn) {
  auto program = [name, fn](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank();
    const std::size_t L = a.size, total = static_cast<std::size_t>(n) * L;
    // Left uninitialized on purpose: the pattern fills send, the algorithm must fill recv.
    std::unique_ptr<std::byte[]> send_mem(new std::byte[total]), recv_mem(new std::byte[total]);
    std::span<std::byte> send(send_mem.get(), total), recv(recv_mem.get(), total);
    if (a.check)
      for (int dst = 0; dst < n; ++dst) fill_pattern(me, dst, send.subspan(static_cast<std::size_t>(dst) * L, L));
    fn(p, p.world(), send, recv, L);
    if (!a.check) return;
    for (int src = 0; src < n; ++src) check_pattern(name, src, me, recv.subspan(static_cast<std::size_t>(src) * L, L));
  };
  // The send and receive buffers, plus the copies of messages in flight: at most one per pair.
  auto bytes = [](int vps, std::size_t size) { return 3 * static_cast<std::size_t>(vps) * static_cast<std::size_t>(vps) * size; };
  Algorithm alg{std::move(name), std::move(summary), program, bytes};
  alg.raw.alltoall = std::move(fn);
  return alg;
}

// Harness of the one-to-all family: the root's blocks carry the pattern from the root to each
// destination; every processor checks the one block it received.
Algorithm scatter_entry(std::string name, std::string summary, RootedFn fn, bool broadcast) {
  auto program = [name, fn](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank(), root = a.root;
    const std::size_t L = a.size, total = me == root ? static_cast<std::size_t>(n) * L : 0;
    std::unique_ptr<std::byte[]> send_mem(new std::byte[total]), recv_mem(new std::byte[L]);
    std::span<std::byte> send(send_mem.get(), total), recv(recv_mem.get(), L);
    if (a.check && me == root)
      for (int dst = 0; dst < n; ++dst) fill_pattern(root, dst, send.subspan(static_cast<std::size_t>(dst) * L, L));
    fn(p, p.world(), root, send, recv, L);
    if (a.check) check_pattern(name, root, me, recv);
  };
  // The root's blocks, and the long messages on their way: each block is copied at most once per
  // level of the partition (at most log2 p + 1 levels) and once more in flight. A broadcast leaves
  // the long message of p - 1 blocks on every processor and (flat broadcast) p - 1 copies in flight.
  auto bytes = [broadcast](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps);
    if (broadcast) return 2 * p * p * size + p * size;
    std::size_t levels = 2;
    while ((std::size_t{1} << levels) < static_cast<std::size_t>(vps)) ++levels;
    return 2 * (levels + 2) * static_cast<std::size_t>(vps) * size;
  };
  Algorithm alg{std::move(name), std::move(summary), program, bytes};
  alg.raw.rooted = std::move(fn);
  return alg;
}

// Harness of the all-to-one family: every processor sends the pattern from itself to the root; the
// root checks every block.
Algorithm gather_entry(std::string name, std::string summary, RootedFn fn) {
  auto program = [name, fn](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank(), root = a.root;
    const std::size_t L = a.size, total = me == root ? static_cast<std::size_t>(n) * L : 0;
    std::unique_ptr<std::byte[]> send_mem(new std::byte[L]), recv_mem(new std::byte[total]);
    std::span<std::byte> send(send_mem.get(), L), recv(recv_mem.get(), total);
    if (a.check) fill_pattern(me, root, send);
    fn(p, p.world(), root, send, recv, L);
    if (!a.check || me != root) return;
    for (int src = 0; src < n; ++src) check_pattern(name, src, root, recv.subspan(static_cast<std::size_t>(src) * L, L));
  };
  auto bytes = [](int vps, std::size_t size) {
    std::size_t levels = 2;
    while ((std::size_t{1} << levels) < static_cast<std::size_t>(vps)) ++levels;
    return 2 * (levels + 2) * static_cast<std::size_t>(vps) * size;
  };
  Algorithm alg{std::move(name), std::move(summary), program, bytes};
  alg.raw.rooted = std::move(fn);
  return alg;
}

}  // namespace touchstone::algorithms
