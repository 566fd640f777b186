// Proc::leave: a program ends its part in the emulation where it calls it, and the rest of it
// (checking, freeing) runs after the event loop, on several host cores at once when the run has
// them. Every run below is repeated on fibers with 1, 2 and 4 host cores, on threads, and
// perturbed, and must be the same run each time: same times, same trace, same report.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

using ts_test::HostConfig;

constexpr HostConfig kConfigs[] = {{Execution::fibers, 1, 0},  {Execution::fibers, 2, 0},  {Execution::fibers, 4, 0},
                                   {Execution::threads, 0, 0}, {Execution::fibers, 4, 17}, {Execution::threads, 2, 23}};

// The same successful run in every configuration; returns the first.
RunResult same_run_everywhere(const Machine& m, const Program& program) {
  std::vector<RunResult> runs;
  for (const HostConfig& c : kConfigs) runs.push_back(run(m, program, ts_test::options(c)));
  for (std::size_t i = 1; i < runs.size(); ++i) {
    SCOPED_TRACE(ts_test::describe(kConfigs[i]));
    ts_test::expect_same_run(runs[i], runs[0]);
  }
  return runs[0];
}

// The same failure in every configuration: its report (RunError::what) from the first.
template <class Failure>
std::string same_failure_everywhere(const Machine& m, const Program& program) {
  std::vector<std::string> reports;
  for (const HostConfig& c : kConfigs) {
    try {
      run(m, program, ts_test::options(c));
      ADD_FAILURE() << "the run did not fail: " << ts_test::describe(c);
    } catch (const Failure& e) {
      reports.emplace_back(e.what());
    }
  }
  for (std::size_t i = 1; i < reports.size(); ++i) EXPECT_EQ(reports[i], reports[0]) << ts_test::describe(kConfigs[i]);
  return reports.empty() ? std::string() : reports[0];
}

// Each rank computes rank + 1 us, passes 64 bytes round a ring, and leaves; the rest of its program
// checks what it received and records it. Its finish time is its clock where it left: (rank + 1)
// us of computing, then the ring's receive, exactly as if the program had returned there.
TEST(Leave, FinishTimeIsWhereTheProgramLeftAndTheRestRunsAfterwards) {
  const Machine m = parse_machine("mesh:4x4");
  std::vector<std::atomic<int>> checked(16);
  auto ring = [&](bool leave) {
    return [&checked, leave](Proc& p) {
      const int n = p.size(), me = p.rank();
      std::vector<std::byte> out(64, std::byte(me)), in(64);
      p.compute(microseconds(me + 1));
      Request s = p.isend((me + 1) % n, 0, out);
      p.recv((me + n - 1) % n, 0, in);
      p.wait(s);
      if (!leave) return;
      p.leave();
      checked[static_cast<std::size_t>(me)] += in[63] == std::byte((me + n - 1) % n) ? 1 : 100;
    };
  };
  const RunResult left = same_run_everywhere(m, ring(true));
  for (int r = 0; r < 16; ++r) EXPECT_EQ(checked[static_cast<std::size_t>(r)].load(), 6) << "rank " << r;
  // The same program returning where it left: the same run in every respect.
  ts_test::expect_same_run(run(m, ring(false)), left);
}

// The rest of a program may not call the runtime: the run fails with a usage error naming the
// rank, whatever the host cores.
TEST(Leave, ARuntimeCallAfterLeavingIsAUsageError) {
  const std::string report = same_failure_everywhere<RunUsageError>(parse_machine("mesh:2x2"), [](Proc& p) {
    p.compute(microseconds(1));
    p.leave();
    if (p.rank() == 2) p.compute(microseconds(1));
  });
  EXPECT_NE(report.find("rank 2 failed at t=1 us: rank 2 called the runtime after Proc::leave()"), std::string::npos)
      << report;
}

// Every rank's rest fails; the report names the first rank to leave in the sequential order, not
// the first whose rest a host thread happened to finish. A chain makes that order 7, 6, ..., 0:
// each rank leaves once it has heard from the next one.
TEST(Leave, TheFailureReportedIsTheFirstInTheOrderTheRanksLeft) {
  auto chain = [](bool leave) {
    return [leave](Proc& p) {
      std::vector<std::byte> b(8);
      if (p.rank() < p.size() - 1) p.recv(p.rank() + 1, 0, b);
      if (p.rank() > 0) p.send(p.rank() - 1, 0, b);
      if (leave) p.leave();
      throw std::runtime_error("rank " + std::to_string(p.rank()) + "'s check failed");
    };
  };
  const Machine m = parse_machine("mesh:2x4");
  const std::string left = same_failure_everywhere<RunError>(m, chain(true));
  EXPECT_EQ(left.rfind("rank 7 failed at t=", 0), 0u) << left;
  EXPECT_NE(left.find(" us: rank 7's check failed\n"), std::string::npos) << left;
  // The program that fails where it would have left names the same rank at the same time (its
  // run stops there, so only the first line is the same).
  try {
    run(m, chain(false));
    ADD_FAILURE() << "the run did not fail";
  } catch (const RunError& e) {
    const std::string returned = e.what();
    EXPECT_EQ(left.substr(0, left.find('\n')), returned.substr(0, returned.find('\n')));
  }
}

TEST(Leave, InsideATaskIsAUsageError) {
  const std::string report = same_failure_everywhere<RunUsageError>(parse_machine("mesh:2x2"), [](Proc& p) {
    Request t = p.spawn(p.world(), [&](const Group&) {
      if (p.rank() == 1) p.leave();
    });
    p.wait(t);
  });
  EXPECT_NE(report.find("rank 1: Proc::leave() inside a task"), std::string::npos) << report;
}

// A receive request that the rest of a program lets go uncompleted is reported as if the program
// had returned with it: the report of the run that left equals the run that returned.
TEST(Leave, ARequestLetGoInTheRestIsReportedAsAtTheProgramsEnd) {
  const Machine m = parse_machine("mesh:2x2");
  auto program = [](bool leave) {
    return [leave](Proc& p) {
      std::vector<std::byte> b(8);
      Request r = p.irecv(any_source, 5, b);
      p.compute(microseconds(2));
      if (leave) p.leave();
    };
  };
  const std::string left = same_failure_everywhere<RunError>(m, program(true));
  std::string returned;
  try {
    run(m, program(false));
  } catch (const RunError& e) {
    returned = e.what();
  }
  EXPECT_NE(left.find("a receive request"), std::string::npos) << left;
  EXPECT_EQ(left, returned);
}

// When the emulation fails after a rank left, the rests do not run: they unwind (their objects are
// destroyed) and the run reports the emulation's failure.
TEST(Leave, AfterAFailedEmulationTheRestsUnwindWithoutRunning) {
  std::atomic<int> ran{0}, unwound{0};
  struct Guard {
    std::atomic<int>& n;
    ~Guard() { ++n; }
  };
  const std::string report = same_failure_everywhere<RunError>(parse_machine("mesh:2x2"), [&](Proc& p) {
    const Guard g{unwound};
    if (p.rank() == 3) {
      p.compute(microseconds(5));
      throw std::runtime_error("rank 3 gives up");
    }
    p.leave();
    ++ran;
  });
  EXPECT_NE(report.find("rank 3 failed at t=5 us: rank 3 gives up"), std::string::npos) << report;
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(unwound.load(), 4 * static_cast<int>(std::size(kConfigs)));
}

}  // namespace
