// Active messages and remote atomics (docs/model.md 7), with exact virtual times
// computed by hand on cm5:32 from the contention-free formula (tests/support/model.hpp):
//   arrival = handed + (d+1)*t_hop + W*b   (t_hop = 100 ns; b = 50 ns/B inside a cluster of 4)
// One argument word is 8 bytes: one packet of 8 + 4 header bytes, W = 12 B, 600 ns. Between
// ranks 0 and 1 (d = 2) a one-word message arrives C_send + 300 + 600 ns after it is sent.
// One round trip = request + handler + reply:
//   request handed at 1600, arrives 2500; handler: C_recv 1700 -> 4200, reply C_send 1600 -> 5800;
//   reply arrives 5800 + 900 = 6700; the requester receives it: + C_recv 1700 = 8400 ns.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

const Machine& cm5() {
  static const Machine m = parse_machine("cm5:32");
  return m;
}

TEST(ActiveMessages, TestAndSetRoundTripExactTimes) {
  std::vector<std::int64_t> old;
  Time t1 = 0, t2 = 0;
  const RunResult r = run(cm5(), [&](Proc& p) {
    if (p.rank() == 1) p.register_word(5);
    if (p.rank() != 0) return;
    old.push_back(p.test_and_set(1, 5));
    t1 = p.now();
    old.push_back(p.test_and_set(1, 5));
    t2 = p.now();
  });
  EXPECT_EQ(old, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(t1, nanoseconds(8400));
  EXPECT_EQ(t2, nanoseconds(2 * 8400));
  // Rank 1 ended its program at 0; each handler is charged to its CPU: the second request
  // arrives at 8400 + 2500 and its handler ends 1700 + 1600 later.
  EXPECT_EQ(r.finish_time[1], nanoseconds(8400 + 2500 + 3300));
  EXPECT_EQ(r.stats.messages, 4u);
}

TEST(ActiveMessages, AtomicsValuesNonBlocking) {
  std::vector<std::int64_t> got;
  std::int64_t final_word = 0;
  Time done = 0;
  run(cm5(), [&](Proc& p) {
    if (p.rank() == 1) p.register_word(0, 10);
    if (p.rank() != 0) return;
    // Issued back to back: each request pays its own 1.6 us send overhead.
    AmFuture a = p.ifetch_add(1, 0, 5);         // 10 -> 15
    AmFuture b = p.iswap(1, 0, 7);              // 15 -> 7
    AmFuture c = p.icompare_exchange(1, 0, 7, 9);  // 7 -> 9
    AmFuture d = p.icompare_exchange(1, 0, 7, 100);  // 9: no change
    got = {p.atomic_wait(a), p.atomic_wait(b), p.atomic_wait(c), p.atomic_wait(d)};
    final_word = p.fetch_add(1, 0, 0);
    done = p.now();
  });
  EXPECT_EQ(got, (std::vector<std::int64_t>{10, 15, 7, 9}));
  EXPECT_EQ(final_word, 9);
  EXPECT_GT(done, 0);
}

// A user handler with arguments, a payload, compute and a reply with a payload.
// Request: 2 words + 16 bytes = 32 B = 2 packets, W = 40 B; cm5 charges 0.6 us + 1.0 us per packet
// to send and 0.7 us + 1.0 us per packet to receive (docs/model.md 2.14), and a packet leaves as
// soon as it is written (send_overlap): the first at 1600, the last packet's tail arrives at
// 1600 + 300 + 2 x 1000 = 3900; handler: receive 700 + 2 x 1000 -> 6600, compute 1000 -> 7600,
// reply (1 word + 4 bytes = 12 B, one packet, W = 16 B) handed at 7600 + 1600 = 9200, arrives
// 9200 + 300 + 800 = 10300; received at 10300 + 1700 = 12000 ns.
TEST(ActiveMessages, UserHandlerArgsPayloadComputeReply) {
  AmReply got;
  Time done = 0;
  run(cm5(), [&](Proc& p) {
    p.am_register(3, [](AmContext& c) {
      std::int64_t sum = c.args()[0] + c.args()[1];
      for (std::byte b : c.payload()) sum += static_cast<std::int64_t>(b);
      c.compute(nanoseconds(1000));
      const std::array<std::int64_t, 1> out{sum};
      const std::array<std::byte, 4> tail{std::byte{1}, std::byte{2}, std::byte{3}, static_cast<std::byte>(c.source())};
      c.reply(out, tail);
    });
    if (p.rank() != 0) return;
    const std::array<std::int64_t, 2> args{100, 20};
    std::array<std::byte, 16> payload{};
    payload.fill(std::byte{1});
    AmFuture f = p.am_request(1, 3, args, payload, 4);
    got = p.am_wait(f);
    done = p.now();
  });
  EXPECT_EQ(got.source, 1);
  EXPECT_EQ(got.args, (std::vector<std::int64_t>{136}));
  EXPECT_EQ(got.payload, (std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{0}}));
  EXPECT_EQ(got.arrival, nanoseconds(10300));
  EXPECT_EQ(done, nanoseconds(12000));
}

// Handlers at one destination run one after the other on its CPU. fetch_add carries 2 words
// (16 B, one packet, W = 20 B, 1000 ns). Ranks 1 and 2 -> 0 (both d = 2) share the link down to
// 0: the first request arrives at 1600 + 300 + 1000 = 2900, the second streams behind it and
// arrives at 3900. Handlers run 2900..6200 and 6200..9500 (the second waits for the first); the
// one-word replies (900 ns) arrive at 7100 and 10400 and are received at 8800 and 12100 ns.
TEST(ActiveMessages, HandlersSerializeOnTheDestinationCpu) {
  std::array<Time, 3> done{};
  const RunResult r = run(cm5(), [&](Proc& p) {
    if (p.rank() == 0) p.register_word(0);
    if (p.rank() == 1 || p.rank() == 2) {
      p.fetch_add(0, 0, 1);
      done[static_cast<std::size_t>(p.rank())] = p.now();
    }
  });
  EXPECT_EQ(done[1], nanoseconds(8800));
  EXPECT_EQ(done[2], nanoseconds(12100));
  EXPECT_EQ(r.finish_time[0], nanoseconds(9500));
}

// A VP that has run ahead past the handler's start is pushed back by the handler's cost (an
// interrupt): rank 1 computes 100 us and ends; the swap request (2 words, 1000 ns on the wire)
// arrives at 2900 and its handler runs 2900..6200 ns, so rank 1 ends at 100 + 3.3 us. am_test
// polls until the reply is in (arrival 7100 ns) and then completes it.
TEST(ActiveMessages, HandlerInterruptsAVpThatRanAhead) {
  std::int64_t old = -1;
  int polls = 0;
  const RunResult r = run(cm5(), [&](Proc& p) {
    if (p.rank() == 1) {
      p.register_word(0, 42);
      p.compute(microseconds(100));
    }
    if (p.rank() != 0) return;
    AmFuture f = p.iswap(1, 0, 7);
    AmReply reply;
    while (!p.am_test(f, &reply)) ++polls;
    old = reply.args.at(0);
  });
  EXPECT_EQ(old, 42);
  EXPECT_GT(polls, 0);
  EXPECT_EQ(r.finish_time[1], microseconds(100) + nanoseconds(3300));
}

// On cm5 (two channels each way) an active message does not wait for a long message to the same
// node to be injected (docs/model.md 2.6). From the barrier's release, rank 1 streams 1600 bytes
// to rank 0 (100 packets of 20 B, 1.0 us each on the wire; packet k is written by 0.6 + (k+1) us,
// send overlap) while rank 0 test_and_sets a word of rank 1: request handed at 1.6, arrives 2.5,
// handler 2.5..5.8 us. Two channels: the reply's header takes rank 1's second injection channel
// at 5.8, waits for the link, which packet 4 (started 5.6) frees at 5.6 + 0.1 + 1.0 = 6.7, takes
// the down link at 6.8 and a free ejection channel at 6.9, arrives 6.9 + 0.6 = 7.5 and is received
// at 7.5 + 1.7 = 9.2 us. One channel (ports=1): the reply waits for the last packet to leave at
// 100.6 + 1.0 = 101.6, arrives 101.6 + 0.3 + 0.6 = 102.5 and is received at 104.2 us.
TEST(ActiveMessages, ReplyPassesALongMessageToTheSameNode) {
  auto round_trip = [](const char* spec) {
    Time done = 0;
    run(parse_machine(spec), [&](Proc& p) {
      std::vector<std::byte> b(1600);
      if (p.rank() == 1) p.register_word(5);
      p.barrier();  // the word exists before anyone inquires; both start together
      if (p.rank() == 1) {
        Request r = p.isend(0, 0, b);
        p.wait(r);
      } else if (p.rank() == 0) {
        const Time start = p.now();
        EXPECT_EQ(p.test_and_set(1, 5), 0);
        done = p.now() - start;
        p.recv(1, 0, b);
      }
    });
    return done;
  };
  const Time two = round_trip("cm5:32"), one = round_trip("cm5:32,ports=1");
  EXPECT_EQ(two, nanoseconds(9200));
  EXPECT_EQ(one, nanoseconds(104200));
}

// A handler that blocks (or calls the Proc at all) is an error that names the handler.
TEST(ActiveMessages, BlockingHandlerIsAnError) {
  auto attempt = [](auto&& body) {
    try {
      run(cm5(), [&](Proc& p) {
        p.am_register(1, [&p, &body](AmContext&) { body(p); });
        if (p.rank() == 0) {
          AmFuture f = p.am_request(1, 1, {});
          p.am_wait(f);
        }
      });
    } catch (const RunError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string& what : {attempt([](Proc& p) {
                                    std::array<std::byte, 4> b{};
                                    p.recv(0, 0, b);
                                  }),
                                  attempt([](Proc& p) { p.barrier(); }),
                                  attempt([](Proc& p) { p.test_and_set(0, 0); })}) {
    EXPECT_NE(what.find("rank 1's active-message handler 1"), std::string::npos) << what;
    EXPECT_NE(what.find("may not block"), std::string::npos) << what;
  }
}

TEST(ActiveMessages, MisuseIsAnError) {
  auto error = [](const Program& prog) {
    try {
      run(cm5(), prog);
    } catch (const RunError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // No handler registered at the destination.
  EXPECT_NE(error([](Proc& p) {
              if (p.rank() == 0) p.am_send(1, 9, {});
            }).find("rank 1 has no active-message handler 9"),
            std::string::npos);
  // A request whose handler does not reply.
  EXPECT_NE(error([](Proc& p) {
              p.am_register(2, [](AmContext&) {});
              if (p.rank() == 0) {
                AmFuture f = p.am_request(1, 2, {});
                p.am_wait(f);
              }
            }).find("without replying"),
            std::string::npos);
  // An atomic on a word the destination never registered.
  EXPECT_NE(error([](Proc& p) {
              if (p.rank() == 0) p.test_and_set(1, 4);
            }).find("rank 1 has no registered word 4"),
            std::string::npos);
  // A future dropped before its reply came: reported at the end of the run, as a dropped receive.
  EXPECT_NE(error([](Proc& p) {
              p.register_word(0);
              if (p.rank() == 0) p.itest_and_set(1, 0);
            }).find("destroyed without being completed"),
            std::string::npos);
  // Too many argument words.
  EXPECT_NE(error([](Proc& p) {
              const std::array<std::int64_t, 9> a{};
              if (p.rank() == 0) p.am_send(1, 0, a);
            }).find("at most 8 argument words"),
            std::string::npos);
}

}  // namespace
