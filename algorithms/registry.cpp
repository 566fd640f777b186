#include "registry.hpp"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "alltoall.hpp"
#include "selftest.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {

// The byte that rank `src` sends to rank `dst` at offset i: distinct per pair, and shifted every
// 256 bytes so that misplaced or shifted data is caught.
inline std::byte pattern(int src, int dst, std::size_t i) {
  return static_cast<std::byte>((static_cast<std::size_t>(src) * 131 + static_cast<std::size_t>(dst) * 37 + i +
                                 (i >> 8) * 7) & 0xff);
}

using AlltoallFn = void (*)(Proc&, const Group&, std::span<const std::byte>, std::span<std::byte>, std::size_t);

// Harness of the all-to-all family: fills every block with its pattern, runs the algorithm on the
// whole machine, and checks every byte of every received block.
Algorithm alltoall(std::string name, std::string summary, AlltoallFn fn) {
  auto program = [name, fn](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank();
    const std::size_t L = a.size;
    std::vector<std::byte> send(static_cast<std::size_t>(n) * L), recv(static_cast<std::size_t>(n) * L);
    if (a.check)
      for (int dst = 0; dst < n; ++dst)
        for (std::size_t i = 0; i < L; ++i) send[static_cast<std::size_t>(dst) * L + i] = pattern(me, dst, i);
    fn(p, p.world(), send, recv, L);
    if (!a.check) return;
    for (int src = 0; src < n; ++src)
      for (std::size_t i = 0; i < L; ++i)
        if (recv[static_cast<std::size_t>(src) * L + i] != pattern(src, me, i))
          throw std::runtime_error(fmt::format("{}: rank {} holds wrong data in the block from rank {} (byte {})",
                                               name, me, src, i));
  };
  auto bytes = [](int vps, std::size_t size) { return 2 * static_cast<std::size_t>(vps) * static_cast<std::size_t>(vps) * size; };
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
