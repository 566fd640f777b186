// Proc::cancel (docs/model.md 2.5): an unmatched receive is withdrawn at the VP's virtual time,
// exactly as test would decide it; a matched receive and any send are not, and complete as usual.
#include <gtest/gtest.h>

#include <cstring>

#include "support/model.hpp"

using namespace touchstone;

namespace {

int first_int(const std::vector<std::byte>& v) {
  int x;
  std::memcpy(&x, v.data(), sizeof(int));
  return x;
}

std::vector<std::byte> holding(int x) {
  std::vector<std::byte> v(sizeof(int));
  std::memcpy(v.data(), &x, sizeof(int));
  return v;
}

}  // namespace

// The receive is cancelled before its message can have arrived: the message goes to the next
// matching receive, once, and the cancelled receive's buffer is never written.
TEST(Cancel, UnmatchedReceiveIsWithdrawnAndTheMessageGoesToTheNextReceive) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  int cancelled = -1, got = 0, untouched = 0, second = 0;
  run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      p.compute(microseconds(50));
      p.send(2, 4, holding(11));
      p.send(2, 4, holding(22));
    } else if (p.rank() == 2) {
      std::vector<std::byte> a = holding(-1), b(sizeof(int)), c(sizeof(int));
      Request r = p.irecv(any_source, 4, a);
      cancelled = p.cancel(r);
      EXPECT_FALSE(r.active());
      p.recv(0, 4, b);
      p.recv(any_source, any_tag, c);
      got = first_int(b);
      second = first_int(c);
      untouched = first_int(a);
    }
  });
  EXPECT_EQ(cancelled, 1);
  EXPECT_EQ(got, 11);
  EXPECT_EQ(second, 22);
  EXPECT_EQ(untouched, -1);
}

// Once the message has arrived by the VP's clock, the cancel fails and the receive completes.
TEST(Cancel, ReceiveMatchedByTheVpsClockIsNotCancelled) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  bool cancelled = true;
  int got = 0;
  Time arrival = 0, before = 0, after = 0;
  run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      p.send(1, 0, holding(7));
    } else {
      std::vector<std::byte> a(sizeof(int));
      Request r = p.irecv(0, 0, a);
      p.compute(microseconds(1000));  // far beyond the message's arrival
      before = p.now();
      cancelled = p.cancel(r);
      after = p.now();
      EXPECT_TRUE(r.active());
      arrival = p.wait(r).arrival;
      got = first_int(a);
    }
  });
  EXPECT_FALSE(cancelled);
  EXPECT_EQ(got, 7);
  EXPECT_LT(arrival, microseconds(1000));
  EXPECT_EQ(before, after);  // a cancel is free in virtual time
}

// A send is never taken back: the cancel fails and the message is received.
TEST(Cancel, SendsAreNotCancelled) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  bool cancelled = true;
  int got = 0;
  run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      const auto out = holding(5);
      Request s = p.isend(1, 0, out);
      cancelled = p.cancel(s);
      p.wait(s);
    } else {
      std::vector<std::byte> a(sizeof(int));
      p.compute(microseconds(100));
      p.recv(0, 0, a);
      got = first_int(a);
    }
  });
  EXPECT_FALSE(cancelled);
  EXPECT_EQ(got, 5);
}

// The same program gives the same outcome and hash under fibers, threads and perturbation.
TEST(Cancel, OutcomeIsDeterministic) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  auto program = [](std::vector<int>& outcomes) {
    return [&outcomes](Proc& p) {
      if (p.rank() != 0) {
        p.compute(microseconds(10 * p.rank()));
        p.send(0, 1, holding(p.rank()));
        return;
      }
      for (int i = 0; i < 3; ++i) {
        std::vector<std::byte> a(sizeof(int));
        Request r = p.irecv(any_source, 1, a);
        p.compute(microseconds(8));
        if (p.cancel(r)) outcomes.push_back(-1);
        else outcomes.push_back(p.wait(r).source);
      }
      std::vector<std::byte> a(sizeof(int));
      for (std::size_t left = 3 - std::count_if(outcomes.begin(), outcomes.end(), [](int x) { return x > 0; }); left;
           --left)
        outcomes.push_back(p.recv(any_source, 1, a).source);
    };
  };
  std::vector<int> base, threads, perturbed;
  RunOptions o;
  const auto h0 = run(m, program(base), o).trace_hash;
  o.execution = Execution::threads;
  const auto h1 = run(m, program(threads), o).trace_hash;
  o.execution = Execution::fibers;
  o.perturb = 3;
  const auto h2 = run(m, program(perturbed), o).trace_hash;
  // The first receive is cancelled at t = 8 us, before rank 1 has even sent (at 10 us); the next two
  // have matched rank 1's and rank 2's messages by their cancels; rank 3's is received after.
  EXPECT_EQ(base, (std::vector<int>{-1, 1, 2, 3}));
  EXPECT_EQ(base, threads);
  EXPECT_EQ(base, perturbed);
  EXPECT_EQ(h0, h1);
  EXPECT_EQ(h0, h2);
  // Every message is received once: the three sources appear once each among the outcomes.
  std::vector<int> sources;
  for (int x : base)
    if (x > 0) sources.push_back(x);
  std::sort(sources.begin(), sources.end());
  EXPECT_EQ(sources, (std::vector<int>{1, 2, 3}));
}
