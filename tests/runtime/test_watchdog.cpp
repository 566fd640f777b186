// The host-time watchdog (RunOptions::wall_limit_s, stop_on_signals; runtime/src/watchdog.hpp) and
// the order log's view of the rendezvous protocol (docs/model.md 2.16).
#include <gtest/gtest.h>

#include <signal.h>

#include <array>
#include <atomic>
#include <fstream>
#include <sstream>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

std::atomic<bool> g_never{false};

// A VP that spins in its own code: it never calls the runtime again.
[[gnu::noinline]] void spin_forever() {
  while (!g_never.load(std::memory_order_relaxed)) {
  }
}

RunResult run_with_a_spinning_vp(double wall_limit_s) {
  RunOptions o;
  o.wall_limit_s = wall_limit_s;
  return run(parse_machine("mesh:2x2"), [](Proc& p) {
    p.barrier();
    if (p.rank() == 2) spin_forever();
    p.barrier();
  }, o);
}

}  // namespace

TEST(WatchdogDeathTest, AVpSpinningWithoutCallingTheRuntimeIsStoppedByTheWallLimitAndNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_with_a_spinning_vp(0.3), testing::ExitedWithCode(2),
              "the run is ended: no progress for [0-9.]+ host seconds \\(--wall-limit 0.3\\)(.|\n)*"
              "Rank 2 was running its own code and made no call to Touchstone since");
}

TEST(WatchdogDeathTest, SigintWhileAVpSpinsEndsTheProcessWith130) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        RunOptions o;
        o.stop_on_signals = true;
        run(parse_machine("mesh:2x2"), [](Proc& p) {
          p.barrier();
          if (p.rank() == 1) {
            ::raise(SIGINT);
            spin_forever();
          }
          p.barrier();
        }, o);
      },
      testing::ExitedWithCode(130), "the run is ended: interrupted by SIGINT(.|\n)*Rank 1 was running");
}

TEST(Watchdog, SigintBetweenRuntimeCallsFailsTheRunNamingTheBlockedVps) {
  RunOptions o;
  o.stop_on_signals = true;
  try {
    run(parse_machine("mesh:2x2"), [](Proc& p) {
      p.barrier();
      if (p.rank() == 3) ::raise(SIGINT);
      p.barrier();
    }, o);
    FAIL() << "the run went on after SIGINT";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("interrupted by SIGINT: rank 3 was calling the runtime at t="), std::string::npos) << what;
    EXPECT_NE(what.find("The blocked VPs:\n  rank 0 blocked since"), std::string::npos) << what;
  }
  // The handler was the run's only: the default is back.
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

TEST(Watchdog, AWatchedRunIsTheSameRun) {
  const Machine m = parse_machine("torus:3x3");
  auto ring = [](Proc& p) {
    std::array<std::byte, 64> out{}, in{};
    p.sendrecv((p.rank() + 1) % p.size(), 0, out, (p.rank() + p.size() - 1) % p.size(), 0, in);
  };
  RunOptions watched;
  watched.wall_limit_s = 100;
  watched.stop_on_signals = true;
  EXPECT_EQ(run(m, ring).trace_hash, run(m, ring, watched).trace_hash);
}

// The order log shows the program's sends: a rendezvous send is one line with the data's size,
// never a 0-byte request to send, and the clear to send appears nowhere.
TEST(OrderLog, ARendezvousSendIsTheProgramsSendWithItsSize) {
  RunOptions o;
  o.order_log_file = testing::TempDir() + "/rendezvous.order.txt";
  run(parse_machine("mesh:1x2,eager_limit=64"), [](Proc& p) {
    std::array<std::byte, 4096> buf{};
    if (p.rank() == 0) p.send(1, 7, buf);
    else p.recv(0, 7, buf);
  }, o);
  std::ifstream in(o.order_log_file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string log = text.str();
  EXPECT_NE(log.find("VP 0:\n  t=0.000000 us  send #0 to 1 tag 7 size 4096 (rendezvous)\nVP 1:\n  t="),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(" recv #0 from 0 tag 7 size 4096 "), std::string::npos) << log;
  EXPECT_EQ(log.find("size 0"), std::string::npos) << log;
}
