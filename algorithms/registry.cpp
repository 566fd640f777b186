#include "registry.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "alltoall.hpp"
#include "selftest.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {

// The bytes rank `src` sends to rank `dst`: byte i is base(src, dst) + i + 7 * (i / 256) (mod 256),
// distinct per pair and shifted every 256 bytes, so misplaced or shifted data is caught.
void fill_pattern(int src, int dst, std::span<std::byte> out) {
  const auto base = static_cast<unsigned>(src) * 131u + static_cast<unsigned>(dst) * 37u;
  for (std::size_t chunk = 0; chunk * 256 < out.size(); ++chunk) {
    const unsigned start = base + static_cast<unsigned>(chunk) * 7u;
    const std::size_t n = std::min<std::size_t>(256, out.size() - chunk * 256);
    std::byte* p = out.data() + chunk * 256;
    for (std::size_t j = 0; j < n; ++j) p[j] = static_cast<std::byte>((start + j) & 0xffu);
  }
}

using AlltoallFn = void (*)(Proc&, const Group&, std::span<const std::byte>, std::span<std::byte>, std::size_t);

// Harness of the all-to-all family: fills every block with its pattern, runs the algorithm on the
// whole machine, and checks every byte of every received block.
Algorithm alltoall(std::string name, std::string summary, AlltoallFn fn) {
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
    std::vector<std::byte> expected(L);
    for (int src = 0; src < n; ++src) {
      fill_pattern(src, me, expected);
      const auto got = recv.subspan(static_cast<std::size_t>(src) * L, L);
      if (L && std::memcmp(got.data(), expected.data(), L) != 0) {
        std::size_t i = 0;
        while (got[i] == expected[i]) ++i;
        throw std::runtime_error(fmt::format("{}: rank {} holds wrong data in the block from rank {} (byte {})", name,
                                             me, src, i));
      }
    }
  };
  // The send and receive buffers, plus the copies of messages in flight: at most one per pair.
  auto bytes = [](int vps, std::size_t size) { return 3 * static_cast<std::size_t>(vps) * static_cast<std::size_t>(vps) * size; };
  return Algorithm{std::move(name), std::move(summary), program, bytes};
}

Algorithm selftest(std::string name, std::string summary, std::function<void(Proc&, const Args&)> program) {
  return Algorithm{std::move(name), std::move(summary), std::move(program),
                   [](int vps, std::size_t size) { return 2 * static_cast<std::size_t>(vps) * size; }};
}

std::vector<Algorithm> build() {
  std::vector<Algorithm> c;
  c.push_back(alltoall("alltoall/1-lev-dir", "p-1 direct sends, farthest first (paper 000, sec. 5.1, 5.3)",
                       &alltoall_1lev_dir));
  c.push_back(alltoall("alltoall/1-lev-xor", "p-1 exclusive-or permutations (paper 000, sec. 5.1)",
                       &alltoall_1lev_xor));
  c.push_back(selftest("selftest/pingpong", "ranks 0 and p-1 exchange SIZE bytes 4 times",
                       [](Proc& p, const Args& a) { selftest_pingpong(p, a.size, 4); }));
  c.push_back(selftest("selftest/ring", "every rank passes SIZE bytes to the next one in a ring",
                       [](Proc& p, const Args& a) { selftest_ring(p, a.size); }));
  c.push_back(selftest("selftest/deadlock", "every rank receives before it sends: must end in a deadlock report",
                       [](Proc& p, const Args& a) { selftest_deadlock(p, a.size); }));
  return c;
}

}  // namespace

const std::vector<Algorithm>& catalog() {
  static const std::vector<Algorithm> c = build();
  return c;
}

const Algorithm& find(const std::string& name) {
  for (const auto& a : catalog())
    if (a.name == name) return a;
  std::string known;
  for (const auto& a : catalog()) known += "\n  " + a.name;
  throw UsageError(fmt::format("unknown algorithm '{}'; known algorithms:{}", name, known));
}

std::vector<const Algorithm*> select(const std::string& list) {
  std::vector<const Algorithm*> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.size() > 4 && item.substr(item.size() - 4) == "/all") {
      const std::string family = item.substr(0, item.size() - 3);  // keeps the slash
      std::size_t before = out.size();
      for (const auto& a : catalog())
        if (a.name.rfind(family, 0) == 0) out.push_back(&a);
      if (out.size() == before) throw UsageError(fmt::format("no algorithms in family '{}'", item));
    } else if (!item.empty()) {
      out.push_back(&find(item));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw UsageError("no algorithms selected");
  return out;
}

}  // namespace touchstone::algorithms
