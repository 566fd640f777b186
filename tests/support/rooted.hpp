// Shared by the tests of rooted collectives (scatter, gather): a test case and an inner root.
#pragma once
#include <cstddef>
#include <ostream>
#include <string>

#include "touchstone/touchstone.hpp"

namespace ts_test {

/// One run of a rooted collective; root < 0 asks for inner_root() of the machine.
struct RootedCase {
  std::string algorithm, machine;
  std::size_t size;
  int root;
  friend void PrintTo(const RootedCase& c, std::ostream* os) {
    *os << c.algorithm << " on " << c.machine << ", " << c.size << " B, root " << c.root;
  }
};

/// A processor inside the mesh, away from every corner where the mesh allows it.
inline int inner_root(const touchstone::Machine& m) {
  const auto d = m.topology->dims();
  const int rows = d.size() == 2 ? d[0] : 1, cols = d.back();
  return (rows / 2) * cols + cols / 2 - (cols > 2 ? 1 : 0);
}

}  // namespace ts_test
