// Payload bytes move from the send buffer into the receive buffer at the match (docs/model.md 1.5):
// the sender's buffer is read until its send completes, and only a send that completes
// (or whose request is dropped) before the match makes the message copy it. What the receiver
// gets is what the buffer held when the send was posted, whichever way the match comes, and the
// virtual times do not depend on it.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "touchstone/touchstone.hpp"

using namespace touchstone;

namespace {

constexpr std::size_t kBytes = 3000;  // several packets

std::vector<std::byte> filled(std::byte b) { return std::vector<std::byte>(kBytes, b); }

// Rank 0 sends a buffer of 0x11 bytes to rank 1 in the way `how` says and then overwrites the
// buffer with 0x99 as soon as it may; rank 1 posts its receive only after `post_late` of
// computation (so the message is unexpected) or at once. Returns what rank 1 received (every
// byte must be 0x11) and the run's makespan and trace hash.
struct Outcome {
  std::vector<std::byte> got;
  Time makespan = 0;
  std::uint64_t hash = 0;
};
enum class How { blocking, isend_wait, isend_dropped, synchronous };

Outcome exchange(How how, Time post_late, bool phantom = false) {
  Outcome out;
  out.got.assign(kBytes, std::byte{0});
  RunOptions o;
  o.phantom_payloads = phantom;
  const RunResult r = run(parse_machine("mesh:1x4"), [&](Proc& p) {
    if (p.rank() == 0) {
      std::vector<std::byte> buf = filled(std::byte{0x11});
      switch (how) {
        case How::blocking: p.send(3, 7, buf); break;
        case How::isend_wait: {
          Request r = p.isend(3, 7, buf);
          p.wait(r);
          break;
        }
        case How::isend_dropped: {
          Request r = p.isend(3, 7, buf);
          break;  // its request goes out of scope uncompleted: the buffer may change at once
        }
        case How::synchronous: {
          Request r = p.issend(3, 7, buf);
          p.wait(r);
          break;
        }
      }
      std::fill(buf.begin(), buf.end(), std::byte{0x99});  // the program may reuse its buffer now
      buf = std::vector<std::byte>();                      // or free it
    } else if (p.rank() == 3) {
      p.compute(post_late);
      p.recv(0, 7, out.got);
    }
  }, o);
  out.makespan = r.makespan;
  out.hash = r.trace_hash;
  return out;
}

TEST(Payloads, TheReceiverGetsWhatTheSendBufferHeldWhenItWasSent) {
  for (How how : {How::blocking, How::isend_wait, How::isend_dropped, How::synchronous})
    for (Time late : {Time{0}, Time{10'000'000'000}}) {  // posted first, or 10 ms after the arrival
      const Outcome o = exchange(how, late);
      EXPECT_EQ(o.got, filled(std::byte{0x11})) << "case " << static_cast<int>(how) << ", posted after " << late;
      // The copy (or its absence) is host work only: the same times and hash as a phantom run.
      const Outcome ph = exchange(how, late, true);
      EXPECT_EQ(o.makespan, ph.makespan);
      EXPECT_EQ(o.hash, ph.hash);
    }
}

// A receive posted before the message arrives holds the data from the match on, before its wait
// returns; a receive completed by test or waitany gets the same bytes.
TEST(Payloads, AReceiveBufferHoldsTheDataFromTheMatch) {
  std::vector<std::byte> got(kBytes), got2(kBytes);
  bool seen_before_wait = false;
  run(parse_machine("mesh:1x2"), [&](Proc& p) {
    std::vector<std::byte> buf = filled(std::byte{0x5a});
    if (p.rank() == 0) {
      p.send(1, 0, buf);
      p.send(1, 1, buf);
      return;
    }
    Request a = p.irecv(0, 0, got), b = p.irecv(0, 1, got2);
    p.compute(1'000'000'000);  // both have arrived by then (1 ms)
    std::array<Request, 1> one{std::move(b)};
    p.waitany(one);  // lets the event loop deliver everything up to this clock
    seen_before_wait = got == filled(std::byte{0x5a});
    p.wait(a);
  });
  EXPECT_TRUE(seen_before_wait);
  EXPECT_EQ(got, filled(std::byte{0x5a}));
  EXPECT_EQ(got2, filled(std::byte{0x5a}));
}

// A message longer than a truncating receive's buffer fills the buffer; for a plain receive it is a
// usage error and the buffer is not written.
TEST(Payloads, TruncatingAndTooShortReceives) {
  std::vector<std::byte> small(100, std::byte{0}), plain(100, std::byte{0});
  Status st;
  run(parse_machine("mesh:1x2"), [&](Proc& p) {
    std::vector<std::byte> buf = filled(std::byte{0x33});
    if (p.rank() == 0) return p.send(1, 0, buf);
    Request r = p.irecv_truncating(0, 0, small);
    st = p.wait(r);
  });
  EXPECT_TRUE(st.truncated);
  EXPECT_EQ(st.size, kBytes);
  EXPECT_EQ(small, std::vector<std::byte>(100, std::byte{0x33}));
  EXPECT_THROW(run(parse_machine("mesh:1x2"), [&](Proc& p) {
    std::vector<std::byte> buf = filled(std::byte{0x33});
    if (p.rank() == 0) return p.send(1, 0, buf);
    p.recv(0, 0, plain);
  }), RunUsageError);
  EXPECT_EQ(plain, std::vector<std::byte>(100, std::byte{0}));
}

}  // namespace
