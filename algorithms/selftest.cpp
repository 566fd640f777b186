#include "families.hpp"
#include "selftest.hpp"

#include "harness.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace touchstone::algorithms {

namespace {
std::vector<std::byte> payload(int from, std::size_t size) {
  std::vector<std::byte> v(size);
  for (std::size_t i = 0; i < size; ++i) v[i] = static_cast<std::byte>((static_cast<std::size_t>(from) * 29 + i) & 0xff);
  return v;
}
void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}
}  // namespace

void selftest_pingpong(Proc& p, std::size_t size, int round_trips, bool check) {
  const int a = 0, b = p.size() - 1;
  if (p.rank() != a && p.rank() != b) return;
  const auto out = payload(p.rank(), size);
  std::vector<std::byte> in(size);
  for (int i = 0; i < round_trips; ++i) {
    if (p.rank() == a) {
      p.send(b, i, out);
      p.recv(b, i, in);
      expect(!check || in == payload(b, size), "pingpong: rank 0 received corrupted data");
    }
    if (p.rank() == b) {
      // With a single VP, rank 0 plays both ends and the exchange above already happened.
      if (a == b) break;
      p.recv(a, i, in);
      expect(!check || in == payload(a, size), "pingpong: the far rank received corrupted data");
      p.send(a, i, out);
    }
  }
}

void selftest_ring(Proc& p, std::size_t size, bool check) {
  const int n = p.size(), next = (p.rank() + 1) % n, prev = (p.rank() + n - 1) % n;
  const auto out = payload(p.rank(), size);
  std::vector<std::byte> in(size);
  p.sendrecv(next, 0, out, prev, 0, in);
  expect(!check || in == payload(prev, size), "ring: received corrupted data");
}

void selftest_deadlock(Proc& p, std::size_t size) {
  const int n = p.size(), next = (p.rank() + 1) % n, prev = (p.rank() + n - 1) % n;
  std::vector<std::byte> buf(size);
  p.recv(prev, 0, buf);
  p.send(next, 0, buf);
}

namespace {
Algorithm selftest(std::string name, std::string summary, std::function<void(Proc&, const Args&)> program) {
  return Algorithm{std::move(name), std::move(summary), std::move(program),
                   // Every processor's outgoing and incoming message (and, checking, one expected
                   // message at a time), with one copy in flight per processor.
                   [](int vps, std::size_t size) {
                     const auto p = static_cast<std::size_t>(vps);
                     return Footprint{2 * p * size + size, p * size, 4 * p};
                   }};
}
}  // namespace

void add_selftest_algorithms(Catalog& c) {
  c.push_back(selftest("selftest/pingpong", "ranks 0 and p-1 exchange SIZE bytes 4 times",
                       [](Proc& p, const Args& a) { selftest_pingpong(p, a.size, 4, a.check); }));
  c.push_back(selftest("selftest/ring", "every rank passes SIZE bytes to the next one in a ring",
                       [](Proc& p, const Args& a) { selftest_ring(p, a.size, a.check); }));
  c.push_back(selftest("selftest/deadlock", "every rank receives before it sends: must end in a deadlock report",
                       [](Proc& p, const Args& a) { selftest_deadlock(p, a.size); }));
}

}  // namespace touchstone::algorithms
