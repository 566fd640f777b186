// One emulation split over several processes (RunOptions::partition; docs/parallel.md, "Several
// processes"), played by threads (support/split_run.hpp): every process must end with the single
// process's run, trace_hash, times and counts included, and a failure in one must end them all.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "support/split_run.hpp"

using namespace touchstone;

namespace {

RunOptions phantom() {
  RunOptions o;
  o.phantom_payloads = true;
  o.host_cores = 1;
  return o;
}

// A process's result is the single process's, in everything the run decides.
void expect_same_split(const RunResult& r, const RunResult& one) {
  ts_test::expect_same_run(r, one, true);
  EXPECT_EQ(r.sent, one.sent);
  EXPECT_EQ(r.stats.payload_bytes, one.stats.payload_bytes);
}

// Every process's result is the single process's.
void expect_split_runs_same(const Machine& m, const Program& program, const std::vector<int>& parts,
                            RunOptions opts = phantom()) {
  const RunResult one = run(m, program, opts);
  for (const int n : parts) {
    SCOPED_TRACE(::testing::Message() << n << " processes");
    const ts_test::SplitRun split = ts_test::run_split(m, program, opts, n);
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(::testing::Message() << "process " << k);
      if (const auto& f = split.failures[static_cast<std::size_t>(k)]) {
        try {
          std::rethrow_exception(f);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "the split run failed: " << e.what();
        }
        continue;
      }
      expect_same_split(split.results[static_cast<std::size_t>(k)], one);
    }
  }
}

// Each process's run ends in an error whose text has `what`.
void expect_every_process_fails(const Machine& m, const Program& program, int parts, const std::string& what,
                                RunOptions opts = phantom()) {
  const ts_test::SplitRun split = ts_test::run_split(m, program, opts, parts);
  for (int k = 0; k < parts; ++k) {
    SCOPED_TRACE(::testing::Message() << "process " << k);
    const auto& f = split.failures[static_cast<std::size_t>(k)];
    ASSERT_TRUE(f) << "the run did not fail";
    try {
      std::rethrow_exception(f);
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

void ring(Proc& p) {
  std::vector<std::byte> in(100), out(100);
  const int n = p.size();
  p.sendrecv((p.rank() + 1) % n, 0, out, (p.rank() + n - 1) % n, 0, in);
}

// Every rank sends to every other, long and short messages at once, with computation between: worms
// block each other across the processes' shares of the machine, and receives match any source.
void crowded(Proc& p) {
  const int n = p.size(), me = p.rank();
  std::vector<std::byte> buf(700);
  std::vector<Request> reqs;
  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n;
    reqs.push_back(
        p.isend(to, k % 3, std::span<const std::byte>(buf).first(static_cast<std::size_t>((me * 37 + k * 11) % 700))));
  }
  std::vector<std::vector<std::byte>> in(static_cast<std::size_t>(n), std::vector<std::byte>(700));
  for (int k = 1; k < n; ++k) {
    p.compute(static_cast<Time>((me * 13 + k) % 7) * 1000);
    p.recv(any_source, any_tag, in[static_cast<std::size_t>(k)]);
  }
  p.waitall(reqs);
}

TEST(Partition, ARingSplitOverProcessesIsTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), ring, {1, 2, 3, 4, 16});
}

TEST(Partition, CrowdedTrafficSplitOverProcessesIsTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), crowded, {2, 3, 4});
  expect_split_runs_same(ts_test::prime_machine("torus:4x4"), crowded, {2, 4});
}

TEST(Partition, MoreProcessesThanRanksLeaveSomeWithoutPrograms) {
  expect_split_runs_same(ts_test::prime_machine("mesh:2x2"), ring, {6});
}

TEST(Partition, ADeadlockAcrossProcessesEndsEveryProcess) {
  const Program deadlock = [](Proc& p) {
    std::vector<std::byte> b(8);
    p.recv((p.rank() + 1) % p.size(), 0, b);
  };
  expect_every_process_fails(ts_test::prime_machine("mesh:4x4"), deadlock, 2, "deadlock");
}

TEST(Partition, AProgramThatFailsInOneProcessEndsEveryProcess) {
  const Program fails = [](Proc& p) {
    ring(p);
    if (p.rank() == 13) throw std::runtime_error("rank 13 gives up");
    ring(p);
  };
  const ts_test::SplitRun split = ts_test::run_split(ts_test::prime_machine("mesh:4x4"), fails, phantom(), 2);
  for (int k = 0; k < 2; ++k) ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "process " << k;
  try {
    std::rethrow_exception(split.failures[1]);
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("rank 13 gives up"), std::string::npos) << e.what();
  }
  try {
    std::rethrow_exception(split.failures[0]);
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("process 1 of the split run failed"), std::string::npos) << e.what();
  }
}

TEST(Partition, WhatASplitRunCannotCarryIsRefusedWithTheReason) {
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_every_process_fails(ts_test::prime_machine("mesh:4x4"), ring, 2, "phantom payloads", real);
  Machine holds = ts_test::prime_machine("mesh:4x4");
  holds.net.send_holds_until_received = true;
  expect_every_process_fails(holds, ring, 2, "held until its receive");
  Machine free_sends = ts_test::prime_machine("mesh:4x4");
  free_sends.costs.send_overhead = free_sends.costs.send_tail = free_sends.costs.send_per_packet = 0;
  expect_every_process_fails(free_sends, ring, 2, "no lookahead");
  const Program groups = [](Proc& p) { p.subgroup(p.world(), {0, 1}); };
  expect_every_process_fails(ts_test::prime_machine("mesh:4x4"), groups, 2, "groups other than the world");
}

}  // namespace

namespace {

// Every catalog algorithm at two sizes, phantom payloads, split over 2 and 4 processes (4 perturbed):
// the single process's run, or, in every process, a refusal that names what cannot be split. Returns
// how many (algorithm, size) pairs ran split, and lists the refused algorithms.
int expect_same_split_on_the_catalog(const std::string& machine, std::array<std::size_t, 2> sizes,
                                     std::set<std::string>& refused) {
  const Machine m = parse_machine(machine);
  int compared = 0;
  for (const auto& alg : algorithms::catalog()) {
    if (alg.name.starts_with("selftest/deadlock")) continue;
    for (const std::size_t size : sizes) {
      SCOPED_TRACE(fmt::format("{} {} bytes on {}", alg.name, size, machine));
      const algorithms::Args args{size, 0, false};
      const Program program = [&](Proc& p) { alg.program(p, args); };
      RunOptions o = phantom();
      RunResult one;
      try {
        one = run(m, program, o);
      } catch (const std::exception&) {
        continue;  // the machine does not suit it (a mesh algorithm on a switch, a traffic matrix missing)
      }
      bool split = true;
      for (const int parts : {2, 4}) {
        o.perturb = parts == 4 ? 7 : 0;
        const ts_test::SplitRun r = ts_test::run_split(m, program, o, parts);
        for (int k = 0; k < parts; ++k) {
          SCOPED_TRACE(fmt::format("process {} of {}", k, parts));
          if (const auto& f = r.failures[static_cast<std::size_t>(k)]) {
            split = false;
            try {
              std::rethrow_exception(f);
            } catch (const std::exception& e) {
              const std::string what = e.what();
              EXPECT_TRUE(what.find("split over") != std::string::npos ||
                          what.find("of the split run failed") != std::string::npos)
                  << what;
            }
            continue;
          }
          expect_same_split(r.results[static_cast<std::size_t>(k)], one);
        }
      }
      if (split)
        ++compared;
      else
        refused.insert(alg.name);
    }
  }
  return compared;
}

// One test per machine, so that they run side by side; the perturbed runs' sleeps are most of the time.
void expect_the_catalog_split(const std::string& machine, std::array<std::size_t, 2> sizes) {
  std::set<std::string> refused;
  const int compared = expect_same_split_on_the_catalog(machine, sizes, refused);
  std::string names;
  for (const auto& r : refused) names += r + " ";
  std::printf("%s: %d split runs the same; refused: %s\n", machine.c_str(), compared, names.c_str());
  EXPECT_GT(compared, 0);
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOrRefusedOnAMesh) {
  expect_the_catalog_split("mesh:8x8", {16, 4100});
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOrRefusedOnTheCm5) {
  expect_the_catalog_split("cm5:64", {16, 1100});
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOrRefusedOnASwitchCluster) {
  expect_the_catalog_split("switch2:16+16", {16, 4100});
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOrRefusedOnTheDelta) {
  expect_the_catalog_split("delta:8x8", {16, 4100});
}

}  // namespace
