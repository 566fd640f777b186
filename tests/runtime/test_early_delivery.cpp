// Copies made when the match is known (docs/parallel.md): a message whose receive is posted,
// waited for and names its source, with no message of the same pair ahead of it that the receive
// also takes, has its bytes copied into the receive buffer before it arrives, beside the event
// loop on more than one host core. Every test runs fibers on 1, 2 and 4 host cores, perturbed too,
// and on threads, checks the same trace hash, times and statistics, the bytes received, and how
// many messages were delivered so (RunResult::delivered_early, decided in the sequential order: the
// same on every host). Messages of 8 KiB: from 4 KiB on they are fixed, and on several host cores
// the copying thread makes their copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "touchstone/error.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

constexpr std::size_t kSize = 8192;

// What one rank received, message by message, in one run.
struct Received {
  std::vector<std::vector<std::byte>> messages;
  int first_tag = -1;
  bool cancelled = false;
};

// Runs `program` every way (ts_test::same_run_every_way); each run must deliver `early` messages
// before their arrival and leave `got` as `expected`.
void same_every_way(const Machine& m, const Program& program, std::uint64_t early, Received& got,
                    const Received& expected) {
  const auto results = ts_test::same_run_every_way(
      m, program, [&] { got = Received{}; },
      [&] {
        EXPECT_EQ(got.messages, expected.messages);
        EXPECT_EQ(got.first_tag, expected.first_tag);
        EXPECT_EQ(got.cancelled, expected.cancelled);
      });
  for (const RunResult& r : results) EXPECT_EQ(r.delivered_early, early);
}

// Rank 0's part of the tests of a buffer reused: sends bytes of pattern 5 to rank 2 (tag 0), then,
// once that send has completed, writes pattern 9 into the same buffer and sends it too (tag 1).
void send_reusing_the_buffer(Proc& p) {
  std::vector<std::byte> data = ts_test::bytes(kSize, 5);
  p.send(2, 0, data);
  const std::vector<std::byte> nine = ts_test::bytes(kSize, 9);
  std::copy(nine.begin(), nine.end(), data.begin());
  p.send(2, 1, data);
}

// Runs `program` every kParallelWays way: each run must end in the RunError that reports a receive
// request let go, with `report` in its text.
void expect_let_go_reported(const Machine& m, const Program& program, const std::string& report) {
  for (const ts_test::HostConfig& w : ts_test::kParallelWays) {
    SCOPED_TRACE(ts_test::describe(w));
    try {
      run(m, program, ts_test::every_parallel_turn(w));
      ADD_FAILURE() << "the receive let go was not reported";
    } catch (const RunError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(report), std::string::npos) << what;
    }
  }
}

}  // namespace

// Rank 2 waits for rank 0's message from its first turn on, while the message is on its way: the
// match is certain there, and the bytes go into rank 2's buffer at once. Rank 0's send completes
// when its last packet has left, long before the message arrives two hops away; rank 0 then
// writes new bytes into the same buffer and sends them too, which rank 2 again waits for before
// they arrive. Rank 2 gets each message's bytes as sent: neither message kept a copy of its own
// (the first was the one that needed it, its send complete before its arrival).
TEST(EarlyDelivery, ABufferReusedAfterItsSendCompletesLeavesTheBytesSent) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  Received got;
  const Program program = [&](Proc& p) {
    if (p.rank() == 0) send_reusing_the_buffer(p);
    if (p.rank() == 2) {
      std::vector<std::byte> in(kSize);
      for (int tag : {0, 1}) {
        p.recv(0, tag, in);
        got.messages.push_back(in);
      }
    }
  };
  same_every_way(m, program, 2, got, {{ts_test::bytes(kSize, 5), ts_test::bytes(kSize, 9)}});
  // Phantom payloads have no bytes to move.
  RunOptions phantom;
  phantom.phantom_payloads = true;
  const Program quiet = [](Proc& p) {
    std::vector<std::byte> buf(kSize);
    if (p.rank() == 0) p.send(2, 0, buf);
    if (p.rank() == 2) p.recv(0, 0, buf);
  };
  EXPECT_EQ(run(m, quiet, phantom).delivered_early, 0u);
}

// Rank 1 waits for any tag from rank 0 when rank 0, told so by a message, sends two. At the first
// send the match is certain; at the second the receive would take it too, but the first message,
// on its way ahead of it, takes the receive: it is not fixed there (were it, its bytes would
// overwrite the first's and the run would end in an internal error), but at rank 1's next wait.
// Rank 1's message to rank 0 is too short to be fixed (Copier::kHandOverFrom).
TEST(EarlyDelivery, AMessageBehindOneThatTakesTheSameReceiveIsNotFixedToIt) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  Received got;
  const Program program = [&](Proc& p) {
    std::vector<std::byte> ready(8);
    if (p.rank() == 0) {
      p.recv(1, 99, ready);  // rank 1 waits already
      const std::vector<std::byte> a = ts_test::bytes(kSize, 3), b = ts_test::bytes(kSize, 4);
      Request rq[2] = {p.isend(1, 7, a), p.isend(1, 8, b)};
      p.waitall(rq);
    }
    if (p.rank() == 1) {
      std::vector<std::byte> in(kSize);
      p.send(0, 99, ready);
      got.first_tag = p.recv(0, any_tag, in).tag;
      got.messages.push_back(in);
      p.recv(0, 8, in);
      got.messages.push_back(in);
    }
  };
  same_every_way(m, program, 2, got, {{ts_test::bytes(kSize, 3), ts_test::bytes(kSize, 4)}, 7});
}

// A receive from any source is never fixed: a message sent later from a nearer node could take it
// first. Nor is a receive that its VP posted but does not wait for (it may cancel it): here one
// that is tested until its message is there, and one that is cancelled.
TEST(EarlyDelivery, WildcardAndUnwaitedReceivesAreNotFixed) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  Received got;
  const Program program = [&](Proc& p) {
    if (p.rank() == 0) {
      p.compute(5000);
      p.send(2, 0, ts_test::bytes(kSize, 6));
      p.send(2, 1, ts_test::bytes(kSize, 2));
    }
    if (p.rank() == 2) {
      std::vector<std::byte> in(kSize), other(kSize);
      p.recv(any_source, 0, in);
      got.messages.push_back(in);
      Request never = p.irecv(0, 5, other);  // posted, not waited for
      Request r = p.irecv(0, 1, in);
      while (!p.test(r)) p.compute(1000);
      got.messages.push_back(in);
      got.cancelled = p.cancel(never);
    }
  };
  same_every_way(m, program, 0, got, {{ts_test::bytes(kSize, 6), ts_test::bytes(kSize, 2)}, -1, true});
}

// With flow control, a message over the eager limit goes by rendezvous (docs/model.md 2.16): its
// data leaves only once the receiver's clear to send is back, and its receive is known from the
// moment the request to send matched it, so its bytes go into the receive buffer from there on.
// Rank 2 posts its receives before the requests arrive (the first) and after (the second); rank 0
// overwrites its buffer once the first send has completed, then sends it again. Both messages are
// delivered early, each with its bytes as sent.
TEST(EarlyDelivery, ARendezvousDataIsItsReceivesFromTheClearToSendOn) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.net.eager_limit = 1024;
  Received got;
  const Program program = [&](Proc& p) {
    if (p.rank() == 0) send_reusing_the_buffer(p);
    if (p.rank() == 2) {
      std::vector<std::byte> in(kSize);
      Request first = p.irecv(0, 0, in);
      p.compute(50'000'000);  // the second request to send waits for its receive meanwhile
      p.wait(first);
      got.messages.push_back(in);
      p.recv(0, 1, in);
      got.messages.push_back(in);
    }
  };
  same_every_way(m, program, 2, got, {{ts_test::bytes(kSize, 5), ts_test::bytes(kSize, 9)}});
}

// A receive request let go (an error the run reports at its end) while its rendezvous data is on
// its way: the program frees the buffer at once, and the copy into it was made before (under
// AddressSanitizer a copy made later would write freed memory).
TEST(EarlyDelivery, AReceiveLetGoWhileItsRendezvousDataIsOnItsWayIsNotWrittenAfter) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.net.eager_limit = 1024;
  const Program program = [](Proc& p) {
    if (p.rank() == 0) p.send(2, 0, ts_test::bytes(kSize, 5));
    if (p.rank() == 2) {
      auto in = std::make_unique<std::vector<std::byte>>(kSize);
      {
        Request r = p.irecv(0, 0, *in);
        // The request to send arrives at 1,295 ps and matches it; the data leaves rank 0 about
        // 110,000 ps later. test() lets the event loop reach 20,000 ps: the data is on its way.
        p.compute(20'000);
        EXPECT_FALSE(p.test(r));
      }
      in.reset();
      p.compute(50'000'000);
    }
  };
  expect_let_go_reported(m, program,
                         "rank 2: a receive request (recv(source=0, tag=0), waiting for the data of rendezvous "
                         "message #0) was destroyed without being completed");
}

// A message that arrives before its receive is posted is matched, and copied, as the receive is
// posted; while its sender has not completed the send, the message still reads the sender's buffer,
// and the copy is made beside the event loop (Engine::posted_beside), waited for where the wait
// that completes the receive returns. Rank 2 posts its receives late, completes one with a wait
// right away and the other with its own send in one waitall; rank 0 overwrites its buffers as soon
// as its sends have completed. Rank 2 gets the bytes as sent (under ThreadSanitizer, a copy not waited for
// before either program touches those buffers is a race). Such messages are not delivered early.
TEST(EarlyDelivery, AMessageHereBeforeItsReceiveStillReadingItsSendersBufferLeavesTheBytesSent) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  Received got;
  const Program program = [&](Proc& p) {
    std::vector<std::byte> token(8);
    if (p.rank() == 0) {
      std::vector<std::byte> data = ts_test::bytes(kSize, 5), more = ts_test::bytes(kSize, 7);
      Request a = p.isend(2, 0, data), b = p.isend(2, 1, more);
      p.recv(2, 99, token);  // rank 2 has posted both receives
      p.wait(a);
      p.wait(b);
      const std::vector<std::byte> nine = ts_test::bytes(kSize, 9);
      std::copy(nine.begin(), nine.end(), data.begin());
      std::copy(nine.begin(), nine.end(), more.begin());
    }
    if (p.rank() == 2) {
      std::vector<std::byte> in(kSize), also(kSize);
      p.probe(0, 1);  // both messages are here (a pair's messages arrive in order) before their receives
      Request second = p.irecv(0, 1, also);
      p.wait(second);  // completes at once, in the same turn
      got.messages.push_back(also);
      Request r[2] = {p.irecv(0, 0, in), p.isend(0, 99, token)};
      p.waitall(r);  // completes the receive, then waits for the send
      got.messages.push_back(in);
    }
  };
  same_every_way(m, program, 0, got, {{ts_test::bytes(kSize, 7), ts_test::bytes(kSize, 5)}});
}

// The same with a receive matched as it was posted, its copy handed to the copying thread: the
// request let go and the buffer freed at once find the copy made (under ThreadSanitizer a copy
// made later is a race with the free).
TEST(EarlyDelivery, AReceiveLetGoRightAfterItMatchedAsItWasPostedIsNotWrittenAfter) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Program program = [](Proc& p) {
    std::vector<std::byte> token(8);
    if (p.rank() == 0) {
      const std::vector<std::byte> data = ts_test::bytes(kSize, 5);
      Request r = p.isend(2, 0, data);
      p.recv(2, 99, token);  // the send stays incomplete, its buffer lent, until rank 2 has let go
      p.wait(r);
    }
    if (p.rank() == 2) {
      auto in = std::make_unique<std::vector<std::byte>>(kSize);
      p.probe(0, 0);
      { Request r = p.irecv(0, 0, *in); }
      in.reset();
      p.send(0, 99, token);
    }
  };
  expect_let_go_reported(m, program,
                         "rank 2: a receive request (recv(source=0, tag=0)) was destroyed without being completed");
}
