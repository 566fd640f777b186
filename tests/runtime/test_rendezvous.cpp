// Receive-side flow control (docs/model.md 2.16). With eager_limit set, a message of more than
// eager_limit bytes (or, with buffer=, one that does not fit the receiver's free buffer when it is
// sent) goes by rendezvous: the sender sends a 0-byte request to send (RTS) and waits; when a
// matching receive meets the RTS (at max(RTS arrival, receive posted)) the receiver pays
// recv_cost(0) + send_cost(0) and sends a 0-byte clear to send (CTS); when the CTS arrives the
// sender pays recv_cost(0) + send_cost(L) and sends the data, which completes the receive like any
// message. Every control message is a real message (overheads, network). Expected times computed
// here from the contention-free formulas of tests/support/model.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

constexpr std::size_t kLarge = 150, kSmall = 60;

Machine rdv_machine(const std::string& spec, std::int64_t eager_limit) {
  Machine m = ts_test::prime_machine(spec);
  m.net.eager_limit = eager_limit;
  return m;
}

struct Pair {
  Time sender_after = -1, receiver_after = -1;
  Status st;
  RunResult result;
};

// Rank 0 sends `size` bytes to rank 1, which computes until `post_at`, then receives.
Pair send_recv(const Machine& m, std::size_t size, Time post_at) {
  Pair r;
  const auto out = ts_test::bytes(size, 3);
  std::vector<std::byte> in(size);
  r.result = run(m, [&](Proc& p) {
    if (p.rank() == 0) {
      p.send(1, 7, out);
      r.sender_after = p.now();
    } else if (p.rank() == 1) {
      p.compute(post_at);
      r.st = p.recv(0, 7, in);
      r.receiver_after = p.now();
    }
  });
  EXPECT_EQ(in, out);
  return r;
}

// The three legs of a rendezvous between neighbours when the receive is posted at `post_at`.
struct Legs {
  Time rts_arrives, cts_handed, cts_arrives, data_handed, data_leaves, data_arrives, received;
};
Legs legs(const Model& x, std::size_t size, Time post_at) {
  Legs l{};
  l.rts_arrives = x.arrival_cf(x.handed(0, 0), 1, 0);
  const Time meet = std::max(l.rts_arrives, post_at);
  l.cts_handed = meet + x.recv_cost(0) + x.send_cost(0);
  l.cts_arrives = x.arrival_cf(l.cts_handed, 1, 0);
  l.data_handed = l.cts_arrives + x.recv_cost(0) + x.send_cost(size);
  l.data_leaves = x.send_return_cf(l.data_handed, 1, size);
  l.data_arrives = x.arrival_cf(l.data_handed, 1, size);
  l.received = x.recv_done(l.cts_handed, l.data_arrives, size);
  return l;
}

TEST(Rendezvous, ReceiverWaitingAlready) {
  const Machine m = rdv_machine("mesh:1x2", 100);
  const Model x{m};
  const Legs l = legs(x, kLarge, 0);
  const Pair got = send_recv(m, kLarge, 0);
  EXPECT_EQ(got.st.arrival, l.data_arrives);
  EXPECT_EQ(got.st.size, kLarge);
  EXPECT_EQ(got.receiver_after, l.received);
  EXPECT_EQ(got.sender_after, l.data_leaves);
  EXPECT_EQ(got.result.stats.messages, 3u);  // RTS, CTS, data
  EXPECT_EQ(got.result.sent, (std::vector<std::uint64_t>{2, 1}));
  // The same message eager (limit 150): one message, the ordinary formula.
  const Machine eager = rdv_machine("mesh:1x2", 150);
  const Pair e = send_recv(eager, kLarge, 0);
  EXPECT_EQ(e.receiver_after, x.recv_done(0, x.arrival_cf(x.handed(0, kLarge), 1, kLarge), kLarge));
  EXPECT_EQ(e.result.stats.messages, 1u);
}

// The receive is posted long after the RTS arrived: the CTS leaves from the receiver's clock then,
// and the sender waits all that time.
TEST(Rendezvous, LateReceiverHoldsTheSenderBack) {
  const Machine m = rdv_machine("mesh:1x2", 100);
  const Model x{m};
  const Time post_at = 50'000;
  const Legs l = legs(x, kLarge, post_at);
  ASSERT_GT(post_at, l.rts_arrives);
  const Pair got = send_recv(m, kLarge, post_at);
  EXPECT_EQ(got.st.arrival, l.data_arrives);
  EXPECT_EQ(got.receiver_after, l.received);
  EXPECT_EQ(got.sender_after, l.data_leaves);
}

// Without eager_limit nothing changes (the default).
TEST(Rendezvous, OffByDefault) {
  EXPECT_FALSE(parse_machine("mesh:2x2").net.flow_control());
  EXPECT_FALSE(parse_machine("mesh:2x2,buffer=100").net.flow_control());
  EXPECT_EQ(parse_machine("mesh:2x2,eager_limit=1024").net.eager_limit, 1024);
  EXPECT_TRUE(parse_machine("mesh:2x2,eager_limit=unlimited").net.flow_control());
  EXPECT_FALSE(parse_machine("mesh:2x2,eager_limit=1024,eager_limit=off").net.flow_control());
  EXPECT_THROW(parse_machine("mesh:2x2,eager_limit=-5"), UsageError);
  EXPECT_THROW(parse_machine("mesh:2x2,eager_limit=big"), UsageError);
}

// RunOptions::eager_limit overrides the machine's for one run (the CLI's --eager-limit).
TEST(Rendezvous, RunOptionOverridesTheMachine) {
  const Machine m = rdv_machine("mesh:1x2", -1);
  const auto program = [](Proc& p) {
    std::vector<std::byte> buf(kLarge);
    if (p.rank() == 0) p.send(1, 0, buf);
    else p.recv(0, 0, buf);
  };
  RunOptions o;
  EXPECT_EQ(run(m, program, o).stats.messages, 1u);
  o.eager_limit = 100;
  EXPECT_EQ(run(m, program, o).stats.messages, 3u);
  EXPECT_EQ(run(m, program, o).makespan, legs(Model{rdv_machine("mesh:1x2", 100)}, kLarge, 0).received);
  o.eager_limit = -7;
  EXPECT_THROW(run(m, program, o), UsageError);
}

void exchange(const Machine& m, std::size_t size) {
  run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(size, p.rank());
    std::vector<std::byte> in(size);
    const int peer = 1 - p.rank();
    p.send(peer, 0, out);
    p.recv(peer, 0, in);
    EXPECT_EQ(in, ts_test::bytes(size, peer));
  });
}

// The unsafe exchange: both ranks send first. Eager it completes (the messages wait in the
// receivers' memory); above the eager limit both senders wait for a receive that is never posted,
// an application deadlock whose report names both sends.
TEST(Rendezvous, UnsafeExchangeDeadlocksAboveTheEagerLimit) {
  EXPECT_NO_THROW(exchange(rdv_machine("mesh:1x2", -1), kLarge));
  EXPECT_NO_THROW(exchange(rdv_machine("mesh:1x2", 150), kLarge));
  try {
    exchange(rdv_machine("mesh:1x2", 100), kLarge);
    ADD_FAILURE() << "no deadlock";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("application deadlock"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 0 blocked"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1 blocked"), std::string::npos) << what;
    EXPECT_NE(what.find("to rank 1 (150 bytes, rendezvous: waiting for the receiver to post a matching receive)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("to rank 0 (150 bytes, rendezvous"), std::string::npos) << what;
    EXPECT_NE(what.find("request to send message"), std::string::npos) << what;
  }
}

// The same exchange made safe with non-blocking sends completes, data intact.
TEST(Rendezvous, NonBlockingExchangeCompletes) {
  const Machine m = rdv_machine("mesh:1x2", 100);
  run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(kLarge, p.rank());
    std::vector<std::byte> in(kLarge);
    const int peer = 1 - p.rank();
    Request s = p.isend(peer, 0, out);
    p.recv(peer, 0, in);
    p.wait(s);
    EXPECT_EQ(in, ts_test::bytes(kLarge, peer));
  });
}

// A full buffer turns an eager message into a rendezvous. buffer=100: M1 (60 B) reserves 60 B at
// node 1 when sent; M2 (60 B), sent when M1's send returns, does not fit (120 > 100) and sends an
// RTS instead. Node 1 receives M1 at `post_at`, then posts M2's receive, which meets the waiting RTS.
TEST(Rendezvous, FullBufferFallsBackToRendezvous) {
  Machine m = rdv_machine("mesh:1x2", std::numeric_limits<std::int64_t>::max());
  m.net.recv_buffer = 100;
  const Model x{m};
  const Time post_at = 100'000;
  const Time h1 = x.handed(0, kSmall);
  const Time a1 = x.arrival_cf(h1, 1, kSmall);
  const Time m2_sent = x.send_return_cf(h1, 1, kSmall);
  const Time rts_arrives = x.arrival_cf(x.handed(m2_sent, 0), 1, 0);
  const Time r1 = x.recv_done(post_at, a1, kSmall);
  ASSERT_GT(r1, rts_arrives);
  const Time cts_handed = r1 + x.recv_cost(0) + x.send_cost(0);
  const Time data_handed = x.arrival_cf(cts_handed, 1, 0) + x.recv_cost(0) + x.send_cost(kSmall);
  const Time a2 = x.arrival_cf(data_handed, 1, kSmall);
  Status s1, s2;
  Time after = -1, sender_after = -1;
  const RunResult res = run(m, [&](Proc& p) {
    const auto out = ts_test::bytes(kSmall);
    std::vector<std::byte> in(kSmall);
    if (p.rank() == 0) {
      p.send(1, 0, out);
      p.send(1, 0, out);
      sender_after = p.now();
    } else {
      p.compute(post_at);
      s1 = p.recv(0, 0, in);
      s2 = p.recv(0, 0, in);
      after = p.now();
    }
  });
  EXPECT_EQ(s1.arrival, a1);
  EXPECT_EQ(s2.arrival, a2);
  EXPECT_EQ(after, x.recv_done(cts_handed, a2, kSmall));
  EXPECT_EQ(sender_after, x.send_return_cf(data_handed, 1, kSmall));
  EXPECT_EQ(res.stats.messages, 4u);  // M1, RTS, CTS, M2
}

// An active message is handled on arrival and takes no buffer space, so its handler's end frees
// none. buffer=100: after a 60-byte active message has been handled, M1 (60 B) still takes 60 B and
// M2 (60 B) still does not fit and goes by rendezvous (request, clear to send, data): one message
// more than without the active message, not one less (which freeing its 60 B would give).
TEST(Rendezvous, AnActiveMessageTakesNoBufferSpace) {
  Machine m = rdv_machine("mesh:1x2", std::numeric_limits<std::int64_t>::max());
  m.net.recv_buffer = 100;
  const auto program = [](bool active_message) {
    return [active_message](Proc& p) {
      const auto out = ts_test::bytes(kSmall);
      std::vector<std::byte> in(kSmall);
      p.am_register(7, [](AmContext&) {});
      p.barrier();
      if (p.rank() == 0) {
        const std::array<std::int64_t, 1> args{1};
        if (active_message) p.am_send(1, 7, args, out);
        p.compute(100'000);  // the handler has ended
        p.send(1, 0, out);
        p.send(1, 0, out);
      } else {
        p.compute(1'000'000);
        p.recv(0, 0, in);
        p.recv(0, 0, in);
      }
    };
  };
  const RunResult without = run(m, program(false));
  const RunResult with = run(m, program(true));
  Machine roomy = m;
  roomy.net.recv_buffer = 2 * kSmall;
  const RunResult both_fit = run(roomy, program(false));
  EXPECT_EQ(without.stats.messages, both_fit.stats.messages + 2);  // M2 by rendezvous
  EXPECT_EQ(with.stats.messages, without.stats.messages + 1);
}

// The message-dependent deadlock of ReceiveBuffers (mesh:1x4, a worm waiting for buffer space
// holding the link an admitted message needs) cannot happen under flow control: the senders
// reserve before sending, so no worm waits for buffer space in the network, and the run completes.
TEST(Rendezvous, BufferDeadlockOfTheNetworkBecomesAWait) {
  for (std::int64_t limit : {std::int64_t{-1}, std::numeric_limits<std::int64_t>::max()}) {
    Machine m = ts_test::prime_machine("mesh:1x4");
    m.net.recv_buffer = 150;
    m.net.eager_limit = limit;
    const std::size_t s1 = 104, s2 = 60;
    const auto out = ts_test::bytes(s1);
    std::vector<std::byte> a(s1), b(s1);
    auto program = [&](Proc& p) {
      if (p.rank() == 2) p.send(3, 0, out);
      if (p.rank() == 1) {
        p.compute(1200);
        p.send(3, 0, std::span(out).first(s2));
      }
      if (p.rank() == 3) {
        p.compute(200'000);
        p.recv(2, 0, a);
        p.recv(1, 0, b);
      }
    };
    if (limit < 0) {
      EXPECT_THROW(run(m, program), RunError);
    } else {
      const RunResult r = run(m, program);
      EXPECT_EQ(r.stats.messages, 4u);  // M1 eager; M2 by rendezvous: RTS, CTS, data
      EXPECT_EQ(a, out);
      EXPECT_EQ(std::span(b).first(s2).size(), s2);
      EXPECT_TRUE(std::equal(b.begin(), b.begin() + s2, out.begin()));
    }
  }
}

}  // namespace
