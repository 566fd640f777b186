// Point-to-point semantics (docs/model.md 2.5): non-overtaking, wildcard matching of the earliest-arrived
// message, probe/iprobe/test, sendrecv, waitany, waitall -- with exact virtual times.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

std::vector<std::byte> numbered(int seq, std::size_t size) {
  std::vector<std::byte> v(std::max<std::size_t>(size, sizeof(int)));
  std::memcpy(v.data(), &seq, sizeof(int));
  return v;
}
int number_of(const std::vector<std::byte>& v) {
  int x;
  std::memcpy(&x, v.data(), sizeof(int));
  return x;
}

// Many messages, same pair, same tag, decreasing sizes (a later, shorter message could overtake
// an earlier, longer one if the runtime let it): they arrive and are received in sending order,
// whatever the mix of specific and wildcard receives.
TEST(Matching, MessagesBetweenOnePairWithOneTagNeverOvertake) {
  for (int ports : {1, 2}) {
    Machine m = ts_test::prime_machine("mesh:2x3");
    m.net.inj_ports = m.net.ej_ports = ports;
    constexpr int K = 12;
    std::vector<int> order;
    std::vector<Time> arrivals;
    run(m, [&](Proc& p) {
      if (p.rank() == 0) {
        std::vector<std::vector<std::byte>> bufs;
        for (int i = 0; i < K; ++i) bufs.push_back(numbered(i, static_cast<std::size_t>(400 - 30 * i)));
        std::vector<Request> rq;
        for (int i = 0; i < K; ++i) rq.push_back(p.isend(5, 7, bufs[static_cast<std::size_t>(i)]));
        p.waitall(rq);
      } else if (p.rank() == 5) {
        std::vector<std::byte> in(400);
        for (int i = 0; i < K; ++i) {
          Status st;
          switch (i % 4) {
            case 0: st = p.recv(0, 7, in); break;
            case 1: st = p.recv(any_source, 7, in); break;
            case 2: st = p.recv(0, any_tag, in); break;
            default: st = p.recv(any_source, any_tag, in); break;
          }
          EXPECT_EQ(st.source, 0);
          EXPECT_EQ(st.tag, 7);
          EXPECT_EQ(st.size, static_cast<std::size_t>(400 - 30 * i));
          order.push_back(number_of(in));
          arrivals.push_back(st.arrival);
        }
      }
    });
    ASSERT_EQ(order.size(), static_cast<std::size_t>(K));
    for (int i = 0; i < K; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i) << "ports=" << ports;
    for (int i = 1; i < K; ++i) EXPECT_LT(arrivals[static_cast<std::size_t>(i - 1)], arrivals[static_cast<std::size_t>(i)]);
  }
}

// mesh:1x8. Rank 7 (7 links away) sends first in virtual time; rank 1 (1 link) sends later but
// arrives earlier. A wildcard receive picks the earliest ARRIVED message, not the earliest sent.
TEST(Matching, WildcardReceivePicksTheEarliestArrivedMessage) {
  const Machine m = ts_test::prime_machine("mesh:1x8");
  const Model x{m};
  const std::size_t s = 20;
  const Time hop = x.hop(), wb = x.wire_total(s) * x.b(1);
  const Time delta1 = 3 * hop;  // rank 1 starts later ...
  const Time h = x.handed(0, s);
  const Time e1 = delta1 + h + 2 * hop;  // rank 1's header at node 0's ejection channel
  const Time a1 = e1 + wb;
  const Time e7 = h + 8 * hop;  // rank 7's header gets there while rank 1's body streams
  ASSERT_LT(e1, e7);
  ASSERT_LT(e7, a1);
  const Time a7 = a1 + wb;  // one-port ejection: after rank 1's tail
  ASSERT_LT(a1, a7);  // ... and arrives first
  for (bool post_early : {false, true}) {
    std::vector<Status> got;
    Time after = -1;
    const Time late = a7 + 5;
    run(m, [&](Proc& p) {
      const auto out = ts_test::bytes(s, p.rank());
      if (p.rank() == 7) p.send(0, 3, out);
      if (p.rank() == 1) {
        p.compute(delta1);
        p.send(0, 9, out);
      }
      if (p.rank() == 0) {
        std::vector<std::byte> in(s);
        if (post_early) {
          Request r = p.irecv(any_source, any_tag, in);
          got.push_back(p.wait(r));
        } else {
          p.compute(late);
          got.push_back(p.recv(any_source, any_tag, in));
        }
        got.push_back(p.recv(any_source, any_tag, in));
        after = p.now();
      }
    });
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].source, 1);
    EXPECT_EQ(got[0].tag, 9);
    EXPECT_EQ(got[0].arrival, a1);
    EXPECT_EQ(got[1].source, 7);
    EXPECT_EQ(got[1].tag, 3);
    EXPECT_EQ(got[1].arrival, a7);
    const Time first_done = x.recv_done(post_early ? 0 : late, a1, s);
    EXPECT_EQ(after, x.recv_done(first_done, a7, s));
  }
}

// iprobe before the arrival finds nothing and costs probe_cost; after it, iprobe and probe report
// the message (source, tag, size, arrival) without receiving it or costing time; test on a
// pending receive costs probe_cost, on an arrived one it completes the receive with its cost.
TEST(Matching, ProbeIprobeAndTestSemantics) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Model x{m};
  const std::size_t s = 90;
  constexpr Time kGap = 1'000'000;  // the sender waits this long between its two messages
  constexpr Time kLater = 2'000'000;
  const Time a = x.arrival_cf(x.handed(0, s), 2, s);
  const Time probe = m.costs.probe_cost;
  ASSERT_GT(a, probe);
  std::optional<Status> early, later;
  Status blocking_probe, blocking_probe2, got;
  Time after_early = -1, after_later = -1, after_probe = -1, after_recv = -1;
  bool test_early = true, test_late = false;
  Time after_test_early = -1, after_test_late = -1;
  Status test_status;
  run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(s);
    if (p.rank() == 0) {
      p.send(2, 5, out);
      p.compute(kGap);
      p.send(2, 6, out);
    }
    if (p.rank() == 2) {
      std::vector<std::byte> in(s);
      early = p.iprobe(0, 5);
      after_early = p.now();
      blocking_probe = p.probe(any_source, 5);  // blocks until the arrival
      after_probe = p.now();
      p.compute(a + 1000 - p.now());
      later = p.iprobe(0, any_tag);
      after_later = p.now();
      blocking_probe2 = p.probe(0, 5);
      got = p.recv(0, 5, in);
      after_recv = p.now();
      Request r = p.irecv(0, 6, in);
      test_early = p.test(r, &test_status);  // the second message is still a long way off
      after_test_early = p.now();
      p.compute(kLater);
      test_late = p.test(r, &test_status);
      after_test_late = p.now();
      if (!test_late) p.wait(r);
    }
  });
  EXPECT_FALSE(early.has_value());
  EXPECT_EQ(after_early, probe);
  EXPECT_EQ(blocking_probe.source, 0);
  EXPECT_EQ(blocking_probe.tag, 5);
  EXPECT_EQ(blocking_probe.size, s);
  EXPECT_EQ(blocking_probe.arrival, a);
  EXPECT_EQ(after_probe, a);  // a blocking probe returns at the arrival
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->tag, 5);  // the earliest arrived match, still not received
  EXPECT_EQ(later->arrival, a);
  EXPECT_EQ(after_later, a + 1000);  // a successful iprobe costs nothing
  EXPECT_EQ(blocking_probe2.arrival, a);
  EXPECT_EQ(got.arrival, a);
  EXPECT_EQ(after_recv, x.recv_done(a + 1000, a, s));

  // The second message is handed over kGap after the first send returned.
  const Time h2 = x.handed(x.send_return_cf(x.handed(0, s), 2, s) + kGap, s);
  const Time a2 = x.arrival_cf(h2, 2, s);
  ASSERT_GT(a2, after_recv + probe);
  ASSERT_LT(a2, after_recv + probe + kLater);
  EXPECT_FALSE(test_early);
  EXPECT_EQ(after_test_early, after_recv + probe);
  EXPECT_TRUE(test_late);
  EXPECT_EQ(test_status.source, 0);
  EXPECT_EQ(test_status.tag, 6);
  EXPECT_EQ(test_status.arrival, a2);
  EXPECT_EQ(after_test_late, after_test_early + kLater + x.recv_cost(s));
}

// The two tests below: rank 0 sends s = 300 bytes (tag 1) to rank 15 of mesh:4x4, 6 hops away,
// contention-free; it arrives at a. Rank 15 posts the receive, computes for a while, then tests
// it once (and waits for it if the test found it incomplete).
struct CornerToCorner {
  const Machine m = ts_test::prime_machine("mesh:4x4");
  const Model x{m};
  const std::size_t s = 300;
  const Time a = x.arrival_cf(x.handed(0, s), 6, s);
  bool done = false;
  Time after = -1;  ///< when test() returned
  Status st;

  void receive_then_test(Proc& p, Time compute) {
    std::vector<std::byte> in(s);
    Request r = p.irecv(0, 1, in);
    p.compute(compute);
    done = p.test(r, &st);
    after = p.now();
    if (!done) p.wait(r);
  }
};

// test() looks at virtual time, not at host progress: a VP that computes past the arrival without
// blocking must still find the message complete (conservative synchronization).
TEST(Matching, TestAfterComputingPastTheArrivalFindsTheMessage) {
  CornerToCorner t;
  run(t.m, [&](Proc& p) {
    if (p.rank() == 0) p.send(15, 1, ts_test::bytes(t.s));
    if (p.rank() == 15) t.receive_then_test(p, t.a + 1);  // past the arrival, without ever blocking
  });
  EXPECT_TRUE(t.done);
  EXPECT_EQ(t.st.arrival, t.a);
  EXPECT_EQ(t.after, t.x.recv_done(t.a + 1, t.a, t.s));
}

// At exactly the arrival time the message is there: a receive started then completes at
// arrival + receive cost (max(clock, arrival)), so test() and iprobe() at that instant must see it.
TEST(Matching, TestAndIprobeAtExactlyTheArrivalTimeSeeTheMessage) {
  CornerToCorner t;
  const Model& x = t.x;
  const std::size_t s = t.s;
  bool probed = false;
  run(t.m, [&](Proc& p) {
    const auto out = ts_test::bytes(s);
    if (p.rank() == 0) {
      p.send(15, 1, out);
      p.send(14, 1, out);
    }
    if (p.rank() == 15) t.receive_then_test(p, t.a);
    if (p.rank() == 14) {
      std::vector<std::byte> in(s);
      const Time a14 = x.arrival_cf(x.handed(x.send_return_cf(x.handed(0, s), 6, s), s), 5, s);
      p.compute(a14);
      probed = p.iprobe(0, 1).has_value();
      p.recv(0, 1, in);
    }
  });
  EXPECT_TRUE(t.done);
  EXPECT_EQ(t.after, x.recv_done(t.a, t.a, s));
  EXPECT_TRUE(probed);
}

TEST(Matching, TestOnASendCompletesOnceItsLastPacketHasLeft) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Model x{m};
  const std::size_t s = 200;
  const Time h = x.handed(0, s);
  const Time leaves = x.send_return_cf(h, 1, s);
  bool first = true, second = false;
  Time after_first = -1, after_second = -1;
  run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(s);
    if (p.rank() == 0) {
      Request r = p.isend(1, 0, out);
      first = p.test(r);  // at h: the packets are still leaving
      after_first = p.now();
      p.compute(leaves - p.now());
      second = p.test(r);
      after_second = p.now();
    } else {
      std::vector<std::byte> in(s);
      p.recv(0, 0, in);
    }
  });
  EXPECT_FALSE(first);
  EXPECT_EQ(after_first, h + m.costs.probe_cost);
  EXPECT_TRUE(second);
  EXPECT_EQ(after_second, leaves);
}

// sendrecv between two neighbours: both send at 0 over opposite links, both receive.
TEST(Matching, SendrecvExchangeHasExactTimes) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Model x{m};
  const std::size_t s = 150;
  const Time h = x.handed(0, s);
  const Time a = x.arrival_cf(h, 1, s);
  std::vector<Status> st(2);
  std::vector<Time> after(2);
  std::vector<std::vector<std::byte>> got(2, std::vector<std::byte>(s));
  run(m, [&](Proc& p) {
    const int me = p.rank(), other = 1 - me;
    const auto out = ts_test::bytes(s, me);
    st[static_cast<std::size_t>(me)] = p.sendrecv(other, 10 + me, out, other, 10 + other, got[static_cast<std::size_t>(me)]);
    after[static_cast<std::size_t>(me)] = p.now();
  });
  for (int me = 0; me < 2; ++me) {
    const auto i = static_cast<std::size_t>(me);
    EXPECT_EQ(st[i].source, 1 - me);
    EXPECT_EQ(st[i].tag, 10 + 1 - me);
    EXPECT_EQ(st[i].arrival, a);
    EXPECT_EQ(after[i], std::max(x.recv_done(h, a, s), x.send_return_cf(h, 1, s)));
    EXPECT_EQ(got[i], ts_test::bytes(s, 1 - me));
  }
}

// waitany completes the request that becomes complete first (the earliest arrival), then the next.
TEST(Matching, WaitanyCompletesTheEarliestArrivalFirst) {
  const Machine m = ts_test::prime_machine("mesh:1x4");
  const Model x{m};
  const std::size_t s = 40;
  const Time hop = x.hop(), wb = x.wire_total(s) * x.b(1);
  const Time h = x.handed(0, s);
  const Time delta1 = hop;
  const Time e1 = delta1 + h + 2 * hop, a1 = e1 + wb;  // rank 1's message, one link
  const Time e3 = h + 4 * hop;                          // rank 3's header, three links
  ASSERT_LT(e1, e3);
  ASSERT_LT(e3, a1);
  const Time a3 = a1 + wb;  // waits for node 0's only ejection channel
  std::vector<std::size_t> idx;
  std::vector<Status> st;
  Time after = -1;
  run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(s);
    if (p.rank() == 3) p.send(0, 0, out);
    if (p.rank() == 1) {
      p.compute(delta1);
      p.send(0, 0, out);
    }
    if (p.rank() == 0) {
      std::vector<std::byte> b3(s), b1(s);
      Request rq[2] = {p.irecv(3, 0, b3), p.irecv(1, 0, b1)};
      for (int k = 0; k < 2; ++k) {
        Status s1;
        idx.push_back(p.waitany(rq, &s1));
        st.push_back(s1);
      }
      EXPECT_FALSE(rq[0].active());
      EXPECT_FALSE(rq[1].active());
      after = p.now();
    }
  });
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0], 1u);
  EXPECT_EQ(st[0].source, 1);
  EXPECT_EQ(st[0].arrival, a1);
  EXPECT_EQ(idx[1], 0u);
  EXPECT_EQ(st[1].source, 3);
  EXPECT_EQ(st[1].arrival, a3);
  EXPECT_EQ(after, x.recv_done(x.recv_done(0, a1, s), a3, s));
}

// waitany over a send and a receive: the send's completion comes first.
TEST(Matching, WaitanyOverASendAndAReceive) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Model x{m};
  const std::size_t s = 100;
  const Time h = x.handed(0, s);
  const Time leaves = x.send_return_cf(h, 1, s);
  const Time a = x.arrival_cf(h, 1, s);  // the partner's message, sent at the same time
  std::vector<std::size_t> idx;
  std::vector<Time> t;
  run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(s);
    std::vector<std::byte> in(s);
    Request rq[2] = {p.irecv(1 - p.rank(), 0, in), p.isend(1 - p.rank(), 0, out)};
    for (int k = 0; k < 2; ++k) {
      const std::size_t i = p.waitany(rq);
      if (p.rank() == 0) {
        idx.push_back(i);
        t.push_back(p.now());
      }
    }
  });
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0], 1u);
  EXPECT_EQ(t[0], leaves);
  EXPECT_EQ(idx[1], 0u);
  EXPECT_EQ(t[1], x.recv_done(leaves, a, s));
}

// waitall completes receives in arrival order (each receive costs CPU time), sends only raise the
// clock; statuses come back in request order.
// The givens of the two waitall tests below, on mesh:1x4: rank 3 sends s_far bytes to rank 0 at
// once, rank 1 sends s_near bytes after computing for `delta`, chosen so that the near message
// arrives second, while the far one is being received.
struct CrossingArrivals {
  static constexpr std::size_t s_far = 200, s_near = 10;  // different receive costs
  Machine m = ts_test::prime_machine("mesh:1x4");
  Model x{m};
  Time a_far = x.arrival_cf(x.handed(0, s_far), 3, s_far);
  Time delta = a_far - x.handed(0, s_near) - 2 * x.hop() - x.wire_total(s_near) * x.b(1) + 500;
  Time a_near = x.arrival_cf(x.handed(delta, s_near), 1, s_near);
  void check() const {
    ASSERT_GT(delta, 0);
    ASSERT_GT(a_near, a_far);
    ASSERT_LT(a_near, a_far + x.recv_cost(s_far));
  }
  // Ranks 3 and 1's part of the run.
  void send_both(Proc& p) const {
    if (p.rank() == 3) p.send(0, 0, ts_test::bytes(s_far));
    if (p.rank() == 1) {
      p.compute(delta);
      p.send(0, 0, ts_test::bytes(s_near));
    }
  }
};

TEST(Matching, WaitallCompletesReceivesInArrivalOrder) {
  const CrossingArrivals g;
  ASSERT_NO_FATAL_FAILURE(g.check());
  const Model& x = g.x;
  const Time a_far = g.a_far, a_near = g.a_near;
  constexpr std::size_t s_far = CrossingArrivals::s_far, s_near = CrossingArrivals::s_near;
  std::vector<Status> st;
  Time after = -1;
  run(g.m, [&](Proc& p) {
    g.send_both(p);
    if (p.rank() == 0) {
      std::vector<std::byte> bn(s_near), bf(s_far);
      Request rq[2] = {p.irecv(1, 0, bn), p.irecv(3, 0, bf)};  // request order: near, far
      st = p.waitall(rq);
      after = p.now();
    }
  });
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].source, 1);
  EXPECT_EQ(st[0].arrival, a_near);
  EXPECT_EQ(st[1].source, 3);
  EXPECT_EQ(st[1].arrival, a_far);
  // Arrival order: far first, then near.
  EXPECT_EQ(after, x.recv_done(x.recv_done(0, a_far, s_far), a_near, s_near));
}

// waitall into the caller's statuses, or into none: the same completions at the same times as the
// waitall that returns them; a send's slot is a default Status; any other count is a usage error.
TEST(Matching, WaitallIntoCallersStatusesOrNoneCompletesTheSame) {
  const CrossingArrivals g;
  ASSERT_NO_FATAL_FAILURE(g.check());
  const Model& x = g.x;
  const Time a_far = g.a_far, a_near = g.a_near;
  constexpr std::size_t s_far = CrossingArrivals::s_far, s_near = CrossingArrivals::s_near, s_out = 30;
  for (const bool wanted : {true, false}) {
    std::array<Status, 3> st;
    st.fill(Status{99, 99, 99, 99, true});  // every slot is overwritten when statuses are wanted
    Time after = -1;
    run(g.m, [&](Proc& p) {
      g.send_both(p);
      if (p.rank() == 2) {
        std::vector<std::byte> in(s_out);
        p.recv(0, 1, in);
      }
      if (p.rank() == 0) {
        std::vector<std::byte> bn(s_near), bf(s_far);
        const auto out = ts_test::bytes(s_out);
        Request rq[3] = {p.irecv(1, 0, bn), p.isend(2, 1, out), p.irecv(3, 0, bf)};
        p.waitall(rq, wanted ? std::span<Status>(st) : std::span<Status>());
        after = p.now();
      }
    });
    // The send to rank 2 (posted between the receives, its cost on the clock) has left long before
    // the far message arrives: the receives alone decide the end, in arrival order.
    EXPECT_EQ(after, x.recv_done(x.recv_done(x.send_cost(s_out), a_far, s_far), a_near, s_near)) << wanted;
    if (wanted) {
      EXPECT_EQ(st[0].source, 1);
      EXPECT_EQ(st[0].arrival, a_near);
      EXPECT_EQ(st[0].size, s_near);
      EXPECT_EQ(st[1].source, Status{}.source);  // the send's
      EXPECT_EQ(st[1].tag, Status{}.tag);
      EXPECT_EQ(st[1].size, 0u);
      EXPECT_FALSE(st[1].truncated);
      EXPECT_EQ(st[2].source, 3);
      EXPECT_EQ(st[2].arrival, a_far);
    } else {
      for (const Status& s : st) EXPECT_EQ(s.source, 99);  // untouched
    }
  }
  try {
    run(g.m, [&](Proc& p) {
      if (p.rank() == 1) p.send(0, 0, ts_test::bytes(4));
      if (p.rank() == 0) {
        std::vector<std::byte> in(4);
        Request rq[1] = {p.irecv(1, 0, in)};
        std::array<Status, 2> two;
        p.waitall(rq, two);
      }
    });
    ADD_FAILURE() << "no error";
  } catch (const RunUsageError& e) {
    EXPECT_NE(std::string(e.what()).find("waitall: 2 statuses for 1 requests"), std::string::npos) << e.what();
  }
}

// Matching costs receiver time per queue entry examined (docs/model.md 2.5): an arrival walks the
// posted receives up to the one it matches, a newly posted receive walks the unexpected messages up
// to the one it takes, and the receive pays for both when it completes.
TEST(Matching, EveryQueueEntryExaminedCostsMatchTime) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.costs.match_per_entry = 101;
  const Model x{m};
  constexpr std::size_t S = 40;
  const Time a2 = x.arrival_cf(x.handed(0, S), 2, S);  // rank 2 sends at once, from two hops away
  const Time t2 = x.recv_done(0, a2, S) + 2 * 101;      // walked the posted receives: from 1, from 2
  const Time D = t2 + 1000;                             // rank 1 sends well after that
  const Time a1 = x.arrival_cf(x.handed(D, S), 1, S);
  const Time t1 = x.recv_done(t2, a1, S) + 1 * 101;     // the receive from 1 is the only one left
  const Time T = 10 * D;                                // rank 0 starts receiving tags 5, 6 here
  const Time t6 = x.recv_done(T, T, S) + 2 * 101;       // walked unexpected: tag 5, then tag 6
  const Time t5 = x.recv_done(t6, t6, S) + 1 * 101;
  std::vector<Time> done;
  run(m, [&](Proc& p) {
    if (p.rank() == 2) p.send(0, 0, ts_test::bytes(S));
    if (p.rank() == 1) {
      p.compute(D);
      p.send(0, 0, ts_test::bytes(S));
      p.send(0, 5, ts_test::bytes(S));
      p.send(0, 6, ts_test::bytes(S));
    }
    if (p.rank() == 0) {
      std::vector<std::byte> b1(S), b2(S);
      Request r1 = p.irecv(1, 0, b1), r2 = p.irecv(2, 0, b2);
      p.wait(r2);
      done.push_back(p.now());
      p.wait(r1);
      done.push_back(p.now());
      p.compute(T - p.now());
      p.recv(1, 6, b1);
      done.push_back(p.now());
      p.recv(1, 5, b1);
      done.push_back(p.now());
    }
  });
  ASSERT_LT(t1, T);  // tags 5 and 6 are both waiting when rank 0 posts their receives
  EXPECT_EQ(done, (std::vector<Time>{t2, t1, t6, t5}));
}

}  // namespace
