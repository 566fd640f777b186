// Proc::local_copy (docs/model.md 2.11): a local memory copy of `bytes` bytes in `pieces`
// contiguous pieces costs bytes * copy_per_byte + pieces * copy_per_piece of the node's clock, and
// nothing on a machine that sets neither.
#include <gtest/gtest.h>

#include "support/model.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

TEST(LocalCopy, ChargesBytesAndPiecesToTheCaller) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.copy_per_byte = 29;
  m.costs.copy_per_piece = 4001;
  std::vector<Time> at(2);
  run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      p.local_copy(100, 3);
      p.local_copy(0, 0);  // nothing copied: free
      p.local_copy(7);     // one piece by default
    }
    at[static_cast<std::size_t>(p.rank())] = p.now();
  });
  EXPECT_EQ(at[0], 100 * 29 + 3 * 4001 + 7 * 29 + 4001);
  EXPECT_EQ(at[1], 0);  // the other node's clock is not touched
}

TEST(LocalCopy, FreeOnMachinesWithoutACopyCost) {
  Time t = -1;
  run(parse_machine("mesh:2x2"), [&](Proc& p) {
    p.local_copy(1 << 20, 1000);
    if (p.rank() == 0) t = p.now();
  });
  EXPECT_EQ(t, 0);
}

TEST(LocalCopy, MachineOptionsSetItInNanoseconds) {
  const Machine m = parse_machine("mesh:2x2,copy_ns_per_byte=25.5,copy_ns_per_piece=1500");
  EXPECT_EQ(m.costs.copy_per_byte, 25'500);
  EXPECT_EQ(m.costs.copy_per_piece, 1'500'000);
  EXPECT_THROW(parse_machine("mesh:2x2,copy_ns_per_byte=-1"), UsageError);
  EXPECT_THROW(parse_machine("hpam:2x2/2x2,copy_ns_per_byte=10"), UsageError);  // per-level costs only
}

}  // namespace
