// Proc::run_local: state that the VPs of one run share (the harnesses' payload buffers under
// phantom payloads, algorithms/harness.hpp). Every VP of a run finds what the first one put in a
// slot, whichever way VPs get the host CPU; another run, even one running at the same time on
// another host thread, starts with empty slots; the run destroys what its slots hold when it ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

constexpr char kKeyA = 0, kKeyB = 0;

// Every VP counts itself into slot A's counter; slot B holds its own object. Returns the counter
// (only weakly, so that the test sees when the run destroys it) and what each VP saw.
struct Seen {
  std::weak_ptr<int> counter;
  std::vector<int> before;  // per VP: the counter when it came, so 0, 1, ... in some order
  bool b_apart = true;      // slot B never held slot A's object
  bool phantom = false;
};

Seen count_vps(const Machine& m, RunOptions o) {
  Seen s;
  s.before.assign(static_cast<std::size_t>(m.nodes()), -1);
  run(m, [&](Proc& p) {
    std::shared_ptr<void>& a = p.run_local(&kKeyA);
    if (!a) a = std::make_shared<int>(0);
    auto counter = std::static_pointer_cast<int>(a);
    if (p.rank() == 0) s.counter = counter, s.phantom = p.phantom_payloads();
    p.barrier();  // every VP has come, and it is the same run's state after blocking
    std::shared_ptr<void>& b = p.run_local(&kKeyB);
    if (!b) b = std::make_shared<int>(-1);
    if (b == a) s.b_apart = false;
    s.before[static_cast<std::size_t>(p.rank())] = (*counter)++;
  }, o);
  return s;
}

TEST(RunLocal, EveryVpOfARunSharesASlotAndTheRunDestroysIt) {
  const Machine m = parse_machine("mesh:3x3");
  for (Execution e : {Execution::fibers, Execution::threads}) {
    RunOptions o;
    o.execution = e;
    o.perturb = e == Execution::threads ? 7 : 0;
    o.phantom_payloads = e == Execution::threads;
    const Seen s = count_vps(m, o);
    std::vector<int> sorted = s.before;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < m.nodes(); ++i) EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);
    EXPECT_TRUE(s.b_apart);
    EXPECT_TRUE(s.counter.expired());  // destroyed when run() returned
    EXPECT_EQ(s.phantom, o.phantom_payloads);
  }
}

// Two runs on two host threads at once (as `touchstone sweep --jobs 2` runs them): each run's
// VPs count only themselves, so neither run sees the other's slot.
TEST(RunLocal, ConcurrentRunsNeverShareASlot) {
  const Machine small = parse_machine("mesh:2x2"), large = parse_machine("mesh:4x4");
  Seen a, b;
  for (int round = 0; round < 5; ++round) {
    std::thread t([&] { a = count_vps(small, {}); });
    b = count_vps(large, {});
    t.join();
    EXPECT_EQ(*std::max_element(a.before.begin(), a.before.end()), small.nodes() - 1);
    EXPECT_EQ(*std::max_element(b.before.begin(), b.before.end()), large.nodes() - 1);
  }
}

}  // namespace
