// Proc::await_start and Proc::start: a VP may wait, outside the emulation, for another VP to start
// it (as MPI_Comm_spawn starts processes); one that nobody starts leaves the run as if its program
// had returned at once. Every run below is repeated on fibers with 1, 2 and 4 host cores, on
// threads, and perturbed, and must be the same run each time.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

const int kWays = static_cast<int>(std::size(ts_test::kParallelWays));

// The same successful run every way (ts_test::kParallelWays); returns the first.
RunResult same_run_everywhere(const Machine& m, const Program& program) {
  return ts_test::same_run_every_way(
             m, program, [] {}, [] {})
      .front();
}

// The same failure every way, a usage error of the program's: its report.
std::string same_usage_error_everywhere(const Machine& m, const Program& program) {
  EXPECT_THROW(run(m, program), RunUsageError);
  return ts_test::same_failure_every_way(m, program);
}

// Ranks 0..7 pass 64 bytes round a ring of their own; ranks 8..15 wait to be started, and nobody
// starts them. The run is the run in which their programs returned at once: same events, times,
// finish times and trace_hash.
TEST(Start, VpsNobodyStartsLeaveTheRunAsIfTheyHadReturned) {
  const Machine m = parse_machine("mesh:4x4");
  std::atomic<int> not_started{0};
  auto ring = [&](bool wait) {
    return [&not_started, wait](Proc& p) {
      const int me = p.rank();
      if (me >= 8) {
        if (wait && !p.await_start()) ++not_started;
        return;
      }
      const Group eight = p.group({0, 1, 2, 3, 4, 5, 6, 7});
      std::vector<std::byte> out(64, std::byte(me)), in(64);
      p.compute(microseconds(me + 1));
      Request s = p.isend((me + 1) % 8, 0, out, eight);
      p.recv((me + 7) % 8, 0, in, eight);
      p.wait(s);
    };
  };
  const RunResult waited = same_run_everywhere(m, ring(true));
  EXPECT_EQ(not_started.load(), 8 * kWays);
  ts_test::expect_same_run(run(m, ring(false)), waited);
}

// Rank 0 computes 5 us and starts rank 5, which goes on at rank 0's clock (5 us exactly), receives
// rank 0's message and answers it. The VPs nobody starts stay out.
TEST(Start, AStartedVpGoesOnAtTheStartersClock) {
  const Machine m = parse_machine("mesh:4x4");
  std::vector<std::atomic<Time>> clock_at_start(16);
  std::atomic<int> answered{0}, not_started{0};
  const RunResult r = same_run_everywhere(m, [&](Proc& p) {
    const int me = p.rank();
    std::vector<std::byte> buf(64, std::byte(me));
    if (me == 0) {
      p.compute(microseconds(5));
      p.start(5);
      p.send(5, 1, buf);
      p.recv(5, 2, buf);
      if (buf[0] == std::byte(5)) ++answered;
      return;
    }
    if (!p.await_start()) {
      ++not_started;
      return;
    }
    clock_at_start[static_cast<std::size_t>(me)] = p.now();
    p.recv(0, 1, buf);
    std::fill(buf.begin(), buf.end(), std::byte(me));
    p.send(0, 2, buf);
  });
  EXPECT_EQ(clock_at_start[5].load(), microseconds(5));
  EXPECT_EQ(answered.load(), kWays);
  EXPECT_EQ(not_started.load(), 14 * kWays);
  EXPECT_GT(r.finish_time[5], microseconds(5));
  EXPECT_EQ(r.makespan, r.finish_time[0]);  // rank 0 receives the answer last
  for (int v = 1; v < 16; ++v) {
    if (v != 5) {
      EXPECT_EQ(r.finish_time[static_cast<std::size_t>(v)], 0) << "VP " << v;
    }
  }
}

// Rank 0 starts rank 1 at t = 0, before rank 1's first turn: rank 1's await_start returns at once.
TEST(Start, AVpStartedBeforeItsFirstCallGoesOnFromThere) {
  const Machine m = parse_machine("mesh:2x2");
  std::atomic<int> started{0};
  same_run_everywhere(m, [&](Proc& p) {
    if (p.rank() == 0) {
      p.start(1);
      return;
    }
    if (p.await_start()) ++started;
  });
  EXPECT_EQ(started.load(), kWays);
}

// A started VP counts as a rank: a deadlock report names it and counts it among the ranks (here
// RunOptions::ranks is 2, as for an MPI run with -np 2 on four VPs, and rank 0 starts VP 3).
TEST(Start, ADeadlockReportNamesTheStartedVp) {
  const Program program = [](Proc& p) {
    std::vector<std::byte> buf(8);
    if (p.rank() == 0) p.start(3);
    if (p.rank() >= 2 && !p.await_start()) return;
    if (p.rank() == 3) {
      p.recv(1, 0, buf);  // rank 1 sends nothing
    }
  };
  for (const ts_test::HostConfig& w : ts_test::kParallelWays) {
    RunOptions o = ts_test::every_parallel_turn(w);
    o.ranks = 2;
    try {
      run(parse_machine("mesh:2x2"), program, o);
      ADD_FAILURE() << ts_test::describe(w) << ": the run did not fail";
    } catch (const RunError& e) {
      const std::string report = e.what();
      EXPECT_NE(report.find("2 of 3 ranks finished (1 more VP(s) of the machine run no rank)"), std::string::npos)
          << ts_test::describe(w) << "\n"
          << report;
      EXPECT_NE(report.find("rank 3 blocked since t=0 us in wait for recv(source=1, tag=0)"), std::string::npos)
          << report;
    }
  }
}

TEST(Start, StartingAVpThatDoesNotWaitIsAUsageError) {
  const std::string report = same_usage_error_everywhere(parse_machine("mesh:2x2"), [](Proc& p) {
    std::vector<std::byte> buf(8);
    if (p.rank() == 1) p.send(0, 0, buf);
    if (p.rank() == 0) {
      p.recv(1, 0, buf);  // after t = 0, where rank 2 returned
      p.start(2);
    }
  });
  EXPECT_NE(report.find("rank 0 cannot start rank 2: it does not wait to be started"), std::string::npos) << report;
}

// Started before its first call, a VP must still make that call await_start.
TEST(Start, AVpStartedBeforeItsFirstCallMustWait) {
  const std::string report = same_usage_error_everywhere(parse_machine("mesh:2x2"), [](Proc& p) {
    if (p.rank() == 0) p.start(1);
  });
  EXPECT_NE(report.find("rank 1 was started (Proc::start) but its program ended without calling Proc::await_start"),
            std::string::npos)
      << report;
}

// A VP started does its work and waits again, to be started anew: rank 1 answers rank 0 twice, each
// time from rank 0's clock at the start, and its third wait ends with the run.
TEST(Start, AStartedVpMayWaitAgainAndBeStartedAnew) {
  const Machine m = parse_machine("mesh:2x2");
  std::vector<std::atomic<Time>> started_at(2);
  std::atomic<int> ends{0};
  same_run_everywhere(m, [&](Proc& p) {
    std::vector<std::byte> buf(16);
    if (p.rank() == 0) {
      for (int round = 0; round < 2; ++round) {
        p.compute(microseconds(10));
        p.start(1);
        p.recv(1, round, buf);
      }
      return;
    }
    if (p.rank() != 1) return;
    for (int round = 0; p.await_start(); ++round) {
      started_at[static_cast<std::size_t>(round)] = p.now();
      p.send(0, round, buf);
    }
    ++ends;
  });
  EXPECT_EQ(started_at[0].load(), microseconds(10));
  EXPECT_GT(started_at[1].load(), microseconds(20));  // rank 0's clock after the first answer, plus 10 us
  EXPECT_EQ(ends.load(), kWays);
}

TEST(Start, StartingTwiceOrItselfAreUsageErrors) {
  const Machine m = parse_machine("mesh:2x2");
  std::string report = same_usage_error_everywhere(m, [](Proc& p) {
    if (p.rank() == 0) {
      p.compute(microseconds(1));
      p.start(1);
      p.start(1);
    } else {
      p.await_start();
    }
  });
  EXPECT_NE(report.find("rank 0 cannot start rank 1: it does not wait to be started"), std::string::npos) << report;
  report = same_usage_error_everywhere(m, [](Proc& p) {
    if (p.rank() == 0) p.start(0);
  });
  EXPECT_NE(report.find("rank 0 cannot start rank 0: it is the starter itself"), std::string::npos) << report;
}

}  // namespace
