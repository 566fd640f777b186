// Race detection (RunOptions::races; docs/debugging.md): every receive or probe with any_source
// or any_tag, the messages that could also have matched it, and the exact virtual-time margin by
// which each lost, computed here from the model's formulas (tests/support/model.hpp).
#include <gtest/gtest.h>

#include <cstring>

#include "support/model.hpp"
#include "touchstone/explore.hpp"

using namespace touchstone;

namespace {

constexpr std::size_t kSize = 8;

// mesh:1x3, rank 0 receives twice from any source: rank 1 (1 hop) sends at once, rank 2 (2 hops)
// after computing D, long enough that the two worms never meet. Rank 1's message wins by
//   arrival_2 - arrival_1 = (D + h + 3 t_hop + W b) - (h + 2 t_hop + W b) = D + t_hop.
constexpr Time kD = 100'000;

Program two_senders(std::vector<Status>* got) {
  return [got](Proc& p) {
    std::vector<std::byte> b(kSize);
    if (p.rank() == 0) {
      p.annotate("first");
      got->push_back(p.recv(any_source, 0, b));
      p.annotate("second");
      got->push_back(p.recv(any_source, 0, b));
    } else {
      if (p.rank() == 2) p.compute(kD);
      p.send(0, 0, b);
    }
  };
}

TEST(Races, WildcardReceiveReportsTheLosingMessageWithItsExactMargin) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const ts_test::Model x{m};
  const Time a1 = x.arrival_cf(x.handed(0, kSize), 1, kSize);
  const Time a2 = x.arrival_cf(x.handed(kD, kSize), 2, kSize);
  ASSERT_EQ(a2 - a1, kD + m.net.hop_time);
  ASSERT_LT(a1 + m.net.hop_time, x.handed(kD, kSize));  // rank 1's worm is gone before rank 2's starts
  for (Execution e : {Execution::fibers, Execution::threads}) {
    std::vector<Status> got;
    RunOptions o;
    o.execution = e;
    o.races = RaceCheck::report;
    const RunResult r = run(m, two_senders(&got), o);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].source, 1);
    EXPECT_EQ(got[0].arrival, a1);
    ASSERT_EQ(r.races.size(), 1u) << describe_races(r.races);
    const Race& race = r.races[0];
    EXPECT_EQ(race.rank, 0);
    EXPECT_EQ(race.call, 1u);
    EXPECT_FALSE(race.probe);
    EXPECT_EQ(race.posted, 0);
    EXPECT_EQ(race.label.substr(race.label.size() - 5), "first");
    EXPECT_EQ(race.source, 1);
    EXPECT_EQ(race.arrival, a1);
    ASSERT_EQ(race.alternatives.size(), 1u);
    EXPECT_EQ(race.alternatives[0].source, 2);
    EXPECT_EQ(race.alternatives[0].arrival, a2);
    EXPECT_EQ(race.alternatives[0].margin, kD + m.net.hop_time);
    const std::string text = describe_races(r.races);
    EXPECT_NE(text.find("which lost by 0.100023 us"), std::string::npos) << text;
    EXPECT_NE(text.find("1 race(s)"), std::string::npos) << text;
  }
}

TEST(Races, ErrorModeFailsTheRunWithTheReport) {
  RunOptions o;
  o.races = RaceCheck::error;
  std::vector<Status> got;
  try {
    run(ts_test::prime_machine("mesh:1x3"), two_senders(&got), o);
    ADD_FAILURE() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("race: rank 0 receive #1"), std::string::npos) << e.what();
  }
}

// The same traffic without detection: no race list, the same virtual times and trace hash.
TEST(Races, DetectionDoesNotChangeTheRun) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  std::vector<Status> a, b;
  const RunResult off = run(m, two_senders(&a));
  RunOptions o;
  o.races = RaceCheck::report;
  const RunResult on = run(m, two_senders(&b), o);
  EXPECT_TRUE(off.races.empty());
  EXPECT_EQ(off.trace_hash, on.trace_hash);
  EXPECT_EQ(off.finish_time, on.finish_time);
}

// Rank 2 sends only after hearing (through rank 0 -> rank 2) that rank 0's first wildcard receive
// was done: its message is causally after that receive and no alternative of it, however it is
// timed. No race is reported.
TEST(Races, MessageCausallyAfterTheReceiveIsNoAlternative) {
  RunOptions o;
  o.races = RaceCheck::report;
  const RunResult r = run(ts_test::prime_machine("mesh:1x3"), [](Proc& p) {
    std::vector<std::byte> b(kSize);
    if (p.rank() == 0) {
      p.recv(any_source, 0, b);
      p.send(2, 1, b);
      p.recv(any_source, 0, b);
    } else if (p.rank() == 1) {
      p.send(0, 0, b);
    } else {
      p.recv(0, 1, b);
      p.send(0, 0, b);
    }
  }, o);
  EXPECT_TRUE(r.races.empty()) << describe_races(r.races);
}

// A pair's messages do not overtake: rank 1's second message is no alternative of a wildcard
// receive that took its first, and a specific-source receive with any_tag never races.
TEST(Races, SameSourceMessagesAndAnyTagFromOneSourceAreNoRace) {
  RunOptions o;
  o.races = RaceCheck::report;
  const RunResult r = run(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    std::vector<std::byte> b(kSize);
    if (p.rank() == 0) {
      p.recv(any_source, any_tag, b);
      p.recv(1, any_tag, b);
    } else {
      p.send(0, 3, b);
      p.send(0, 4, b);
    }
  }, o);
  EXPECT_TRUE(r.races.empty()) << describe_races(r.races);
}

// A wildcard probe races like a receive: it found rank 1's message; rank 2's could have been
// found instead. The later specific receives take each message and add no race of their own.
TEST(Races, WildcardProbeRaces) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const ts_test::Model x{m};
  RunOptions o;
  o.races = RaceCheck::report;
  const RunResult r = run(m, [](Proc& p) {
    std::vector<std::byte> b(kSize);
    if (p.rank() == 0) {
      const Status s = p.probe(any_source, 0);
      p.recv(s.source, 0, b);
      p.recv(3 - s.source, 0, b);
    } else {
      if (p.rank() == 2) p.compute(kD);
      p.send(0, 0, b);
    }
  }, o);
  ASSERT_EQ(r.races.size(), 1u) << describe_races(r.races);
  EXPECT_TRUE(r.races[0].probe);
  EXPECT_EQ(r.races[0].source, 1);
  ASSERT_EQ(r.races[0].alternatives.size(), 1u);
  EXPECT_EQ(r.races[0].alternatives[0].margin, kD + m.net.hop_time);
  EXPECT_EQ(r.races[0].alternatives[0].arrival, x.arrival_cf(x.handed(kD, kSize), 2, kSize));
}

// A hardware barrier orders everything before it before everything after it: a message sent
// after the barrier is no alternative of a wildcard receive completed before it.
TEST(Races, BarrierIsHappensBefore) {
  for (BarrierKind kind : {BarrierKind::hardware, BarrierKind::software}) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.net.barrier = kind;
  RunOptions o;
  o.races = RaceCheck::report;
  const RunResult r = run(m, [](Proc& p) {
    std::vector<std::byte> b(kSize);
    if (p.rank() == 0) {
      p.recv(any_source, 0, b);
      p.barrier();
      p.recv(any_source, 0, b);
    } else {
      if (p.rank() == 1) p.send(0, 0, b);
      p.barrier();
      if (p.rank() == 2) p.send(0, 0, b);
    }
  }, o);
  EXPECT_TRUE(r.races.empty()) << describe_races(r.races);
  }
}


// Rank 0 receives `wildcards` messages with any_source from ranks 1 and 2 (each sends `each`
// 4-byte values: its rank), then one from `then_from` (-1: none). `check` sees the values in
// the order received and may throw to fail the run.
Program collect(int each, int wildcards, int then_from, std::function<void(const std::vector<int>&)> check = {}) {
  return [=](Proc& p) {
    std::vector<std::byte> b(sizeof(int));
    int v = p.rank();
    if (p.rank() == 0) {
      std::vector<int> got;
      auto take = [&](int src) {
        p.recv(src, 0, b);
        std::memcpy(&v, b.data(), sizeof v);
        got.push_back(v);
      };
      for (int i = 0; i < wildcards; ++i) take(any_source);
      if (then_from >= 0) take(then_from);
      if (check) check(got);
    } else {
      std::memcpy(b.data(), &v, sizeof v);
      for (int i = 0; i < each; ++i) p.send(0, 0, b);
    }
  };
}

// A message never received (the run deadlocks on it) is an alternative of the race that lost it,
// and RunOptions::on_races hands over the races of the failed run.
TEST(Races, UnreceivedMessageIsAnAlternative) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  RunOptions o;
  o.races = RaceCheck::report;
  std::vector<Race> seen;
  o.on_races = [&](const std::vector<Race>& r) { seen = r; };
  try {
    run(m, collect(1, 1, 1), o);  // rank 1 is nearer: the wildcard takes its only message
    ADD_FAILURE() << "the run completed";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("Races up to the failure:"), std::string::npos) << e.what();
  }
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].source, 1);
  ASSERT_EQ(seen[0].alternatives.size(), 1u);
  EXPECT_EQ(seen[0].alternatives[0].source, 2);
}

TEST(Explore, SumOverAnySourceIsHarmless) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Exploration e = explore(m, collect(1, 2, -1, [](const std::vector<int>& v) {
    if (v[0] + v[1] != 3) throw std::runtime_error("wrong sum");
  }), RunOptions{}, 10);
  const std::string report = describe_exploration(e, 10);
  EXPECT_TRUE(e.different.empty()) << report;
  ASSERT_EQ(e.races.size(), 1u) << report;
  EXPECT_EQ(e.races[0].effect, RaceVerdict::Effect::harmless) << report;
  EXPECT_EQ(e.harmful(), 0);
  // The other order receives other bytes: information only.
  ASSERT_EQ(e.other_data.size(), 1u) << report;
  EXPECT_NE(report.find("  rank 0 receive #1: harmless: 1 run(s) forcing another match, each ending as the run it "
                        "changed\n"),
            std::string::npos) << report;
}

TEST(Explore, OrderDependentResultIsHarmful) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Exploration e = explore(m, collect(1, 2, -1, [](const std::vector<int>& v) {
    if (v[0] != 1) throw std::runtime_error("rank 2 came first");
  }), RunOptions{}, 10);
  const std::string report = describe_exploration(e, 10);
  ASSERT_EQ(e.harmful(), 1) << report;
  EXPECT_EQ(format_schedule(e.races[0].example), "0:1=2");
  EXPECT_NE(report.find("1 harmful race(s), 0 harmless, 0 not classified:\n  rank 0 receive #1: harmful: --schedule "
                        "0:1=2 ends otherwise: rank 0 failed at t="),
            std::string::npos) << report;
}

// The original run deadlocks (the wildcard took rank 1's message, the next receive wants rank 1
// again): exploring goes on from it and finds the match that completes.
TEST(Explore, GoesOnFromAFailedOriginal) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Exploration e = explore(m, collect(1, 1, 1), RunOptions{}, 10);
  const std::string report = describe_exploration(e, 10);
  EXPECT_TRUE(e.original.failed);
  EXPECT_TRUE(e.original.outcome.starts_with("application deadlock")) << report;
  ASSERT_EQ(e.different.size(), 1u) << report;
  EXPECT_EQ(format_schedule(e.different[0].schedule), "0:1=2");
  EXPECT_FALSE(e.different[0].failed);
  EXPECT_EQ(e.harmful(), 1) << report;
}

// Two messages from each of two ranks, four wildcard receives: a child keeps only the choices
// decided before the race it changes, so no explored schedule is infeasible and every order
// gives the same sum.
TEST(Explore, DropsTheChoicesAnEarlierChangeMadeImpossible) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Exploration e = explore(m, collect(2, 4, -1, [](const std::vector<int>& v) {
    if (v[0] + v[1] + v[2] + v[3] != 6) throw std::runtime_error("wrong sum");
  }), RunOptions{}, 50);
  const std::string report = describe_exploration(e, 50);
  EXPECT_TRUE(e.exhausted) << report;
  EXPECT_EQ(e.infeasible, 0) << report;
  EXPECT_TRUE(e.different.empty()) << report;
  EXPECT_EQ(e.harmful(), 0) << report;
  for (const RaceVerdict& v : e.races) EXPECT_EQ(v.effect, RaceVerdict::Effect::harmless) << report;
}

// A schedule that keeps such a choice waits for a message that never comes: it is reported as an
// infeasible schedule, not as a deadlock of the program.
TEST(Explore, ImpossibleChoiceIsAnInfeasibleSchedule) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  RunOptions o;
  o.schedule = parse_schedule("0:1=2,0:2=2,0:3=2");
  try {
    run(m, collect(2, 4, -1), o);
    ADD_FAILURE() << "the run completed";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with("infeasible schedule at t=")) << what;
    EXPECT_NE(what.find("--schedule 0:3=2 forces rank 0's receive #3 to take a message from rank 2, and none comes"),
              std::string::npos) << what;
  }
}

// Outcomes compare by what the program did, not by when or by which message numbers.
TEST(Explore, SameOutcomeIgnoresTimesAndMessageNumbers) {
  const auto failed = [](const char* why) {
    RunOutcome o;
    o.failed = true;
    o.outcome = why;
    return o;
  };
  RunOutcome a = failed("rank 0 failed at t=1.5 us: message #3 lost");
  RunOutcome b = failed("rank 0 failed at t=22 us: message #17 lost");
  EXPECT_TRUE(same_outcome(a, b));
  b.outcome = "rank 0 failed at t=22 us: message #17 late";
  EXPECT_FALSE(same_outcome(a, b));
  RunOutcome c, d;
  c.outcome = d.outcome = "completed";
  d.received = {1, 2};  // other bytes: the same outcome
  EXPECT_TRUE(same_outcome(c, d));
  d.exit_status = 1;
  EXPECT_FALSE(same_outcome(c, d));
  d.exit_status = 0;
  d.output = 7;
  EXPECT_FALSE(same_outcome(c, d));
}

}  // namespace
