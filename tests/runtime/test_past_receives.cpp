// Programs that go on past their receives (docs/parallel.md): with RunOptions::
// programs_read_no_arrival, a program that waits for one receive whose message is known before it
// arrives runs on, on another host thread, from the moment the message is sent, up to its next
// call, which it makes when the event loop reaches the receive's completion; the run is the one of
// a single host core. Every test runs fibers on 1, 2 and 4 host cores (with
// parallel_programs_from_us = 0, so that every such wait goes on), perturbed too, and on threads,
// and checks the same trace hash, times, statistics and results.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

const auto& kWays = ts_test::kParallelWays;
constexpr std::size_t kTwoCores = 1, kThreads = 5;  // their places in kWays

// Runs `program` every way, its programs reading no arrival time; returns the runs'
// continued_ahead, in kWays' order.
template <class Reset, class Check>
std::vector<std::uint64_t> same_every_way(const Machine& m, const Program& program, Reset reset, Check check) {
  std::vector<std::uint64_t> ahead;
  for (const RunResult& r : ts_test::same_run_every_way(m, program, reset, check, true))
    ahead.push_back(r.continued_ahead);
  return ahead;
}

// Host work that takes long enough for the event loop to get ahead of it.
double churn(int seed) {
  double s = 0;
  for (int i = 0; i < 200000; ++i) s += std::sqrt(static_cast<double>(i + seed));
  return s;
}

}  // namespace

// A chain: rank 0 works, then sends a value to rank 1; each other rank waits for its
// predecessor's value, works on it and sends the result on. Each receive is waited for before its
// message is sent, so the message is known at its send, and the rank goes on from there: with its
// predecessor's send (which goes on too), 3 + 3 waits on 2 host cores, none on one or on threads.
// The values each rank reads right after its wait are the message's, and so are the source, tag
// and size of its Status.
TEST(PastReceives, AChainGoesOnPastEveryReceiveFromItsMessagesSend) {
  const Machine m = ts_test::prime_machine("mesh:1x4");
  std::vector<double> got(4);
  std::vector<Status> statuses(4);
  const Program program = [&](Proc& p) {
    const int me = p.rank();
    double x = 1;
    if (me > 0) {
      statuses[static_cast<std::size_t>(me)] = p.recv(me - 1, 7 + me, std::as_writable_bytes(std::span(&x, 1)));
      got[static_cast<std::size_t>(me)] = x;
    }
    x += churn(me) * 1e-9;
    if (me < 3) p.send(me + 1, 8 + me, std::as_bytes(std::span(&x, 1)));
  };
  std::vector<std::vector<double>> all;
  const std::vector<std::uint64_t> ahead = same_every_way(
      m, program, [&] { got.assign(4, 0); },
      [&] {
        all.push_back(got);
        for (int r = 1; r < 4; ++r) {
          const Status& s = statuses[static_cast<std::size_t>(r)];
          EXPECT_EQ(s.source, r - 1);
          EXPECT_EQ(s.tag, 7 + r);
          EXPECT_EQ(s.size, sizeof(double));
        }
      });
  ASSERT_EQ(all.size(), std::size(kWays));
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_EQ(all[i], all[0]) << ts_test::describe(kWays[i]);
  // Each rank's value is its predecessor's plus that rank's churn: they grow along the chain.
  EXPECT_GT(all[0][1], 1.0);
  EXPECT_GT(all[0][2], all[0][1]);
  EXPECT_GT(all[0][3], all[0][2]);
  EXPECT_EQ(ahead[0], 0u);
  EXPECT_EQ(ahead[kTwoCores], 6u);
  EXPECT_EQ(ahead[kThreads], 0u);
}

// A receive whose message was sent before the wait (a message of the same pair ahead of it, then
// its own) goes on at the wait itself; a receive from any source is not known before its message
// arrives (another source's message could take it) and does not go on.
TEST(PastReceives, AReceiveGoesOnAtItsWaitButNotFromAnySource) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  std::vector<int> got(3);
  const Program program = [&](Proc& p) {
    int a = p.rank() * 10, b = p.rank() * 10 + 1;
    if (p.rank() == 0) {
      p.send(1, 0, std::as_bytes(std::span(&a, 1)));
      p.send(1, 0, std::as_bytes(std::span(&b, 1)));
      p.send(2, 0, std::as_bytes(std::span(&a, 1)));
    } else if (p.rank() == 1) {
      p.compute(100000);  // both messages are on their way when it waits
      p.recv(0, 0, std::as_writable_bytes(std::span(&a, 1)));
      p.recv(0, 0, std::as_writable_bytes(std::span(&b, 1)));
      got[1] = a * 100 + b;
    } else {
      p.recv(any_source, 0, std::as_writable_bytes(std::span(&a, 1)));
      got[2] = a;
    }
  };
  const std::vector<std::uint64_t> ahead = same_every_way(
      m, program, [&] { got.assign(3, -1); },
      [&] {
        EXPECT_EQ(got[1], 1);  // 0 * 100 + 1: the first message, then the second
        EXPECT_EQ(got[2], 0);
      });
  // Rank 0's three sends and rank 1's two receives; not rank 2's.
  EXPECT_EQ(ahead[0], 0u);
  EXPECT_EQ(ahead[kTwoCores], 5u);
  EXPECT_EQ(ahead[kThreads], 0u);
}

// Without the promise not to read Status::arrival (the default), only the sends go on.
TEST(PastReceives, ProgramsThatMayReadTheArrivalDoNotGoOnPastReceives) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  Time arrival = -1;
  const Program program = [&](Proc& p) {
    double x = 1;
    if (p.rank() == 0) {
      churn(1);
      p.send(1, 0, std::as_bytes(std::span(&x, 1)));
    } else {
      arrival = p.recv(0, 0, std::as_writable_bytes(std::span(&x, 1))).arrival;
    }
  };
  std::vector<std::uint64_t> ahead;
  for (const RunResult& r : ts_test::same_run_every_way(
           m, program, [&] { arrival = -1; }, [&] { EXPECT_GT(arrival, 0); }))
    ahead.push_back(r.continued_ahead);
  EXPECT_EQ(ahead[kTwoCores], 1u);  // rank 0's send
}

// A program that fails in the code it runs past its receive is reported at its turn, the
// receive's completion: the report is the one of one host core.
TEST(PastReceives, AFailurePastAReceiveIsReportedAtTheReceivesCompletion) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program program = [](Proc& p) {
    double x = 1;
    if (p.rank() == 0) {
      churn(2);
      p.send(1, 0, std::as_bytes(std::span(&x, 1)));
    }
    if (p.rank() == 1) {
      p.recv(0, 0, std::as_writable_bytes(std::span(&x, 1)));
      if (churn(3) > 0) throw std::runtime_error("rank 1 gives up after its receive");
    }
  };
  const std::string report = ts_test::same_failure_every_way(m, program, true);
  EXPECT_NE(report.find("rank 1 gives up after its receive"), std::string::npos) << report;
}

// A run that fails elsewhere while a program is past its receive: the program is unwound from the
// call it stopped at, and the report is the one of one host core.
TEST(PastReceives, ARunThatFailsWhileAProgramIsPastItsReceiveIsReportedAsOnOneCore) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program program = [](Proc& p) {
    double x = 1;
    if (p.rank() == 0) p.send(1, 0, std::as_bytes(std::span(&x, 1)));
    if (p.rank() == 1) {
      p.recv(0, 0, std::as_writable_bytes(std::span(&x, 1)));
      churn(4);
      p.send(2, 0, std::as_bytes(std::span(&x, 1)));  // waits at its turn, behind rank 2's failure
    }
    if (p.rank() == 2) {
      p.compute(1);
      throw std::runtime_error("rank 2 fails");
    }
  };
  const std::string report = ts_test::same_failure_every_way(m, program, true);
  EXPECT_NE(report.find("rank 2 fails"), std::string::npos) << report;
}

// A halo exchange on a line of three: each rank posts its receives from its neighbours, sends them
// its value and waits for all four requests at once, then works on what it got. A waitall goes on
// when the messages of all its receives are known and its sends depend on no receiver: rank 0's at
// rank 1's send to it, rank 1's at rank 2's send, rank 2's at its own waitall (rank 1 has sent to
// it): 3 per exchange, 3 exchanges, on 2 host cores. Each rank's values, and the statuses its
// waitall returns, are the same every way.
TEST(PastReceives, AHaloExchangeGoesOnPastItsWaitallOnceEveryMatchIsKnown) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  constexpr int kExchanges = 3;
  std::vector<double> value(3);
  std::vector<std::vector<Status>> statuses(3);
  const Program program = [&](Proc& p) {
    const int me = p.rank();
    double x = me + 1;
    for (int k = 0; k < kExchanges; ++k) {
      double from[2] = {0, 0};
      std::vector<Request> rs;
      for (int side = 0; side < 2; ++side)
        if (const int n = me + (side ? 1 : -1); n >= 0 && n < 3)
          rs.push_back(p.irecv(n, k, std::as_writable_bytes(std::span(&from[side], 1))));
      for (const int n : {me - 1, me + 1})
        if (n >= 0 && n < 3) rs.push_back(p.isend(n, k, std::as_bytes(std::span(&x, 1))));
      statuses[static_cast<std::size_t>(me)] = p.waitall(rs);
      x = (x + from[0] + from[1]) / 2 + churn(me + k) * 1e-12;
    }
    value[static_cast<std::size_t>(me)] = x;
  };
  std::vector<std::vector<double>> all;
  const std::vector<std::uint64_t> ahead = same_every_way(
      m, program, [&] { value.assign(3, 0); },
      [&] {
        all.push_back(value);
        for (int r = 0; r < 3; ++r) {
          const std::vector<Status>& st = statuses[static_cast<std::size_t>(r)];
          const std::size_t receives = r == 1 ? 2 : 1;
          ASSERT_EQ(st.size(), 2 * receives);
          for (std::size_t i = 0; i < receives; ++i) {
            EXPECT_EQ(st[i].source, r == 0 ? 1 : r == 2 ? 1 : static_cast<int>(2 * i));
            EXPECT_EQ(st[i].tag, kExchanges - 1);
            EXPECT_EQ(st[i].size, sizeof(double));
          }
        }
      });
  ASSERT_EQ(all.size(), std::size(kWays));
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_EQ(all[i], all[0]) << ts_test::describe(kWays[i]);
  // After three exchanges each value has taken in its neighbours': none is its start any more.
  EXPECT_GT(all[0][0], 1.0);
  EXPECT_GT(all[0][1], 2.0);
  EXPECT_EQ(ahead[0], 0u);
  EXPECT_EQ(ahead[kTwoCores], 3u * kExchanges);
  EXPECT_EQ(ahead[kThreads], 0u);
}

// A waitall whose receive takes any source, or whose send is synchronous (it completes only when
// its receiver matches it), does not go on past its receives.
TEST(PastReceives, AWaitallWithAReceiveFromAnySourceOrASynchronousSendDoesNotGoOn) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  for (const bool synchronous : {false, true}) {
    std::vector<double> got(2);
    const Program program = [&](Proc& p) {
      const int other = 1 - p.rank();
      double x = p.rank() + 1, y = 0;
      std::vector<Request> rs;
      rs.push_back(p.irecv(synchronous ? other : any_source, 0, std::as_writable_bytes(std::span(&y, 1))));
      rs.push_back(synchronous ? p.issend(other, 0, std::as_bytes(std::span(&x, 1)))
                               : p.isend(other, 0, std::as_bytes(std::span(&x, 1))));
      p.waitall(rs);
      got[static_cast<std::size_t>(p.rank())] = y;
    };
    const std::vector<std::uint64_t> ahead = same_every_way(
        m, program, [&] { got.assign(2, 0); },
        [&] {
          EXPECT_EQ(got[0], 2.0);
          EXPECT_EQ(got[1], 1.0);
        });
    EXPECT_EQ(ahead[kTwoCores], 0u) << (synchronous ? "synchronous send" : "any source");
  }
}

// A program that fails in the code it runs past its waitall is reported at its turn, the
// waitall's completion: the report is the one of one host core.
TEST(PastReceives, AFailurePastAWaitallIsReportedAsOnOneCore) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Program program = [](Proc& p) {
    const int other = 1 - p.rank();
    double x = 1, y = 0;
    std::vector<Request> rs;
    rs.push_back(p.irecv(other, 0, std::as_writable_bytes(std::span(&y, 1))));
    rs.push_back(p.isend(other, 0, std::as_bytes(std::span(&x, 1))));
    p.waitall(rs);
    if (p.rank() == 0 && churn(5) > 0) throw std::runtime_error("rank 0 gives up after its waitall");
    p.compute(1);
  };
  const std::string report = ts_test::same_failure_every_way(m, program, true);
  EXPECT_NE(report.find("rank 0 gives up after its waitall"), std::string::npos) << report;
}

// Two receives of one pattern in a waitall, both messages on their way when it starts waiting:
// the first takes the first message's match at once (4 KiB: copied beside the event loop, one
// delivered early); the second is claimed by that message too and is matched at the arrival. The
// messages on their way are looked at once per waitall, as on one host core, so a waitall that
// may go on past its receives does not find the second match after the first arrives, which
// would deliver one more message early on some hosts than on others.
TEST(PastReceives, AWaitallLooksAtItsMessagesOnTheirWayOnceOnEveryHost) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  constexpr std::size_t kBytes = 4096;
  std::vector<std::byte> got;
  const Program program = [&](Proc& p) {
    std::vector<std::byte> a(kBytes, std::byte{1}), b(kBytes, std::byte{2}), in(2 * kBytes);
    std::vector<Request> rs;
    if (p.rank() == 0) {
      rs.push_back(p.isend(1, 0, a));
      rs.push_back(p.isend(1, 0, b));
    } else {
      rs.push_back(p.irecv(0, 0, std::span(in).first(kBytes)));
      rs.push_back(p.irecv(0, 0, std::span(in).last(kBytes)));
    }
    p.waitall(rs);
    if (p.rank() == 1) got = in;
  };
  std::vector<std::uint64_t> early;
  for (const RunResult& r : ts_test::same_run_every_way(
           m, program, [&] { got.clear(); },
           [&] {
             ASSERT_EQ(got.size(), 2 * kBytes);
             EXPECT_EQ(got[0], std::byte{1});
             EXPECT_EQ(got[kBytes - 1], std::byte{1});
             EXPECT_EQ(got[kBytes], std::byte{2});
             EXPECT_EQ(got[2 * kBytes - 1], std::byte{2});
           },
           true))
    early.push_back(r.delivered_early);
  EXPECT_EQ(early[0], 1u);
}
