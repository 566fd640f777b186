// The runtime's support for the MPI interface (mpi/): synchronous sends (Proc::issend), receives
// that may truncate (Proc::irecv_truncating) and Proc::current(), with exact virtual times from
// the model's formulas (support/model.hpp) and under both executions.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

RunOptions with(Execution e, std::uint64_t perturb = 0) {
  RunOptions o;
  o.execution = e;
  o.perturb = perturb;
  return o;
}

// The receiver posts its receive at `post`, late or early. The match (the arrival when the receive
// was posted first, the posting time when the message waited) sends a 0-byte acknowledgement back,
// whose set-up the receiver pays; the synchronous send completes at the later of its last packet
// leaving (h + W b) and the acknowledgement's arrival plus the sender's cost of taking it.
TEST(SynchronousSend, CompletesAtTheLaterOfLeavingAndItsAcknowledgement) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const Model x{m};
  constexpr std::size_t size = 150;
  const int d = 2;  // rank 0 to rank 2
  const Time h = x.handed(0, size), left = x.send_return_cf(h, d, size), arrival = x.arrival_cf(h, d, size);
  for (Execution e : {Execution::fibers, Execution::threads})
    for (const Time post : {Time{0}, arrival + 5000}) {
      Time done = -1, recv_done = -1;
      std::uint64_t hash[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        const RunResult r = run(m, [&](Proc& p) {
          if (p.rank() == 0) {
            const auto data = ts_test::bytes(size, 1);
            Request q = p.issend(2, 4, data);
            p.wait(q);
            done = p.now();
          } else if (p.rank() == 2) {
            std::vector<std::byte> in(size);
            p.compute(post);
            p.recv(0, 4, in);
            recv_done = p.now();
            EXPECT_EQ(in, ts_test::bytes(size, 1));
          }
        }, with(e, k * 11));
        hash[k] = r.trace_hash;
      }
      const Time match = post == 0 ? arrival : post;
      const Time acknowledged = x.arrival_cf(x.handed(match, 0), d, 0) + x.recv_cost(0);
      EXPECT_EQ(done, std::max(left, acknowledged)) << "post " << post;
      EXPECT_EQ(recv_done, x.recv_done(post, arrival, size) + x.send_cost(0));
      EXPECT_EQ(hash[0], hash[1]);
    }
}

// An ordinary send to the same late receiver returns as soon as its last packet has left.
TEST(SynchronousSend, AnOrdinarySendDoesNotWaitForTheMatch) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Model x{m};
  Time done = -1;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(10);
    if (p.rank() == 0) {
      p.send(1, 0, buf);
      done = p.now();
    } else {
      p.compute(1'000'000);
      p.recv(0, 0, buf);
    }
  });
  EXPECT_EQ(done, x.send_return_cf(x.handed(0, 10), 1, 10));
}

// test() on a synchronous send stays false until the match; a dropped synchronous request is not
// an error and its message is still delivered.
TEST(SynchronousSend, TestWaitsForTheMatchAndADroppedRequestIsHarmless) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Time post = 2'000'000;
  std::vector<int> polls;
  int got = -1;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(8, std::byte{9});
    if (p.rank() == 0) {
      Request q = p.issend(1, 0, buf);
      int n = 0;
      while (!p.test(q)) {
        ++n;
        p.compute(100'000);
      }
      polls.push_back(n);
      EXPECT_GE(p.now(), post);
      { Request dropped = p.issend(1, 1, buf); }
    } else {
      p.compute(post);
      p.recv(0, 0, buf);
      std::vector<std::byte> in(8);
      p.recv(0, 1, in);
      got = static_cast<int>(in[0]);
    }
  });
  ASSERT_EQ(polls.size(), 1u);
  EXPECT_GE(polls[0], 19);  // 20 polls of 0.1 us cover the 2 us before the match, less the first
  EXPECT_EQ(got, 9);
}

// A message longer than a truncating receive's buffer fills the buffer, leaves the rest of the
// caller's memory alone, and reports its full size; the receiver pays for the whole message.
TEST(TruncatingReceive, FillsTheBufferAndReportsTheFullSize) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const Model x{m};
  constexpr std::size_t size = 100, cap = 40;
  for (Execution e : {Execution::fibers, Execution::threads}) {
    Status st;
    std::vector<std::byte> mem(cap + 8, std::byte{0xee});
    Time t = -1;
    run(m, [&](Proc& p) {
      if (p.rank() == 0) {
        p.send(1, 3, ts_test::bytes(size, 2));
      } else {
        Request q = p.irecv_truncating(0, 3, std::span(mem).first(cap));
        st = p.wait(q);
        t = p.now();
      }
    }, with(e));
    EXPECT_TRUE(st.truncated);
    EXPECT_EQ(st.size, size);
    const auto want = ts_test::bytes(size, 2);
    EXPECT_TRUE(std::equal(mem.begin(), mem.begin() + cap, want.begin()));
    EXPECT_TRUE(std::all_of(mem.begin() + cap, mem.end(), [](std::byte b) { return b == std::byte{0xee}; }));
    EXPECT_EQ(t, x.recv_done(0, x.arrival_cf(x.handed(0, size), 1, size), size));
  }
}

// A message that fits is not truncated; an ordinary receive of a longer message stays an error.
TEST(TruncatingReceive, FittingMessagesAreNotTruncatedAndOrdinaryReceivesStillRefuse) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  Status st;
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(16);
    if (p.rank() == 0) p.send(1, 0, std::span(buf).first(16));
    else st = p.recv(0, 0, buf);
  });
  EXPECT_FALSE(st.truncated);
  EXPECT_EQ(st.size, 16u);
  EXPECT_THROW(run(m, [&](Proc& p) {
                 std::vector<std::byte> buf(16);
                 if (p.rank() == 0) p.send(1, 0, buf);
                 else p.recv(0, 0, std::span(buf).first(8));
               }),
               RunError);
}

// Proc::current() is the running VP's Proc, under fibers and threads, and nullptr outside a run.
TEST(CurrentProc, IsTheRunningVpsProc) {
  EXPECT_EQ(Proc::current(), nullptr);
  const Machine m = ts_test::prime_machine("mesh:2x3");
  for (Execution e : {Execution::fibers, Execution::threads}) {
    std::vector<int> same(6, 0);
    run(m, [&](Proc& p) {
      for (int i = 0; i < 3; ++i) {
        same[static_cast<std::size_t>(p.rank())] += Proc::current() == &p;
        p.barrier();  // every VP switches away and back
      }
    }, with(e, 5));
    for (int r = 0; r < 6; ++r) EXPECT_EQ(same[static_cast<std::size_t>(r)], 3) << "rank " << r;
    EXPECT_EQ(Proc::current(), nullptr);
  }
}

// RunOptions::on_vp_pause runs on the pausing VP's own thread (its Proc is current) each time it
// blocks and once when it ends; it changes nothing in the run.
TEST(VpPauseHook, RunsOnThePausingVpAtEveryBlockAndAtTheEnd) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  for (Execution e : {Execution::fibers, Execution::threads}) {
    auto program = [](Proc& p) {
      p.barrier();
      std::vector<std::byte> b(4);
      if (p.rank() == 0) p.send(2, 0, b);
      if (p.rank() == 2) p.recv(0, 0, b);
    };
    const RunResult plain = run(m, program, with(e));
    std::vector<int> calls(3, 0), on_own(3, 0);
    RunOptions o = with(e);
    o.on_vp_pause = [&](int rank) {
      ++calls[static_cast<std::size_t>(rank)];
      on_own[static_cast<std::size_t>(rank)] += Proc::current() && Proc::current()->rank() == rank;
    };
    const RunResult hooked = run(m, program, o);
    EXPECT_EQ(hooked.trace_hash, plain.trace_hash);
    EXPECT_EQ(hooked.makespan, plain.makespan);
    for (int r = 0; r < 3; ++r) {
      EXPECT_GE(calls[static_cast<std::size_t>(r)], 2) << "rank " << r;  // the barrier, the end
      EXPECT_EQ(on_own[static_cast<std::size_t>(r)], calls[static_cast<std::size_t>(r)]) << "rank " << r;
    }
  }
}

}  // namespace
