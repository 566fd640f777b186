// Tasks (Proc::spawn, docs/model.md 1.7): a rank's code running beside its program, on its own
// clock, completed through the ordinary requests, with messages of their own.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr std::size_t kSize = 100;

// Rank 0's task sends kSize bytes to rank 1's task while both programs compute `dt`; each program
// then waits for its task. Returns the two programs' clocks after the wait.
std::array<Time, 2> overlap(const Machine& m, Time dt) {
  std::array<Time, 2> after{};
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(kSize);
    Request r = p.spawn(p.world(), [&](const Group& g) {
      if (p.rank() == 0) p.send(1, 0, buf, g);
      else p.recv(0, 0, buf, g);
    });
    p.compute(dt);
    p.wait(r);
    after[static_cast<std::size_t>(p.rank())] = p.now();
  });
  return after;
}

TEST(Spawn, TaskRunsOnItsOwnClockBesideTheProgram) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Model x{m};
  const Time h = x.handed(0, kSize);
  const Time sent = x.send_return_cf(h, 1, kSize);
  const Time received = x.recv_done(0, x.arrival_cf(h, 1, kSize), kSize);
  // Computing longer than the transfer hides it; computing less waits for it.
  const Time long_dt = received + 1000;
  EXPECT_EQ(overlap(m, long_dt), (std::array<Time, 2>{long_dt, long_dt}));
  EXPECT_EQ(overlap(m, 10), (std::array<Time, 2>{sent, received}));
}

TEST(Spawn, ConcurrentTasksAndTheProgramNeverMatchEachOther) {
  const Machine m = ts_test::prime_machine("mesh:3x3");
  std::vector<int> bad(9, 0);
  run(m, [&](Proc& p) {
    const int n = p.size(), next = (p.rank() + 1) % n, prev = (p.rank() + n - 1) % n;
    std::array<std::array<int, 2>, 3> got{};  // per sender kind: (its id, the sender's rank)
    auto body = [&](int id) {
      return [&, id](const Group& g) {
        const std::array<int, 2> out{id, p.rank()};
        Request s = p.isend(next, 0, std::as_bytes(std::span(out)), g);
        // any_source and the same tag as the other task and the program: only contexts separate them
        p.recv(any_source, any_tag, std::as_writable_bytes(std::span(got[static_cast<std::size_t>(id)])), g);
        p.wait(s);
      };
    };
    std::vector<Request> rs;
    rs.push_back(p.spawn(p.world(), body(0)));
    rs.push_back(p.spawn(p.world(), body(1)));
    const std::array<int, 2> out{2, p.rank()};
    p.send(next, 0, std::as_bytes(std::span(out)));
    p.recv(any_source, 0, std::as_writable_bytes(std::span(got[2])));
    p.waitall(rs);
    for (int id = 0; id < 3; ++id)
      if (got[static_cast<std::size_t>(id)] != std::array<int, 2>{id, prev}) ++bad[static_cast<std::size_t>(p.rank())];
  });
  EXPECT_EQ(bad, std::vector<int>(9, 0));
}

TEST(Spawn, TheWorldInsideATaskIsACopyWithItsOwnContext) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  std::vector<int> got(4, -1), main_got(4, -1);
  run(m, [&](Proc& p) {
    const int next = (p.rank() + 1) % 4, prev = (p.rank() + 3) % 4;
    int in = -1, main_in = -1;
    Request r = p.spawn({}, [&](const Group&) {
      EXPECT_NE(p.world().context(), Group{}.context());
      const int out = 100 + p.rank();
      p.send(next, 5, std::as_bytes(std::span(&out, 1)));  // the default group: the task's world
      p.recv(prev, 5, std::as_writable_bytes(std::span(&in, 1)));
    });
    const int out = 200 + p.rank();
    p.send(next, 5, std::as_bytes(std::span(&out, 1)));
    p.recv(prev, 5, std::as_writable_bytes(std::span(&main_in, 1)));
    p.wait(r);
    got[static_cast<std::size_t>(p.rank())] = in;
    main_got[static_cast<std::size_t>(p.rank())] = main_in;
  });
  EXPECT_EQ(got, (std::vector<int>{103, 100, 101, 102}));
  EXPECT_EQ(main_got, (std::vector<int>{203, 200, 201, 202}));
}

TEST(Spawn, WaitanyTestAndReuseOfTaskContexts) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  std::vector<int> rounds(3, 0);
  run(m, [&](Proc& p) {
    for (int round = 0; round < 40; ++round) {
      // A subgroup of ranks 0 and 2 and the whole machine, in the same order everywhere.
      const Group ends = p.group({0, 2});
      std::vector<Request> rs;
      int token = -1;
      if (ends.contains(p.rank()))
        rs.push_back(p.spawn(ends, [&, round](const Group& g) {
          int out = round;
          if (g.local_rank(p.rank()) == 0) p.send(1, 0, std::as_bytes(std::span(&out, 1)), g);
          else p.recv(0, 0, std::as_writable_bytes(std::span(&token, 1)), g);
        }));
      rs.push_back(p.spawn(p.world(), [&](const Group& g) { p.barrier(g); }));
      if (round % 2) {
        while (!rs.empty()) rs.erase(rs.begin() + static_cast<std::ptrdiff_t>(p.waitany(rs)));
      } else {
        for (auto& r : rs)
          while (!p.test(r)) p.compute(500);
      }
      if (p.rank() != 2 || token == round) ++rounds[static_cast<std::size_t>(p.rank())];
    }
  });
  EXPECT_EQ(rounds, (std::vector<int>{40, 40, 40}));
}

RunResult overlapping_tasks(Execution how, std::uint64_t perturb) {
  RunOptions o;
  o.execution = how;
  o.perturb = perturb;
  return run(ts_test::prime_machine("torus:3x3"), [](Proc& p) {
    std::vector<std::byte> a(300), b(300);
    std::vector<Request> rs;
    for (int k = 0; k < 3; ++k)
      rs.push_back(p.spawn(p.world(), [&, k](const Group& g) {
        const int n = g.size();
        for (int d = 1; d < n; d *= 2)
          p.sendrecv((p.rank() + d) % n, k, a, (p.rank() + n - d) % n, k, b, g);
      }));
    p.compute(1000 * p.rank());
    p.waitall(rs);
  }, o);
}

TEST(Spawn, TraceHashDoesNotDependOnHostScheduling) {
  const RunResult fibers = overlapping_tasks(Execution::fibers, 0);
  EXPECT_EQ(overlapping_tasks(Execution::threads, 0).trace_hash, fibers.trace_hash);
  EXPECT_EQ(overlapping_tasks(Execution::fibers, 3).trace_hash, fibers.trace_hash);
  EXPECT_EQ(overlapping_tasks(Execution::threads, 3).trace_hash, fibers.trace_hash);
  EXPECT_EQ(overlapping_tasks(Execution::fibers, 0).makespan, fibers.makespan);
}

TEST(Spawn, MisuseIsAClearError) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  EXPECT_THROW(run(m, [](Proc& p) {
    const Group g = p.group({0, 1});
    if (p.rank() == 2) p.spawn(g, [](const Group&) {});
  }), RunUsageError);
  try {
    run(m, [](Proc& p) {
      Request r = p.spawn(p.world(), [](const Group&) { throw std::runtime_error("boom"); });
      p.wait(r);
    });
    FAIL() << "a failing task must fail the run";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
  }
  // A task that waits for a message nobody sends is a deadlock, not a hang, and the report names it.
  try {
    run(m, [](Proc& p) {
      std::byte x{};
      Request r = p.spawn(p.world(), [&](const Group& g) { p.recv(0, 0, std::span(&x, 1), g); });
      p.wait(r);
    });
    FAIL() << "a task waiting for nothing must deadlock";
  } catch (const RunError& e) {
    const std::string report = e.what();
    EXPECT_NE(report.find("application deadlock"), std::string::npos) << report;
    EXPECT_NE(report.find("a task of rank 1 blocked since t=0 us in wait for recv(source=0, tag=0)"), std::string::npos)
        << report;
    EXPECT_NE(report.find("rank 1 blocked since t=0 us in wait for task of rank 1"), std::string::npos) << report;
  }
}

}  // namespace

namespace {

// A task named in the program's terms (Proc::spawn's `describe`) is reported so, with the ranks it
// waits for, and a rank's wait for its task follows the task's own wait: here each rank's task
// receives from the next rank, whose task never sends, so the ranks wait for each other in a ring.
TEST(Spawn, DeadlockReportsNameTasksAsTheProgramDoesAndFollowThem) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  try {
    run(m, [](Proc& p) {
      std::byte x{};
      const int next = (p.rank() + 1) % p.size();
      Request r = p.spawn(
          p.world(), [&](const Group& g) { p.recv(next, 0, std::span(&x, 1), g); },
          [rank = p.rank()] { return fmt::format("exchange of rank {}", rank); });
      p.wait(r);
    });
    FAIL() << "tasks waiting for each other must deadlock";
  } catch (const RunError& e) {
    const std::string report = e.what();
    EXPECT_NE(report.find("\n  rank 1's exchange of rank 1 is blocked since t=0 us, waiting for rank 2\n"),
              std::string::npos)
        << report;
    EXPECT_EQ(report.find("a task of rank"), std::string::npos) << report;
    EXPECT_NE(report.find("Wait-for cycle (3 rank(s)):\n"
                          "  rank 0 waits in task of rank 0 (spawned with Proc::spawn) for rank 1\n"
                          "  rank 1 waits in task of rank 1 (spawned with Proc::spawn) for rank 2\n"
                          "  rank 2 waits in task of rank 2 (spawned with Proc::spawn) for rank 0\n"),
              std::string::npos)
        << report;
  }
}

}  // namespace
