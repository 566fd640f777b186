// The catalog's families (an algorithm with a parameter in its name: bcast/chain(64)) read the
// parameter whole, as every number a user writes is read (touchstone/number_text.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "touchstone/error.hpp"

using namespace touchstone;

namespace {

struct Family {
  std::string prefix, good;
  std::vector<std::string> bad;
};

// strtod, strtol and strtoll took each of these but the last few: a space before the number, a
// '+', a hexadecimal real, and "nan", which is neither below nor above any range.
const std::vector<std::string> kBadWhole = {" 2", "+2", "2 ", "0x2", "2x", "", "-", "99999999999999999999"};
const std::vector<std::string> kBadReal = {" 0.75", "+0.75", "0.75 ", "0x0.cp0", "nan", "inf", "0.75x", ""};

TEST(CatalogFamilies, AParameterIsReadWholeOrTheNameIsRefused) {
  const std::vector<Family> families = {
      {"bcast/chain(", "64", kBadWhole},
      {"alltoall/pipelined-cc-cube(", "2", kBadWhole},
      {"scatter/logp-lev-rec(", "0.75", kBadReal},
      {"gather/logp-lev-rec(", "0.75", kBadReal},
      {"bcast/hybrid(", "4x2", {" 4x2", "+4x2", "4x 2", "4x+2", "4x2 ", "0x4x2", "4", "x2"}},
  };
  for (const auto& f : families) {
    EXPECT_EQ(algorithms::find(f.prefix + f.good + ")").name, f.prefix + f.good + ")");
    for (const auto& bad : f.bad) {
      const std::string name = f.prefix + bad + ")";
      try {
        algorithms::find(name);
        ADD_FAILURE() << "'" << name << "' was taken";
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("'" + name + "'"), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
