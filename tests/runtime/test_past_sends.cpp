// Programs that go on past their sends (docs/parallel.md): a program that waits for a send of its
// own runs on, on another host thread, up to its next call, which it makes when the event loop
// reaches the send's completion; the run is the one of a single host core. Every test runs fibers
// on 1, 2 and 4 host cores (with parallel_programs_from_us = 0, so that every such wait goes on),
// perturbed too, and on threads, and checks the same trace hash, times, statistics and results.
// Exact times come from the formulas of docs/model.md 2.4 and 2.5 on the prime machine (every cost
// a distinct prime), as in test_send_holds.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "touchstone/error.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

using ts_test::describe;
using ts_test::same_failure_every_way;
const auto& kWays = ts_test::kParallelWays;
constexpr std::size_t kTwoCores = 1, kThreads = 5;  // their places in kWays

// Runs `program` every way (ts_test::same_run_every_way); returns the runs' continued_ahead, in
// kWays' order.
template <class Reset, class Check>
std::vector<std::uint64_t> same_every_way(const Machine& m, const Program& program, Reset reset, Check check) {
  std::vector<std::uint64_t> ahead;
  for (const RunResult& r : ts_test::same_run_every_way(m, program, reset, check)) ahead.push_back(r.continued_ahead);
  return ahead;
}

// Host work that takes long enough for the event loop to get ahead of it.
double churn(int seed) {
  double s = 0;
  for (int i = 0; i < 200000; ++i) s += std::sqrt(static_cast<double>(i + seed));
  return s;
}

constexpr std::size_t kSize = 150;  // 3 packets on the prime machine: 243 wire bytes

}  // namespace

// Rank 0 sends to rank 1, overwrites its buffer and computes at once, reads the clock, then sends
// the new bytes to rank 2. The clock it reads is the first send's completion (its last packet left
// at 1009 + 150*13 + 243*7 = 4660), whatever ran ahead; rank 1, whose receive comes after the
// message, gets the bytes of the send, not the ones written after it returned.
TEST(PastSends, TheProgramGoesOnAndReadsTheSendsCompletionTime) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const ts_test::Model x{m};
  const Time left = x.send_return_cf(x.send_cost(kSize), 1, kSize);
  ASSERT_EQ(left, 4660);
  Time after_send = -1;
  std::vector<std::byte> got1, got2;
  const Program program = [&](Proc& p) {
    if (p.rank() == 0) {
      std::vector<std::byte> data = ts_test::bytes(kSize, 5);
      p.send(1, 0, data);
      const std::vector<std::byte> nine = ts_test::bytes(kSize, 9);
      std::copy(nine.begin(), nine.end(), data.begin());  // the same buffer, new bytes
      if (churn(0) < 0) return;
      after_send = p.now();
      p.send(2, 0, data);
      return;
    }
    std::vector<std::byte> in(kSize);
    if (p.rank() == 1) p.compute(20000);  // the message waits, unmatched, reading rank 0's buffer
    p.recv(0, 0, in);
    (p.rank() == 1 ? got1 : got2) = in;
  };
  const std::vector<std::uint64_t> ahead = same_every_way(
      m, program,
      [&] {
        after_send = -1;
        got1.clear();
        got2.clear();
      },
      [&] {
        EXPECT_EQ(after_send, left);
        EXPECT_EQ(got1, ts_test::bytes(kSize, 5));
        EXPECT_EQ(got2, ts_test::bytes(kSize, 9));
      });
  // Both of rank 0's sends, on more than one host core; never on one, nor on threads.
  EXPECT_EQ(ahead[0], 0u);
  EXPECT_EQ(ahead[kTwoCores], 2u);
  EXPECT_EQ(ahead[kThreads], 0u);
}

// A broadcast down a binomial tree, then host work, then a ring exchange, six times over: the
// inner nodes of the tree go on past their last send while the broadcast still travels, and
// every rank computes the same values on every host.
TEST(PastSends, ABroadcastFollowedByWorkIsTheSameRunOnEveryHost) {
  const Machine m = parse_machine("torus:4x4");
  std::vector<double> values(16);
  const Program program = [&](Proc& p) {
    const int n = p.size(), me = p.rank();
    double x = me;
    for (int it = 0; it < 6; ++it) {
      double root = me == it ? x : 0;
      int mask = 1;
      while (mask < n && !(me & mask)) mask <<= 1;
      if (me != 0) p.recv(me - mask, it, std::as_writable_bytes(std::span(&root, 1)));
      for (mask >>= 1; mask > 0; mask >>= 1)
        if (me + mask < n) p.send(me + mask, it, std::as_bytes(std::span(&root, 1)));
      x += churn(me + it) * 1e-9 + root;
      double left = 0;
      Request rq[2] = {p.irecv((me + n - 1) % n, 100 + it, std::as_writable_bytes(std::span(&left, 1))),
                       p.isend((me + 1) % n, 100 + it, std::as_bytes(std::span(&x, 1)))};
      p.waitall(rq);
      x = 0.5 * (x + left);
    }
    values[static_cast<std::size_t>(me)] = x;
  };
  std::vector<std::vector<double>> all;
  const std::vector<std::uint64_t> ahead =
      same_every_way(m, program, [&] { values.assign(16, 0); }, [&] { all.push_back(values); });
  ASSERT_EQ(all.size(), std::size(kWays));
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_EQ(all[i], all[0]) << describe(kWays[i]);
  // Rank 0 broadcasts (rank 0's x is the root's value, 0 + the churn of rank 0 at every step),
  // so every value differs from a rank's own start.
  for (int r = 1; r < 16; ++r) EXPECT_NE(all[0][static_cast<std::size_t>(r)], r) << r;
  EXPECT_EQ(ahead[0], 0u);
  EXPECT_GT(ahead[kTwoCores], 0u);
  EXPECT_EQ(ahead[kThreads], 0u);
}

// A program that fails in the code it runs past its send is reported at its turn, the send's
// completion: the report is the one of one host core.
TEST(PastSends, AFailurePastASendIsReportedAtTheSendsCompletion) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program program = [](Proc& p) {
    std::vector<std::byte> data = ts_test::bytes(kSize, 5);
    if (p.rank() == 0) {
      p.send(1, 0, data);
      if (churn(1) > 0) throw std::runtime_error("rank 0 gives up after its send");
    }
    if (p.rank() == 1) p.recv(0, 0, data);
  };
  const std::string report = same_failure_every_way(m, program);
  EXPECT_NE(report.find("rank 0 failed at t=0.00466 us: rank 0 gives up after its send"), std::string::npos) << report;
}

// A run that fails elsewhere while a program is past its send: the program is unwound from the
// call it stopped at, and the report is the one of one host core.
TEST(PastSends, ARunThatFailsWhileAProgramIsPastItsSendIsReportedAsOnOneCore) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program program = [](Proc& p) {
    std::vector<std::byte> data = ts_test::bytes(kSize, 5);
    if (p.rank() == 0) {
      p.send(1, 0, data);
      churn(2);
      p.send(1, 1, data);  // waits at its turn, 4660, behind rank 2's failure at 0
    }
    if (p.rank() == 1) {
      p.recv(0, 0, data);
      p.recv(0, 1, data);
    }
    if (p.rank() == 2) throw std::runtime_error("rank 2 fails at once");
  };
  const std::string report = same_failure_every_way(m, program);
  EXPECT_NE(report.find("rank 2 failed at t=0 us: rank 2 fails at once"), std::string::npos) << report;
}

// A Request the program lets go past its send is let go in its turn, and its message still
// carries the bytes the buffer had then.
TEST(PastSends, ARequestLetGoPastASendKeepsItsBytes) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  std::vector<std::byte> got;
  const Program program = [&](Proc& p) {
    if (p.rank() == 0) {
      std::vector<std::byte> data = ts_test::bytes(kSize, 5), more = ts_test::bytes(kSize, 7);
      p.send(1, 0, data);
      { Request r = p.isend(2, 0, more); }  // let go: the message is on its own
      const std::vector<std::byte> eight = ts_test::bytes(kSize, 8);
      std::copy(eight.begin(), eight.end(), more.begin());
      churn(3);
      return;
    }
    std::vector<std::byte> in(kSize);
    p.recv(0, 0, in);
    if (p.rank() == 2) got = in;
  };
  same_every_way(m, program, [&] { got.clear(); }, [&] { EXPECT_EQ(got, ts_test::bytes(kSize, 7)); });
}

// Waits that cannot go on: a synchronous send (it depends on the receiver), and a send on one host
// core. The run counts none.
TEST(PastSends, ASynchronousSendDoesNotGoOn) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program program = [](Proc& p) {
    std::vector<std::byte> data = ts_test::bytes(kSize, 5);
    if (p.rank() == 0) {
      Request r = p.issend(1, 0, data);
      p.wait(r);
    }
    if (p.rank() == 1) p.recv(0, 0, data);
  };
  const std::vector<std::uint64_t> ahead = same_every_way(m, program, [] {}, [] {});
  for (const std::uint64_t a : ahead) EXPECT_EQ(a, 0u);
}
