// The EventQueue (runtime/src/event_queue.hpp) on its own: whatever its bucket width, it must give
// events exactly in (time, order key, insertion) order, as the engine's determinism rests on it.
// A sorted multiset is the reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>

#include "../../runtime/src/event_queue.hpp"

namespace touchstone::detail {
namespace {

using Key = std::tuple<Time, std::uint64_t, std::uint64_t>;  // time, order, insertion number

// Pushes and pops like an event loop (never before the time last taken): events at the current
// time, a few buckets ahead, far beyond the ring's window, with ties of time and of order key.
void check_against_reference(Time width, std::uint32_t seed) {
  EventQueue q;
  q.set_resolution(width);
  std::set<Key> ref;
  std::mt19937_64 rng(seed);
  Time now = 0;
  std::uint64_t pushed = 0;
  auto push = [&](Time t, std::uint64_t order) {
    q.push(t, order, Ev::header, nullptr, pushed);
    ref.emplace(t, order, pushed++);
  };
  for (int i = 0; i < 50; ++i) push(static_cast<Time>(rng() % 1000), rng() % 4);
  for (int step = 0; step < 20000; ++step) {
    ASSERT_EQ(q.size(), ref.size());
    if (!ref.empty() && rng() % 3 != 0) {
      const Event e = q.pop();
      const Key want = *ref.begin();
      ref.erase(ref.begin());
      ASSERT_EQ(Key(e.t, e.order, e.a), want) << "step " << step;
      ASSERT_EQ(e.kind(), Ev::header);
      now = e.t;
      continue;
    }
    Time dt = 0;
    switch (rng() % 5) {
      case 0: dt = 0; break;                                          // the current instant
      case 1: dt = static_cast<Time>(rng() % 4) * 1000; break;        // on a grid: equal times
      case 2: dt = static_cast<Time>(rng() % 100000); break;          // within the window
      case 3: dt = static_cast<Time>(rng() % 100000000); break;       // mostly beyond it
      default: dt = static_cast<Time>(rng() % (width + 1)); break;    // the current bucket
    }
    push(now + dt, rng() % 8);
  }
  while (!ref.empty()) {
    const Event e = q.pop();
    ASSERT_EQ(Key(e.t, e.order, e.a), *ref.begin());
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, PopsInTimeOrderKeyInsertionOrderAtAnyResolution) {
  for (Time width : {Time{1}, Time{7}, Time{1024}, Time{25000}, Time{1} << 30})
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(testing::Message() << "width " << width << " seed " << seed);
      check_against_reference(width, seed);
    }
}

// The current bucket as the engine fills it: every VP's wake-up at t = 0 in rank order (each later
// than the others), then, after some are taken, an event earlier than all that are left and one in
// the middle; then the next bucket, filled in key order.
TEST(EventQueue, TheCurrentBucketTakesEventsAtEitherEndAndBetween) {
  EventQueue q;
  q.set_resolution(1024);
  for (std::uint64_t r = 0; r < 1000; ++r) q.push(0, vp_order(static_cast<int>(r)), Ev::resume, nullptr, r);
  for (std::uint64_t r = 0; r < 10; ++r) EXPECT_EQ(q.pop().a, r);
  q.push(0, 7, Ev::arrive, nullptr, 10000);                 // a message event: before every VP event
  q.push(0, vp_order(500), Ev::resume, nullptr, 10001);     // behind rank 500's first one
  for (std::uint64_t r = 0; r < 50; ++r) q.push(5000, r, Ev::header, nullptr, 20000 + r);
  EXPECT_EQ(q.pop().a, 10000u);
  for (std::uint64_t r = 10; r < 1000; ++r) {
    EXPECT_EQ(q.pop().a, r);
    if (r == 500) {
      EXPECT_EQ(q.pop().a, 10001u);
    }
  }
  for (std::uint64_t r = 0; r < 50; ++r) EXPECT_EQ(q.pop().a, 20000 + r);
  EXPECT_TRUE(q.empty());
}

// An event pushed before the time last taken (a broken invariant) comes out first, so that the
// engine sees it and reports it instead of running on silently.
TEST(EventQueue, AnEventInThePastComesOutNext) {
  EventQueue q;
  q.set_resolution(16);
  q.push(100, 1, Ev::resume, nullptr);
  q.push(200, 1, Ev::resume, nullptr);
  EXPECT_EQ(q.pop().t, 100);
  q.push(50, 0, Ev::arrive, nullptr);
  const Event late = q.pop();
  EXPECT_EQ(late.t, 50);
  EXPECT_EQ(late.kind(), Ev::arrive);
  EXPECT_EQ(q.pop().t, 200);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace touchstone::detail
