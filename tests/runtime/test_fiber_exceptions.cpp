// Each fiber keeps its own exceptions in flight (runtime/src/executor.cpp): the C++ runtime keeps
// the exceptions being handled per host thread, and VPs wait inside catch blocks while others run
// theirs, on one host thread or on several.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

// Every VP throws its own exception and, inside the catch block, waits for its neighbour's message
// while the other VPs enter theirs; then it rethrows and must find its own. Before each fiber kept
// its own, 14 of the 16 VPs rethrew another's.
TEST(FiberExceptions, AWaitInsideACatchBlockKeepsTheFibersOwnException) {
  const Machine m = parse_machine("mesh:4x4");
  std::vector<std::string> rethrown(16);
  const Program program = [&](Proc& p) {
    const int n = p.size(), me = p.rank();
    try {
      throw std::runtime_error(fmt::format("mine is {}", me));
    } catch (const std::exception&) {
      int in = 0, out = me;
      Request r = p.irecv((me + n - 1) % n, 0, std::as_writable_bytes(std::span(&in, 1)));
      p.send((me + 1) % n, 0, std::as_bytes(std::span(&out, 1)));
      p.wait(r);  // blocks inside the catch block while the other VPs enter theirs
      try {
        throw;
      } catch (const std::exception& again) {
        rethrown[static_cast<std::size_t>(me)] = again.what();
      }
    }
  };
  for (const int cores : {1, 2, 4}) {
    SCOPED_TRACE(fmt::format("host_cores={}", cores));
    std::fill(rethrown.begin(), rethrown.end(), std::string());
    RunOptions o;
    o.host_cores = cores;
    run(m, program, o);
    for (int r = 0; r < 16; ++r) EXPECT_EQ(rethrown[static_cast<std::size_t>(r)], fmt::format("mine is {}", r));
  }
}
