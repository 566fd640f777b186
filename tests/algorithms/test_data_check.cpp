// The harness's data check cannot be fooled: the payload pattern has no period in the
// source, the destination or the byte offset, so a block in the wrong slot is caught on any
// machine size. The old pattern, (131*src + 37*dst + i) mod 256, repeated every 256 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

// An all-to-all "by shared memory" (all VPs live in one process): every VP publishes its send
// buffer, and after a barrier copies block `me` of every source's buffer into slot slot_of(s). It
// sends no messages, so a 512-VP run is cheap; what it tests is the harness's check alone.
algorithms::AlltoallFn shared_memory_alltoall(std::vector<const std::byte*>& table, int (*slot_of)(int)) {
  return [&table, slot_of](Proc& p, const Group&, std::span<const std::byte> send, std::span<std::byte> recv,
                           std::size_t L) {
    table[static_cast<std::size_t>(p.rank())] = send.data();
    p.barrier();
    for (int s = 0; s < p.size(); ++s)
      std::memcpy(recv.data() + static_cast<std::size_t>(slot_of(s)) * L,
                  table[static_cast<std::size_t>(s)] + static_cast<std::size_t>(p.rank()) * L, L);
    p.barrier();  // no VP frees its send buffer while another still reads it
  };
}

// The block from s put in slot s^256, on 512 VPs: the old pattern, 131*s + 37*d + i mod 256, was
// the same for s and s^256 (131 * 256 = 0 mod 256), so this passed the check.
TEST(DataCheck, TheS256MistakeIsCaughtOn512Vps) {
  const Machine m = parse_machine("mesh:16x32");
  std::vector<const std::byte*> table(512);
  algorithms::Args args;
  args.size = 8;
  const auto planted =
      algorithms::alltoall_entry("alltoall/planted-s^256", "", shared_memory_alltoall(table, [](int s) { return s ^ 256; }));
  std::string e;
  try {
    run(m, [&](Proc& p) { planted.program(p, args); });
  } catch (const RunError& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("alltoall/planted-s^256: rank "), std::string::npos) << e;
  EXPECT_NE(e.find(" holds wrong data in the block from rank "), std::string::npos) << e;
  // Without the mistake the same harness passes.
  const auto right = algorithms::alltoall_entry("alltoall/right", "", shared_memory_alltoall(table, [](int s) { return s; }));
  EXPECT_NO_THROW(run(m, [&](Proc& p) { right.program(p, args); }));
}

// Every (source, destination) pair of a 1024-VP machine has its own first 8-byte word, and so does
// every word of one block: no two of the 2^20 pairs, nor of 4096 words, agree.
TEST(DataCheck, ThePatternIsDistinctForEveryPairAndOffset) {
  std::vector<std::uint64_t> words;
  words.reserve(1 << 20);
  std::array<std::byte, 8> w{};
  for (int s = 0; s < 1024; ++s)
    for (int d = 0; d < 1024; ++d) {
      algorithms::fill_pattern(s, d, w);
      std::uint64_t x = 0;
      std::memcpy(&x, w.data(), 8);
      words.push_back(x);
    }
  std::sort(words.begin(), words.end());
  EXPECT_EQ(std::adjacent_find(words.begin(), words.end()), words.end());
  std::vector<std::byte> block(4096 * 8);
  algorithms::fill_pattern(3, 259, block);
  std::vector<std::uint64_t> offsets(4096);
  std::memcpy(offsets.data(), block.data(), block.size());
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::adjacent_find(offsets.begin(), offsets.end()), offsets.end());
}

// A block marked undelivered differs from its pattern in every byte, so a receive buffer that held
// the right block before (a recycled allocation) still fails the check at its first byte.
TEST(DataCheck, AnUndeliveredBlockFailsAtItsFirstByte) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{13}, std::size_t{4096}}) {
    std::vector<std::byte> want(n), b(n);
    algorithms::fill_pattern(5, 9, want);
    b = want;
    algorithms::mark_undelivered(5, 9, b);
    for (std::size_t i = 0; i < n; ++i) ASSERT_NE(b[i], want[i]) << "n=" << n << " byte " << i;
    try {
      algorithms::check_pattern("t", 5, 9, b);
      ADD_FAILURE() << "not caught, n=" << n;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("(byte 0 of " + std::to_string(n) + ")"), std::string::npos) << e.what();
    }
  }
}

// fill and check agree however the block is cut (the check works in 4 KiB chunks), and a single
// flipped byte anywhere is reported at its offset.
TEST(DataCheck, CheckFindsTheFirstWrongByte) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{10001}}) {
    std::vector<std::byte> b(n);
    algorithms::fill_pattern(300, 44, b);
    EXPECT_NO_THROW(algorithms::check_pattern("t", 300, 44, b));
    if (n == 0) continue;
    b[n - 1] ^= std::byte{1};
    try {
      algorithms::check_pattern("t", 300, 44, b);
      ADD_FAILURE() << "not caught, n=" << n;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("(byte " + std::to_string(n - 1) + " of " + std::to_string(n) + ")"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
