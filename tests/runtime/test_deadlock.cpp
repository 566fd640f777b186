// Deadlocks end in a report, never a hang (docs/model.md 3; docs/cli.md): an application deadlock lists what
// every blocked rank waits for; a network deadlock (a cycle of worms) is reported with the cycle.
#include <gtest/gtest.h>

#include "support/run_error.hpp"

#include <regex>

#include "algorithms/registry.hpp"
#include "support/model.hpp"

using namespace touchstone;

namespace {

using ts_test::run_error;

TEST(Deadlock, ApplicationDeadlockListsEachRanksPendingOperation) {
  for (Execution e : {Execution::fibers, Execution::threads}) {
    const auto& alg = algorithms::find("selftest/deadlock");
    RunOptions o;
    o.execution = e;
    const std::string report =
        run_error(parse_machine("mesh:2x3"), [&](Proc& p) { alg.program(p, algorithms::Args{16, 0, true}); }, o);
    EXPECT_NE(report.find("application deadlock"), std::string::npos) << report;
    for (int r = 0; r < 6; ++r) {
      const int prev = (r + 5) % 6;
      const std::string line = "rank " + std::to_string(r) + " blocked since";
      const auto at = report.find(line);
      ASSERT_NE(at, std::string::npos) << report;
      const std::string rest = report.substr(at, report.find('\n', at) - at);
      EXPECT_NE(rest.find("recv(source=" + std::to_string(prev) + ", tag=0)"), std::string::npos) << rest;
    }
  }
}

TEST(Deadlock, ApplicationDeadlockAfterSomeRanksFinished) {
  const std::string report = run_error(ts_test::prime_machine("mesh:1x3"), [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() == 2) p.recv(any_source, 9, b);
  });
  EXPECT_NE(report.find("rank 2 blocked"), std::string::npos) << report;
  EXPECT_NE(report.find("recv(source=any, tag=9)"), std::string::npos) << report;
  EXPECT_NE(report.find("2 of 3 VPs finished"), std::string::npos) << report;
}

// RunOptions::describe_finished adds what a finished rank that others wait for left behind, once per
// rank, after the waits: only for the ranks waited for, and only where it has something to say.
TEST(Deadlock, FinishedRanksWaitedForAreDescribedOnce) {
  RunOptions o;
  std::vector<int> asked;
  o.describe_finished = [&asked](int rank) {
    asked.push_back(rank);
    return rank == 2 ? std::string("it went past an error") : std::string();
  };
  const std::string report = run_error(ts_test::prime_machine("mesh:2x3"), [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() == 0 || p.rank() == 1) p.recv(2, 3, b);  // rank 2 never sends
    if (p.rank() == 3) p.recv(4, 3, b);                     // nor does rank 4
  }, o);
  EXPECT_NE(report.find("  rank 0 waits in recv(source=2, tag=3) for rank(s) 2, finished\n"
                        "  rank 1 waits in recv(source=2, tag=3) for rank(s) 2, finished\n"
                        "  rank 3 waits in recv(source=4, tag=3) for rank(s) 4, finished\n"
                        "  rank 2 finished: it went past an error\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("rank 4 finished:"), std::string::npos) << report;
  EXPECT_EQ(asked, (std::vector<int>{2, 4}));  // rank 5 finished too, but nobody waits for it
}

// A waitall stops listing each receive as it matches, whatever the order they match in: the report
// names the ones still unmatched, in the order the program gave them, and no other.
TEST(Deadlock, WaitallListsOnlyTheReceivesStillUnmatchedInTheirOrder) {
  const std::string report = run_error(ts_test::prime_machine("mesh:2x4"), [](Proc& p) {
    std::vector<std::byte> b(8 * 4);
    if (p.rank() == 0) {
      std::vector<Request> reqs;
      for (int src = 7; src >= 1; --src) reqs.push_back(p.irecv(src, 5, std::span(b).subspan(std::size_t(src) * 4, 4)));
      p.waitall(reqs);
    } else if (p.rank() % 2 == 1 || p.rank() == 4) {  // 2 and 6 never send
      p.compute(microseconds(10 * (8 - p.rank())));  // arrivals in another order than the receives
      p.send(0, 5, std::span(b).first(4));
    }
  });
  EXPECT_NE(report.find(" us in waitall on 2 receive(s)\n"), std::string::npos) << report;
  // The ranks it waits for, from its list of unmatched receives: 6 then 2 (posted 7, 6, ..., 1).
  EXPECT_NE(report.find("  rank 0 waits in recv(source=2, tag=5) in waitall on 2 receive(s) for rank(s) 6, 2, finished\n"),
            std::string::npos)
      << report;
}

// VPs that run no rank (RunOptions::ranks, an MPI run with -np below the machine's VPs) are not
// counted as finished ranks, and RunOptions::blocked_in names each rank's call.
TEST(Deadlock, IdleVpsAreNotFinishedRanks) {
  RunOptions o;
  o.ranks = 2;
  o.blocked_in = [](int rank) { return rank == 0 ? std::string("MPI_Recv") : std::string(); };
  const std::string report = run_error(ts_test::prime_machine("mesh:2x2"), [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() < 2) p.recv(1 - p.rank(), 0, b);
  }, o);
  EXPECT_NE(report.find("\n0 of 2 ranks finished (2 more VP(s) of the machine run no rank).\n"), std::string::npos)
      << report;
  EXPECT_EQ(report.find("VPs finished"), std::string::npos) << report;
  EXPECT_NE(report.find("  rank 0 blocked since t=0 us in MPI_Recv: wait for recv(source=1, tag=0)\n"),
            std::string::npos) << report;
  EXPECT_NE(report.find("  rank 1 blocked since t=0 us in wait for recv(source=0, tag=0)\n"), std::string::npos)
      << report;
  EXPECT_NE(report.find("  rank 0 waits in MPI_Recv: recv(source=1, tag=0) for rank 1\n"), std::string::npos)
      << report;
}

// torus:4 with deadlock=none: every node sends a 4-packet message 2 hops in the + direction at
// the same time. Each worm takes its first link and waits for the next node's first link, which
// that node's worm holds: a cycle of 4 worms.
Program two_hops_forward(std::size_t size) {
  return [size](Proc& p) {
    const int n = p.size();
    const auto out = ts_test::bytes(size, p.rank());
    std::vector<std::byte> in(size);
    Request s = p.isend((p.rank() + 2) % n, 0, out);
    p.recv((p.rank() + n - 2) % n, 0, in);
    EXPECT_EQ(in, ts_test::bytes(size, (p.rank() + n - 2) % n));
    p.wait(s);
  };
}

TEST(Deadlock, NetworkDeadlockOnTorusWithoutDatelineReportsTheCycle) {
  for (const std::string spec : {"torus:4,deadlock=none", "torus:1x4,deadlock=none", "torus:4x1,deadlock=none"}) {
    SCOPED_TRACE(spec);
    const Machine m = parse_machine(spec);
    const std::string report = run_error(m, two_hops_forward(4 * static_cast<std::size_t>(m.net.packet_payload)));
    EXPECT_NE(report.find("network deadlock"), std::string::npos) << report;
    // The cycle: 4 lines "message #i (a -> b) holds link X and waits for link Y", each waited-for
    // link being the link the next line holds.
    const std::regex line(R"(message #\d+ \((\d+) -> (\d+)\) holds link (\S+) and waits for link (\S+))");
    std::vector<std::pair<std::string, std::string>> holds_waits;
    for (auto it = std::sregex_iterator(report.begin(), report.end(), line); it != std::sregex_iterator(); ++it) {
      const int src = std::stoi((*it)[1]), dst = std::stoi((*it)[2]);
      EXPECT_EQ(dst, (src + 2) % 4);
      holds_waits.emplace_back((*it)[3], (*it)[4]);
    }
    ASSERT_EQ(holds_waits.size(), 4u) << report;
    for (const auto& [held, waited] : holds_waits) {
      bool someone_holds = false;
      for (const auto& [h2, w2] : holds_waits) someone_holds |= h2 == waited;
      EXPECT_TRUE(someone_holds) << waited << " is not held by a worm of the cycle\n" << report;
    }
  }
}

TEST(Deadlock, SameTrafficOnTorusWithDatelineCompletes) {
  for (const std::string spec : {"torus:4", "torus:1x4", "torus:4,deadlock=dateline"}) {
    SCOPED_TRACE(spec);
    const Machine m = parse_machine(spec);
    const std::size_t size = 4 * static_cast<std::size_t>(m.net.packet_payload);
    const RunResult r = run(m, two_hops_forward(size));
    EXPECT_EQ(r.stats.messages, 4u);
    EXPECT_EQ(r.stats.packets, 16u);
    // Every message needs at least its contention-free time.
    const ts_test::Model x{m};
    EXPECT_GE(r.makespan, x.recv_done(0, x.arrival_cf(x.handed(0, size), 2, size), size));
  }
}

}  // namespace
