// The running mean of a program's host time between calls (runtime/src/program_time.hpp), which
// decides whether the programs of an instant run at once: per return to the program, each sample
// weighed by the returns it stands for. Fed by hand here; the engine feeds it host times.
#include <gtest/gtest.h>

#include "../../runtime/src/program_time.hpp"

using touchstone::detail::ProgramTimeMean;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

// A sequential sample stands for kSampleEvery returns: an eighth of the way to it, from 0.
TEST(ProgramTimeMean, ASequentialSampleMovesTheMeanAnEighthOfTheWay) {
  ProgramTimeMean m;
  m.add(microseconds(800), ProgramTimeMean::kSampleEvery);
  EXPECT_EQ(m.value(), microseconds(100));
  m.add(microseconds(0), ProgramTimeMean::kSampleEvery);
  EXPECT_EQ(m.value(), nanoseconds(87'500));
}

// An MPI program whose long computation follows its collective: one timed sequential turn of 1 ms
// (standing for 64 returns), then the collective's short instants run at once, 32 instants of two
// programs of 1 us each: 64 returns, which move the mean about as far as one sequential sample of
// 64 returns would (an eighth of the way), and it stays far above a 10-us threshold. Weighed as one
// sample each, the 32 instants would have taken it to 1 + 124 * (7/8)^32 us, under 2 us.
TEST(ProgramTimeMean, ShortInstantsWeighByTheirPrograms) {
  ProgramTimeMean m;
  m.add(microseconds(1000), ProgramTimeMean::kSampleEvery);
  EXPECT_EQ(m.value(), microseconds(125));
  for (int i = 0; i < 32; ++i) m.add(microseconds(1), 2);
  EXPECT_GT(m.value(), microseconds(10));
  EXPECT_LT(m.value(), microseconds(125));
  // (1 - 2/512)^32 of the way back to 1 us: 125 - 124 * (1 - 0.882...) = 110.4 us, to the ns.
  nanoseconds want = microseconds(125);
  for (int i = 0; i < 32; ++i) want += (microseconds(1) - want) * 2 / 512;
  EXPECT_EQ(m.value(), want);
}

// No sample weighs more than the returns the mean is over, nor less than one return.
TEST(ProgramTimeMean, WeightsAreBounded) {
  ProgramTimeMean a, b;
  a.add(microseconds(512), 100'000);
  EXPECT_EQ(a.value(), microseconds(512));
  b.add(microseconds(512), 0);
  EXPECT_EQ(b.value(), microseconds(1));
}

// The engine starts the mean at the threshold: a program's first instants open, and the first
// sample under the threshold, of one return or of many, closes them.
TEST(ProgramTimeMean, StartedAtTheThresholdTheFirstShorterSampleFallsUnderIt) {
  const nanoseconds threshold = microseconds(10);
  ProgramTimeMean once(threshold), instant(threshold);
  EXPECT_EQ(once.value(), threshold);
  once.add(microseconds(9), ProgramTimeMean::kSampleEvery);
  EXPECT_LT(once.value(), threshold);
  instant.add(microseconds(9), 2);
  EXPECT_LT(instant.value(), threshold);
  ProgramTimeMean longer(threshold);
  longer.add(microseconds(11), 1);
  EXPECT_GT(longer.value(), threshold);
}
