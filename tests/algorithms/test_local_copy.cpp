// Combining and extracting blocks is charged as local memory work (Proc::local_copy, docs/model.md
// 2.11) by the shared building blocks of combine.hpp: bytes * copy_per_byte + pieces *
// copy_per_piece, a piece being a run of blocks contiguous in both source and destination.
#include <gtest/gtest.h>

#include <numeric>

#include "algorithms/combine.hpp"
#include "algorithms/registry.hpp"
#include "support/model.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using namespace touchstone::algorithms;

namespace {

constexpr Time kByte = 29, kPiece = 4001;

Machine copying(const std::string& spec) {
  Machine m = ts_test::prime_machine(spec);
  m.costs.copy_per_byte = kByte;
  m.costs.copy_per_piece = kPiece;
  return m;
}

TEST(LocalCopyCharge, CombineAndExtractPayPerByteAndPerContiguousPiece) {
  constexpr std::size_t L = 4;
  std::vector<std::byte> all(8 * L);
  std::iota(reinterpret_cast<unsigned char*>(all.data()), reinterpret_cast<unsigned char*>(all.data()) + all.size(),
            static_cast<unsigned char>(0));
  std::vector<std::byte> by_rank(8 * L);
  Time after_combine = -1, after_extract = -1;
  run(copying("mesh:1x1"), [&](Proc& p) {
    // Ranks 1 and 2 lie together in both buffers (one piece); 5 is a second piece: 12 bytes.
    Blocks msg = combine(p, BlockView::all(8, all, L), {5, 1, 2});
    after_combine = p.now();
    extract(p, msg.view(), by_rank);  // the same two pieces back into per-rank order
    after_extract = p.now();
    EXPECT_EQ(msg.at(5)[0], std::byte{20});
  });
  EXPECT_EQ(after_combine, 3 * L * kByte + 2 * kPiece);
  EXPECT_EQ(after_extract, 2 * (3 * L * kByte + 2 * kPiece));
  EXPECT_EQ(by_rank[2 * L], std::byte{8});
}

// Blocks keep their ranks sorted whatever order they come in (sorted, two sorted runs as a
// destination's parts come, or any), and extraction finds each block of a message in a larger set,
// past gaps, and refuses a block the set does not hold.
TEST(LocalCopyCharge, ExtractionFindsEveryBlockPastGapsAndRefusesOneNotHeld) {
  constexpr std::size_t L = 2;
  std::vector<std::byte> all(16 * L);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::byte>(i / L);  // block r holds r
  run(ts_test::prime_machine("mesh:1x1"), [&](Proc& p) {
    for (const std::vector<int>& order : {std::vector<int>{0, 3, 4, 9, 15}, std::vector<int>{9, 15, 0, 3, 4},
                                          std::vector<int>{4, 15, 0, 9, 3}}) {
      Blocks into(order, L);
      EXPECT_EQ(into.ranks(), (std::vector<int>{0, 3, 4, 9, 15}));
      extract(p, combine(p, BlockView::all(16, all, L), {3, 9, 15}).view(), into);
      extract(p, combine(p, BlockView::all(16, all, L), {0, 4}).view(), into);
      for (int r : into.ranks()) EXPECT_EQ(into.at(r)[1], static_cast<std::byte>(r)) << "rank " << r;
      Blocks lacking(std::vector<int>{0, 3, 9, 15}, L);
      EXPECT_THROW(extract(p, into.view(), lacking), std::logic_error);
      EXPECT_THROW(combine(p, into.view(), {3, 5}), std::logic_error);
    }
  });
}

Time makespan(const Machine& m, const std::string& alg, std::size_t size) {
  const auto& a = find(alg);
  return run(m, [&](Proc& p) { a.program(p, Args{size, 0, true}); }).makespan;
}

// On 1 x 2 both processors are alike. 1-lev-xor copies its own block (one piece of L bytes) before
// any message; logp-lev-bfly sends its leaving block as it lies and, after its one exchange,
// merges the kept and the received block into recv: two pieces (from two buffers) of L bytes each.
TEST(LocalCopyCharge, OneLevelAndButterflyPayExactlyTheirCopies) {
  constexpr std::size_t L = 100;
  const Machine free_copy = ts_test::prime_machine("mesh:1x2"), priced = copying("mesh:1x2");
  EXPECT_EQ(makespan(priced, "alltoall/1-lev-xor", L), makespan(free_copy, "alltoall/1-lev-xor", L) + L * kByte + kPiece);
  EXPECT_EQ(makespan(priced, "alltoall/logp-lev-bfly", L),
            makespan(free_copy, "alltoall/logp-lev-bfly", L) + 2 * L * kByte + 2 * kPiece);
}

// 2-lev-c,r on 1 x 2: its column step is a 1 x 1 all-to-all of one combined block (C L bytes,
// one piece), then two transposes of 1 x 2 blocks (contiguous: one piece each, 2 L bytes) around
// the row step, whose own-block copy is one piece of L bytes; the row step's exchange sits
// between the first transpose and its own copy and the second transpose, so every charge adds.
TEST(LocalCopyCharge, TwoLevelColumnRowPaysItsTransposes) {
  constexpr std::size_t L = 64;
  const Machine free_copy = ts_test::prime_machine("mesh:1x2"), priced = copying("mesh:1x2");
  const Time copies = (2 * L * kByte + kPiece) * 3 + (L * kByte + kPiece);
  EXPECT_EQ(makespan(priced, "alltoall/2-lev-c,r", L), makespan(free_copy, "alltoall/2-lev-c,r", L) + copies);
}

}  // namespace
