// The fibers' stacks come from one region, each with a guard page below it that is never
// silently lost (runtime/src/stacks.hpp): kernel guard regions where the kernel has them (Linux
// 6.13+), else permanent guards while the kernel's limit on mappings allows them, guards armed only
// while their fiber runs beyond it. A VP that overflows its stack
// dies on its own guard page with a message naming its rank.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "../../runtime/src/stacks.hpp"
#include "support/split_run.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using touchstone::detail::StackRegion;

namespace {

// The mapping of this process that holds address a: its range and permissions ("rw-p", "---p");
// permissions "unmapped" if none does.
struct Mapping {
  std::uintptr_t lo = 0, hi = 0;
  std::string perms = "unmapped";
};
Mapping mapping_at(const void* a) {
  const auto addr = reinterpret_cast<std::uintptr_t>(a);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    const auto dash = range.find('-');
    const auto lo = std::stoull(range.substr(0, dash), nullptr, 16), hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (addr >= lo && addr < hi) return {lo, hi, perms};
  }
  return {};
}
std::string permissions_at(const void* a) { return mapping_at(a).perms; }

constexpr std::size_t kKiB = 1024;

TEST(StackRegion, PermanentGuardsWhileTheMappingsLeaveAQuarterOfTheLimit) {
  // 2n + 1 mappings, plus those of the process, plus a quarter of the limit kept free.
  EXPECT_EQ(StackRegion::choose(1000, 500, 65530), StackRegion::Guards::permanent);
  EXPECT_EQ(StackRegion::choose(24000, 1000, 65530), StackRegion::Guards::permanent);   // 1000 + 48001 + 16382 <= 65530
  EXPECT_EQ(StackRegion::choose(24100, 1000, 65530), StackRegion::Guards::while_running);  // 65583 > 65530
  EXPECT_EQ(StackRegion::choose(65536, 500, 65530), StackRegion::Guards::while_running);
  EXPECT_EQ(StackRegion::choose(65536, 500, 1 << 20), StackRegion::Guards::permanent);
  const ProcessMappings now = process_mappings();
  EXPECT_GT(now.limit, 0u);
  EXPECT_GT(now.in_use, 0u);
  EXPECT_LT(now.in_use, now.limit);
}

TEST(StackRegion, EveryStackHasAProtectedGuardPageBelowIt) {
  StackRegion r(8, 64 * kKiB, StackRegion::Guards::permanent);
  ASSERT_EQ(r.guards(), StackRegion::Guards::permanent);
  for (std::size_t i = 0; i < 8; ++i) {
    const auto c = r.context(i);
    EXPECT_EQ(c.size, 64 * kKiB);
    const auto* lowest = static_cast<const char*>(c.sp) - c.size;
    EXPECT_EQ(permissions_at(lowest - 1), "---p") << "guard of stack " << i;
    EXPECT_EQ(static_cast<const void*>(lowest - 4096), r.guard(i));
    EXPECT_EQ(permissions_at(lowest), "rw-p") << "stack " << i;
    EXPECT_EQ(permissions_at(static_cast<const char*>(c.sp) - 1), "rw-p") << "stack " << i;
  }
}

// Guard regions split no mapping: 65,536 VPs' guards cost one mapping, not 131,073 (which is past
// the default vm.max_map_count of 65,530, where the other schemes must arm guards per switch).
TEST(StackRegion, KernelGuardsKeepTheRegionOneMappingWhereverTheKernelHasThem) {
  if (!StackRegion::kernel_guards()) GTEST_SKIP() << "this kernel has no MADV_GUARD_INSTALL (Linux 6.13+)";
  EXPECT_EQ(StackRegion(4, 64 * kKiB).guards(), StackRegion::Guards::installed);
  StackRegion r(64, 64 * kKiB, StackRegion::Guards::installed);
  // One mapping holds the whole region, from the lowest guard to the top of the last stack
  // (permanent guards would have split it into 2 x 64 + 1). Counting the process's mappings
  // instead would depend on where the kernel puts the region: beside another anonymous mapping
  // it merges with it and the count does not grow.
  const Mapping whole = mapping_at(r.guard(0));
  const auto* top = static_cast<const char*>(r.context(63).sp) - 1;
  EXPECT_EQ(whole.perms, "rw-p");
  EXPECT_LE(whole.lo, reinterpret_cast<std::uintptr_t>(r.guard(0)));
  EXPECT_GT(whole.hi, reinterpret_cast<std::uintptr_t>(top));
  for (std::size_t i = 0; i < 64; ++i) {
    const auto c = r.context(i);
    EXPECT_EQ(static_cast<const void*>(static_cast<const char*>(c.sp) - c.size - 4096), r.guard(i));
    EXPECT_EQ(permissions_at(r.guard(i)), "rw-p");  // a guard region is not a protection: maps cannot see it
  }
  r.arm(5);  // no-ops: the guards are always on
  EXPECT_EQ(permissions_at(r.guard(5)), "rw-p");
  r.disarm(5);
  const Mapping still = mapping_at(r.guard(0));
  EXPECT_EQ(still.lo, whole.lo);
  EXPECT_EQ(still.hi, whole.hi);
}

// A thread's next run of the same shape gets the region back, every byte its fibers wrote zero
// again (as on a new mapping); another shape gets a new region. The stacks' guards stay.
TEST(StackRegion, ARecycledRegionComesBackZeroedForTheSameShapeOnly) {
  auto r = StackRegion::reuse_or_map(4, 64 * 1024);
  const auto* base = static_cast<const std::byte*>(r->guard(0));
  for (std::size_t i = 0; i < 4; ++i) {
    const auto c = r->context(i);
    std::memset(static_cast<std::byte*>(c.sp) - c.size, 0x5a, c.size);  // every byte of every stack
  }
  StackRegion::recycle(std::move(r));
  auto again = StackRegion::reuse_or_map(4, 64 * 1024);
  EXPECT_EQ(static_cast<const std::byte*>(again->guard(0)), base);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto c = again->context(i);
    const auto* low = static_cast<const std::byte*>(c.sp) - c.size;
    for (std::size_t k = 0; k < c.size; ++k) ASSERT_EQ(low[k], std::byte{0}) << "stack " << i << " byte " << k;
  }
  StackRegion::recycle(std::move(again));
  auto other = StackRegion::reuse_or_map(5, 64 * 1024);
  EXPECT_EQ(other->count(), 5u);
  const auto c = other->context(4);
  EXPECT_EQ(static_cast<const std::byte*>(c.sp)[-1], std::byte{0});
}

// With several host threads (RunOptions::host_cores) the stack tops are made resident, and a
// recycled region zeroed, in ranges of stacks on each thread: every stack's top page is resident
// and zero, every byte written is zero again on reuse, the last stack of each range included.
TEST(StackRegion, HostThreadsPrepareEveryStackOfTheirRanges) {
  constexpr std::size_t kStacks = 3 * 4096 + 7, kBytes = 64 * kKiB;
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto r = StackRegion::reuse_or_map(kStacks, kBytes, 3);
  auto top_resident = [&](const StackRegion& region, std::size_t i) {
    unsigned char in = 0;
    const auto* top = static_cast<std::byte*>(region.context(i).sp) - page;
    EXPECT_EQ(::mincore(const_cast<std::byte*>(top), page, &in), 0);
    return (in & 1) != 0;
  };
  const bool populates = top_resident(*r, 0);
  for (std::size_t i = 0; i < kStacks; ++i) {
    const auto c = r->context(i);
    auto* sp = static_cast<std::byte*>(c.sp);
    if (populates) {
      ASSERT_TRUE(top_resident(*r, i)) << "stack " << i;
    }
    ASSERT_EQ(sp[-1], std::byte{0}) << "stack " << i;
    sp[-1] = std::byte{0x5a};                                 // its top page
    sp[-static_cast<std::ptrdiff_t>(c.size)] = std::byte{0x5a};  // and its lowest byte
  }
  StackRegion::recycle(std::move(r));
  auto again = StackRegion::reuse_or_map(kStacks, kBytes, 3);
  for (std::size_t i = 0; i < kStacks; ++i) {
    const auto c = again->context(i);
    const auto* sp = static_cast<const std::byte*>(c.sp);
    ASSERT_EQ(sp[-1], std::byte{0}) << "stack " << i;
    ASSERT_EQ(sp[-static_cast<std::ptrdiff_t>(c.size)], std::byte{0}) << "stack " << i;
  }
}

TEST(StackRegion, GuardsArmedWhileRunningProtectOnlyTheRunningStack) {
  StackRegion r(8, 64 * kKiB, StackRegion::Guards::while_running);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(permissions_at(r.guard(i)), "rw-p");
  r.arm(3);
  EXPECT_EQ(permissions_at(r.guard(3)), "---p");
  EXPECT_EQ(permissions_at(r.guard(2)), "rw-p");
  EXPECT_EQ(permissions_at(r.guard(4)), "rw-p");
  r.disarm(3);
  EXPECT_EQ(permissions_at(r.guard(3)), "rw-p");
}

void touch(const void* a) { *static_cast<volatile char*>(const_cast<void*>(a)) = 1; }

TEST(StackRegionDeathTest, AWriteIntoAGuardIsReportedAndEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        detail::report_vp_faults();
        StackRegion r(4, 64 * kKiB, StackRegion::Guards::permanent);
        touch(r.guard(2));
      },
      "the VP of rank 2 overflowed its stack of 64 KiB");
  EXPECT_DEATH(
      {
        detail::report_vp_faults();
        StackRegion r(4, 128 * kKiB, StackRegion::Guards::while_running);
        r.arm(1);
        touch(r.guard(1));
      },
      "the VP of rank 1 overflowed its stack of 128 KiB");
  if (!StackRegion::kernel_guards()) return;
  EXPECT_DEATH(
      {
        detail::report_vp_faults();
        StackRegion r(4, 64 * kKiB, StackRegion::Guards::installed);
        touch(r.guard(3));
      },
      "the VP of rank 3 overflowed its stack of 64 KiB");
}

// Each frame holds 1 KiB the compiler cannot drop.
int deep(int n) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(n);
  if (n == 0) return pad[0];
  return deep(n - 1) + pad[0];
}

TEST(StackRegionDeathTest, AVpThatOverflowsItsStackIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  RunOptions o;
  o.stack_bytes = 256 * kKiB;
  const Machine m = parse_machine("mesh:1x2");
  EXPECT_DEATH(run(m, [](Proc& p) { if (p.rank() == 1) deep(4096); }, o),
               "the VP of rank 1 overflowed its stack of 256 KiB");
  // Within the stack, the same recursion is fine.
  EXPECT_NO_THROW(run(m, [](Proc& p) { if (p.rank() == 1) deep(64); }, o));
}

// A process of a split run holds the stacks of its own ranks only, and names the rank, not the stack.
TEST(StackRegionDeathTest, AVpOfASplitRunThatOverflowsItsStackIsNamedByItsRank) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  RunOptions o;
  o.stack_bytes = 256 * kKiB;
  o.phantom_payloads = true;
  o.host_cores = 1;
  const Machine m = parse_machine("mesh:2x2");
  EXPECT_DEATH(ts_test::run_split(
                   m,
                   [](Proc& p) {
                     if (p.rank() == 3) deep(4096);
                   },
                   o, 2),
               "the VP of rank 3 overflowed its stack of 256 KiB");
}

// ... on whichever host thread the VP's code runs: here every VP overflows in its first turn,
// which runs ahead on four host threads, and the report names the VP one host core meets first.
TEST(StackRegionDeathTest, AVpThatOverflowsOnAHelperThreadIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  RunOptions o;
  o.stack_bytes = 256 * kKiB;
  o.host_cores = 4;
  const Machine m = parse_machine("mesh:2x4");
  EXPECT_DEATH(run(m, [](Proc&) { deep(4096); }, o), "the VP of rank 0 overflowed its stack of 256 KiB");
}

// A few milliseconds of host work the compiler cannot drop.
void host_work() {
  volatile double x = 0;
  for (int i = 0; i < 5'000'000; ++i) x = x + 1.0;
}

// Programs an instant lets go on run at once: a hardware barrier goes on with the last VP to reach
// it (rank 3, in its own turn) and releases the others at one instant. Ranks 1 and 2 abort there,
// rank 1, the first in rank order, last by host time. The report is rank 1's, as on one host core
// (rank 2's thread stays silent: the process would die of its report before rank 1's).
TEST(StackRegionDeathTest, FaultsAtOneInstantAreReportedAsOnOneHostCore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Machine m = parse_machine("mesh:1x4,barrier=hardware");
  const Program program = [](Proc& p) {
    p.barrier();
    if (p.rank() == 1) host_work();
    if (p.rank() == 1 || p.rank() == 2) std::abort();
  };
  for (int cores : {1, 4}) {
    RunOptions o;
    o.host_cores = cores;
    o.parallel_programs_from_us = 0;
    EXPECT_DEATH(run(m, program, o), "the program of rank 1 died of SIGABRT") << cores;
  }
}

// Any other fault in a VP's code names the VP too (a C program's crash under touchstone mpirun
// would otherwise end the process without saying which rank), on either execution, and the
// process still dies of it.
TEST(StackRegionDeathTest, AFaultInAVpsCodeNamesTheVpAndTheSignal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Machine m = parse_machine("mesh:1x4");
  for (Execution e : {Execution::fibers, Execution::threads}) {
    RunOptions o;
    o.execution = e;
    EXPECT_DEATH(run(m, [](Proc& p) {
                   if (p.rank() == 3) std::abort();
                 }, o),
                 "the program of rank 3 died of SIGABRT");
    // A page the program may not touch: no undefined behaviour for a sanitizer to catch first.
    void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    EXPECT_DEATH(run(m, [page](Proc& p) {
                   if (p.rank() == 2) *static_cast<volatile int*>(page) = 1;
                 }, o),
                 "the program of rank 2 died of SIGSEGV \\(an invalid memory access\\)");
    ::munmap(page, 4096);
#if !defined(__SANITIZE_ADDRESS__)  // UndefinedBehaviorSanitizer (built with it) reports it first
    EXPECT_DEATH(run(m, [](Proc& p) {
                   volatile int zero = 0;
                   if (p.rank() == 1) p.compute(1000 / zero);
                 }, o),
                 "the program of rank 1 died of SIGFPE");
#endif
  }
}

}  // namespace
