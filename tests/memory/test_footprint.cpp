// Every catalog algorithm's memory bound (Algorithm::footprint with algorithms::host_memory's
// runtime terms) is checked against the memory a run really allocates, counted by the accounting
// allocator of this executable (counting_allocator.cpp): exact byte counts, the same on every run,
// independent of the host. Fiber stacks are mapped, not allocated; kVpBytes's stack share is
// measured as RSS in docs/performance.md.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/scratch.hpp"
#include "algorithms/traffic.hpp"
#include "memory/counting_allocator.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

// Payload blocks are huge-page slots and mappings by default, which the counting allocator would
// not see: here they come from operator new, counted and overwritten when freed.
const bool kPayloadCounted = (algorithms::payload_blocks_from_operator_new(true), true);

struct Measured {
  std::size_t peak = 0;  ///< the most bytes the run had allocated at once
  bool ran = false;
};

// Runs `alg` on `m` and returns the most bytes allocated at once during the run, beyond what was
// allocated before it; ran = false when the algorithm does not apply to the machine.
Measured measure(const Machine& m, const algorithms::Algorithm& alg, std::size_t size, bool phantom) {
  algorithms::Args args{size, 0, !phantom};
  args.traffic = algorithms::parse_traffic(fmt::format("k=2,l=0.5,t={}", size));
  RunOptions o;
  o.phantom_payloads = phantom;
  const std::size_t before = memtest::live_bytes();
  memtest::reset_peak();
  try {
    run(m, [&](Proc& p) { alg.program(p, args); }, o);
  } catch (const RunUsageError&) {
    return {};  // the algorithm does not apply to this machine (shape, multicast hardware, ...)
  } catch (const UsageError&) {
    return {};
  } catch (const Error& e) {
    // Anything else is a failure: wrong data (a freed send buffer, counting_allocator.cpp), a deadlock.
    ADD_FAILURE() << alg.name << " on " << m.name << " with " << size << " bytes" << (phantom ? ", phantom" : "")
                  << " failed: " << e.what();
    return {};
  }
  return {memtest::peak_bytes() - before, true};
}

// Every catalog algorithm on every small machine it applies to, at a size where the runtime's own
// memory dominates and one where the payloads do, with and without phantom payloads.
TEST(Footprint, BoundsTheMeasuredPeakOfEveryCatalogAlgorithm) {
  // The HPAM machines with buffered sends: under the preset's held sends (docs/model.md 2.21) a
  // polling protocol such as alltoallv/random-scheduling spins until the time limit.
  const std::vector<std::string> machines{"mesh:4x4",
                                          "mesh:8x8",
                                          "hpam:2x2/2x2,Q=4,send_holds_until_received=off",
                                          "hpam:1x1/4x4,send_holds_until_received=off",
                                          "cm5:32",
                                          "switch:8",
                                          "switch2:4+4"};
  int algorithms_run = 0;
  for (const auto& alg : algorithms::catalog()) {
    if (alg.name == "selftest/deadlock") continue;  // ends in a deadlock report by design
    int runs = 0;
    for (const auto& spec : machines) {
      const Machine m = parse_machine(spec);
      for (std::size_t size : {std::size_t{64}, std::size_t{4096}})
        for (bool phantom : {false, true}) {
          const Measured got = measure(m, alg, size, phantom);
          if (!got.ran) continue;
          ++runs;
          const std::size_t bound = algorithms::heap_bound(alg.footprint(m.nodes(), size), m.nodes(), phantom);
          EXPECT_LE(got.peak, bound) << alg.name << " on " << spec << " with " << size << " bytes"
                                     << (phantom ? ", phantom" : "");
        }
    }
    EXPECT_GT(runs, 0) << alg.name << " ran on none of the machines";
    algorithms_run += runs > 0;
  }
  EXPECT_GT(algorithms_run, 30);
}

// The payload terms are what make the bound grow with the size: from 64 to 4096 bytes the measured
// peak of the all-to-alls on mesh:8x8 grows by at most what the footprint's payload terms grow by,
// and by at least a quarter of it (the bound is not a blanket over-estimate).
TEST(Footprint, PayloadTermsFollowTheMeasuredGrowthOfTheAllToAlls) {
  const Machine m = parse_machine("mesh:8x8");
  for (const auto* alg : algorithms::select("alltoall/all")) {
    const Measured small = measure(m, *alg, 64, false), large = measure(m, *alg, 4096, false);
    ASSERT_TRUE(small.ran && large.ran) << alg->name;
    auto payload = [&](std::size_t size) {
      const auto f = alg->footprint(m.nodes(), size);
      return f.buffers + f.in_flight;
    };
    const std::size_t grew = large.peak - small.peak, allowed = payload(4096) - payload(64);
    // The runtime's own bookkeeping (queues, the mailbox's index) follows the messages' timing, which
    // changes with the size: a few KiB either way (2.5 KiB seen on logp-lev-bfly), not payload.
    constexpr std::size_t kBookkeepingSlack = 64 << 10;
    EXPECT_LE(grew, allowed + kBookkeepingSlack) << alg->name;
    EXPECT_GE(grew * 4, allowed) << alg->name;
  }
}

// Under phantom payloads no byte of the harness's buffers is read for its value, so the
// VPs of a run share one send and one receive buffer (harness.hpp, PayloadBuffer). The all-to-alls
// that allocate nothing else for payloads then grow by 2 p L from 64 to 4096 bytes on mesh:8x8
// (two shared buffers of p blocks), not by the 2 p^2 L of every VP's own buffers, which the same
// algorithms still allocate with real payloads (64 times as much here).
TEST(Footprint, PhantomHarnessBuffersAreSharedByTheVpsOfARun) {
  const Machine m = parse_machine("mesh:8x8");
  const std::size_t p = 64, grown = 4096 - 64;
  // The runtime's bookkeeping follows the messages' timing, which changes with the size (as in
  // PayloadTermsFollowTheMeasuredGrowthOfTheAllToAlls): up to 60 KiB less at 4096 bytes was seen.
  constexpr std::size_t kBookkeepingSlack = 128 << 10;
  int checked = 0;
  for (const auto* alg : algorithms::select("alltoall/all")) {
    const auto f = alg->footprint(m.nodes(), 4096);
    if (f.buffers != f.harness) continue;  // the algorithm's own scratch still grows as p^2 L
    ++checked;
    const Measured small = measure(m, *alg, 64, true), large = measure(m, *alg, 4096, true);
    const Measured real_small = measure(m, *alg, 64, false), real_large = measure(m, *alg, 4096, false);
    ASSERT_TRUE(small.ran && large.ran && real_small.ran && real_large.ran) << alg->name;
    const std::size_t phantom_grew = large.peak - small.peak, real_grew = real_large.peak - real_small.peak;
    EXPECT_GE(phantom_grew + kBookkeepingSlack, 2 * p * grown) << alg->name;  // the shared buffers are there
    EXPECT_LE(phantom_grew, 2 * p * grown + kBookkeepingSlack) << alg->name;
    EXPECT_GE(real_grew, 2 * p * p * grown) << alg->name;  // every VP's own with real payloads
    EXPECT_EQ(algorithms::heap_bound(f, m.nodes(), true) - algorithms::heap_bound(alg->footprint(m.nodes(), 64), m.nodes(), true),
              2 * p * grown) << alg->name;
  }
  EXPECT_EQ(checked, 6);  // 1-lev-dir, -lin, -xor, -bal; pairwise, linear
}

// Under phantom payloads the alltoallv harness's buffers and the algorithms' own message
// copies (two-stage's four sets of p messages) are regions the run's VPs share. measure()'s matrix
// (k=2, l=0.5, t) gives every row and column t bytes: from t = 64 to t = 4096 on mesh:8x8 a
// phantom run grows by three shared regions of a row (send, receive, scratch: 3 t, about 12 KB;
// two-stage's measured growth is that to within 40 bytes), while with payloads every VP's own
// buffers grow (at least the p t of the receive buffers, 258 KB; 4 to 6 copies are measured).
TEST(Footprint, PhantomAlltoallvMessagesAreSharedByTheVpsOfARun) {
  const Machine m = parse_machine("mesh:8x8");
  const std::int64_t p = 64, grown = 4096 - 64;
  // The runtime's bookkeeping follows the messages' timing, which changes with t: linear-permutation
  // holds 65.8 KB more of it at 4096 bytes than at 64 (as in PhantomHarnessBuffersAreSharedByTheVpsOfARun);
  // a payload of its own per message would add p t, 252 KB.
  constexpr std::int64_t kBookkeepingSlack = 72 << 10;
  for (const auto* alg : algorithms::select("alltoallv/all")) {
    const Measured small = measure(m, *alg, 64, true), large = measure(m, *alg, 4096, true);
    const Measured real_small = measure(m, *alg, 64, false), real_large = measure(m, *alg, 4096, false);
    ASSERT_TRUE(small.ran && large.ran && real_small.ran && real_large.ran) << alg->name;
    auto grew = [](const Measured& a, const Measured& b) {
      return static_cast<std::int64_t>(b.peak) - static_cast<std::int64_t>(a.peak);
    };
    EXPECT_LE(grew(small, large), 3 * grown + kBookkeepingSlack) << alg->name;
    EXPECT_GE(grew(real_small, real_large) + kBookkeepingSlack, p * grown) << alg->name;
    // The footprint, which knows t only as a bound on every entry, allows a row of p t per region.
    const auto f = alg->footprint(m.nodes(), 4096), f64 = alg->footprint(m.nodes(), 64);
    EXPECT_EQ(algorithms::heap_bound(f, m.nodes(), true) - algorithms::heap_bound(f64, m.nodes(), true),
              static_cast<std::size_t>(3 * p * grown)) << alg->name;
  }
}

}  // namespace

namespace {

// The recursive scatters and gathers must not keep the member lists of both parts at every level
// on every processor: that is O(p) per VP (2.4 GB on mesh:128x128 for logp-lev-sq). On 4,096 VPs, where
// two lists of p ints alone are 32 KiB per VP, their heap stays within the per-VP bound.
TEST(Footprint, RecursiveScattersAndGathersKeepTheirPerVpHeapAt4096Vps) {
  const Machine m = parse_machine("mesh:64x64");
  for (const char* name : {"scatter/1-lev-dir", "scatter/2-lev-rec", "scatter/logp-lev-sq", "scatter/logp-lev-rec",
                           "gather/1-lev-dir", "gather/2-lev-rec", "gather/logp-lev-sq", "gather/logp-lev-rec"}) {
    const auto& alg = algorithms::find(name);
    const Measured got = measure(m, alg, 16, false);
    ASSERT_TRUE(got.ran) << name;
    EXPECT_LE(got.peak, algorithms::heap_bound(alg.footprint(m.nodes(), 16), m.nodes(), false)) << name;
  }
}

// A root that posts a message to every node holds a route only for the messages it is injecting:
// a route is laid out when its message takes the injection port, and given back when the message
// is received. On a 1x1024 line the route to node k has k links, 2 MiB for all 1,023 messages
// (1023 x 1024 / 2 links of 4 bytes); on 32x32, the same nodes and more links, at most 62. The
// line may not need a quarter of those 2 MiB beyond the square.
TEST(Footprint, AScatterHoldsTheRoutesOfTheMessagesInFlightOnly) {
  const auto& scatter = algorithms::find("scatter/1-lev-dir");
  const Measured line = measure(parse_machine("mesh:1x1024"), scatter, 16, true);
  const Measured square = measure(parse_machine("mesh:32x32"), scatter, 16, true);
  ASSERT_TRUE(line.ran && square.ran);
  constexpr std::size_t kEveryRoute = 1023 * 1024 / 2 * sizeof(std::uint32_t);
  EXPECT_LT(line.peak, square.peak + kEveryRoute / 4) << line.peak << " against " << square.peak;
}

// A payload moves from the send buffer into the receive buffer at the match. A message
// whose send completes after the match is never copied into a buffer of its own (here the sender
// waits for its isend only after the receiver's reply); one whose blocking send returns before its
// receive is even posted is (the program may overwrite its buffer then). 4 MiB, so that the run's
// own bookkeeping (the event queue's bucket ring is about 400 KB) stays far below a quarter of it.
TEST(Footprint, APayloadIsCopiedOnlyWhenItsSendCompletesBeforeTheMatch) {
  constexpr std::size_t kBytes = std::size_t{1} << 22;
  std::vector<std::byte> out(kBytes, std::byte{7}), in(kBytes);
  auto peak_of = [&](bool blocking, Time receive_after) {
    std::fill(in.begin(), in.end(), std::byte{0});
    const std::size_t before = memtest::live_bytes();
    memtest::reset_peak();
    run(parse_machine("mesh:1x2"), [&](Proc& p) {
      if (p.rank() == 0) {
        if (blocking) return p.send(1, 0, out);
        Request r = p.isend(1, 0, out);
        p.recv(1, 1, {});
        p.wait(r);
        return;
      }
      p.compute(receive_after);
      p.recv(0, 0, in);
      if (!blocking) p.send(0, 1, {});
    });
    EXPECT_EQ(in, out);
    return memtest::peak_bytes() - before;
  };
  EXPECT_LT(peak_of(false, 0), kBytes / 4);
  EXPECT_LT(peak_of(false, Time{1'000'000'000'000}), kBytes / 4);  // the receive posted a second later
  EXPECT_GE(peak_of(true, Time{1'000'000'000'000}), kBytes);
}

// A fake /proc/self/cgroup and cgroup tree under a fresh temporary directory.
struct FakeCgroups {
  std::string dir = fmt::format("{}/cgroups{}_{}", ::testing::TempDir(), ::getpid(), counter()++);
  static int& counter() {
    static int n = 0;
    return n;
  }
  void write(const std::string& path, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(dir + path).parent_path());
    std::ofstream(dir + path) << text;
  }
  algorithms::HostLimits limits() const { return algorithms::host_limits(dir + "/self_cgroup", dir + "/fs"); }
  CgroupLimits cgroup() const { return cgroup_limits(dir + "/self_cgroup", dir + "/fs"); }
};

TEST(HostLimits, CgroupV2MemoryMaxOfTheProcessOrAnAncestor) {
  FakeCgroups f;
  f.write("/self_cgroup", "0::/user.slice/job\n");
  f.write("/fs/user.slice/job/memory.max", "max\n");
  f.write("/fs/user.slice/memory.max", "4294967296\n");
  EXPECT_EQ(f.limits().cgroup, std::size_t{4294967296});
  f.write("/fs/user.slice/job/memory.max", "1073741824\n");
  EXPECT_EQ(f.limits().cgroup, std::size_t{1073741824});
  EXPECT_EQ(f.limits().resident(), std::size_t{1073741824});  // below any physical memory
}

TEST(HostLimits, CgroupV1MemoryControllerAndNoLimit) {
  FakeCgroups f;
  f.write("/self_cgroup", "5:cpu,cpuacct:/a\n4:memory:/batch\n0::/\n");
  f.write("/fs/memory/batch/memory.limit_in_bytes", "2147483648\n");
  f.write("/fs/memory/memory.limit_in_bytes", "9223372036854771712\n");  // v1's "no limit"
  EXPECT_EQ(f.limits().cgroup, std::size_t{2147483648});
  FakeCgroups none;
  none.write("/self_cgroup", "0::/\n");
  none.write("/fs/memory.max", "max\n");
  EXPECT_EQ(none.limits().cgroup, 0u);
  EXPECT_GT(none.limits().physical, 0u);
  EXPECT_EQ(none.limits().resident(), none.limits().physical);
}

// The CPU quota caps --host-cores' default (available_host_cores); a parent's quota binds too.
TEST(HostLimits, CgroupV2CpuMaxOfTheProcessOrAnAncestor) {
  FakeCgroups f;
  f.write("/self_cgroup", "0::/user.slice/job\n");
  f.write("/fs/cpu.max", "max 100000\n");
  f.write("/fs/user.slice/job/cpu.max", "max 100000\n");
  f.write("/fs/user.slice/cpu.max", "150000 100000\n");
  EXPECT_EQ(f.cgroup().cpus, 1.5);
  f.write("/fs/user.slice/job/cpu.max", "50000 100000\n");
  EXPECT_EQ(f.cgroup().cpus, 0.5);
  FakeCgroups none;
  none.write("/self_cgroup", "0::/\n");
  none.write("/fs/cpu.max", "max 100000\n");
  EXPECT_EQ(none.cgroup().cpus, 0.0);
  EXPECT_EQ(none.cgroup().memory_bytes, 0u);
}

TEST(HostLimits, CgroupV1CpuControllerQuotaOverPeriod) {
  FakeCgroups f;
  f.write("/self_cgroup", "5:cpu,cpuacct:/a/b\n4:memory:/batch\n1:name=systemd:/a\n0::/\n");
  f.write("/fs/cpu/a/b/cpu.cfs_quota_us", "-1\n");  // none here: its parent's binds
  f.write("/fs/cpu/a/b/cpu.cfs_period_us", "100000\n");
  f.write("/fs/cpu/a/cpu.cfs_quota_us", "250000\n");
  f.write("/fs/cpu/a/cpu.cfs_period_us", "100000\n");
  f.write("/fs/memory/batch/memory.limit_in_bytes", "2147483648\n");
  EXPECT_EQ(f.cgroup().cpus, 2.5);
  EXPECT_EQ(f.cgroup().memory_bytes, std::size_t{2147483648});
  f.write("/fs/cpu/a/b/cpu.cfs_quota_us", "50000\n");
  f.write("/fs/cpu/a/b/cpu.cfs_period_us", "50000\n");
  EXPECT_EQ(f.cgroup().cpus, 1.0);
}

// 1-lev-dir on mesh:16x16 at 1 MiB: 2 p^2 L of buffers and p^2 L in flight. A 200 GB host refuses
// it with payloads and accepts it with phantom payloads, which allocate only the two buffers of
// p L that the run's VPs share (2 p L, 512 MiB).
TEST(HostMemoryGuard, PhantomRunsAreBudgetedByWhatTheyStillAllocate) {
  const auto& alg = algorithms::find("alltoall/1-lev-dir");
  const std::size_t L = std::size_t{1} << 20, p = 256;
  const auto f = alg.footprint(static_cast<int>(p), L);
  EXPECT_EQ(f.buffers, 2 * p * p * L);
  EXPECT_EQ(f.in_flight, p * p * L);
  EXPECT_EQ(f.harness, 2 * p * p * L);
  EXPECT_EQ(f.harness_phantom, 2 * p * L);
  algorithms::HostLimits host;
  host.physical = 200'000'000'000;  // 0.9 of it: 180 GB, between 2 and 3 p^2 L (137 and 206 GB)
  const auto real = algorithms::host_memory(f, static_cast<int>(p), false, 1 << 20);
  const auto phantom = algorithms::host_memory(f, static_cast<int>(p), true, 1 << 20);
  try {
    algorithms::check_host_memory("1-lev-dir", real, host);
    ADD_FAILURE() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("needs about 206."), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("this host has 200.0 GB"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(algorithms::check_host_memory("1-lev-dir", phantom, host));
  EXPECT_LT(phantom.resident, std::size_t{1} << 30);  // 512 MiB of buffers and the runtime's own
}

// Every VP costs its heap share and its touched stack in resident memory, and its whole stack in
// the address space: a cgroup or ulimit -v binds even when the host has memory to spare.
TEST(HostMemoryGuard, CountsEveryVpAndReadsTheCgroupAndAddressSpaceLimits) {
  const algorithms::Footprint none{};
  const auto need = algorithms::host_memory(none, 1 << 20, true, 1 << 20);
  EXPECT_EQ(need.resident, (std::size_t{1} << 20) * (algorithms::kVpHeapBytes + algorithms::kVpStackBytes) +
                               algorithms::kRunHeapBytes + algorithms::kProcessBytes);
  EXPECT_GE(need.address_space, need.resident + (std::size_t{1} << 40));  // 2^20 stacks of 1 MiB
  // The refusal names the limit that binds.
  auto refusal = [&](const algorithms::HostLimits& limits) -> std::string {
    try {
      algorithms::check_host_memory("a million VPs", need, limits);
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "not refused";
    return {};
  };
  algorithms::HostLimits cgroup;
  cgroup.physical = std::size_t{1} << 45;
  cgroup.cgroup = std::size_t{16} << 30;
  EXPECT_NE(refusal(cgroup).find("this process's cgroup allows 17.2 GB"), std::string::npos) << refusal(cgroup);
  algorithms::HostLimits ulimit;
  ulimit.physical = std::size_t{1} << 45;
  ulimit.address_space = std::size_t{64} << 30;
  EXPECT_NE(refusal(ulimit).find("address space limit (ulimit -v) is 68.7 GB"), std::string::npos) << refusal(ulimit);
}

}  // namespace
