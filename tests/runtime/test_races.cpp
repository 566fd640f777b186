// Race detection (RunOptions::races; docs/debugging.md): every receive or probe with any_source
// or any_tag, the messages that could also have matched it, and the exact virtual-time margin by
// which each lost, computed here from the model's formulas (tests/support/model.hpp).
#include <gtest/gtest.h>

#include "support/model.hpp"

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

}  // namespace
