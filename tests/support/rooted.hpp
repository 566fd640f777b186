// Shared by the tests of rooted collectives (scatter, gather): a test case, an inner root, the
// meshes every algorithm runs on, and the cases' test names.
#pragma once
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

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

/// Every algorithm on square, non-square, 1-D and non-power-of-two meshes, with 1 and 600 bytes,
/// rooted at the corner and inside the mesh, and on a 16 x 16 mesh rooted inside.
inline std::vector<RootedCase> mesh_cases(std::initializer_list<const char*> algorithms) {
  std::vector<RootedCase> out;
  for (const char* alg : algorithms) {
    for (const char* mesh :
         {"mesh:1x1", "mesh:1x5", "mesh:2x2", "mesh:3x5", "mesh:4x4", "mesh:4x8", "mesh:7x3", "mesh:8x8"})
      for (std::size_t size : {std::size_t{1}, std::size_t{600}})
        for (int root : {0, -1}) out.push_back({alg, mesh, size, root});
    out.push_back({alg, "mesh:16x16", 600, -1});
  }
  return out;
}

/// A case's test name: algorithm, machine, size and root ("inner" for inner_root), alphanumeric.
inline std::string case_name(const testing::TestParamInfo<RootedCase>& info) {
  std::string s = fmt::format("{}_{}_{}_{}", info.param.algorithm, info.param.machine, info.param.size,
                              info.param.root < 0 ? std::string("inner") : std::to_string(info.param.root));
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

}  // namespace ts_test
