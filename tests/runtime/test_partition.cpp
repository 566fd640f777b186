// One emulation split over several processes (RunOptions::partition; docs/parallel.md, "Several
// processes"), played by threads (support/split_run.hpp): every process must end with the single
// process's run, trace_hash, times and counts included, and a failure in one must end them all.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "algorithms/registry.hpp"
#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "support/split_run.hpp"

using namespace touchstone;

namespace {

RunOptions phantom() {
  RunOptions o;
  o.phantom_payloads = true;
  o.host_cores = 1;
  return o;
}

// A process's result is the single process's, in everything the run decides.
void expect_same_split(const RunResult& r, const RunResult& one) {
  ts_test::expect_same_run(r, one, true);
  EXPECT_EQ(r.sent, one.sent);
  EXPECT_EQ(r.stats.payload_bytes, one.stats.payload_bytes);
}

// Every process's result is the single process's.
void expect_split_runs_same(const Machine& m, const Program& program, const std::vector<int>& parts,
                            RunOptions opts = phantom()) {
  const RunResult one = run(m, program, opts);
  for (const int n : parts) {
    SCOPED_TRACE(::testing::Message() << n << " processes");
    const ts_test::SplitRun split = ts_test::run_split(m, program, opts, n);
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(::testing::Message() << "process " << k);
      if (const auto& f = split.failures[static_cast<std::size_t>(k)]) {
        try {
          std::rethrow_exception(f);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "the split run failed: " << e.what();
        }
        continue;
      }
      expect_same_split(split.results[static_cast<std::size_t>(k)], one);
    }
  }
}

// The text of the error a process's run ended with.
std::string failure_text(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The text of the error the single process's run ends with ("" if it does not fail).
std::string failure_in_one_process(const Machine& m, const Program& program, const RunOptions& opts) {
  try {
    run(m, program, opts);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// Each process k's run ends in an error whose text has want(k).
void expect_processes_fail(const Machine& m, const Program& program, int parts,
                           const std::function<std::string(int k)>& want, RunOptions opts = phantom()) {
  const ts_test::SplitRun split = ts_test::run_split(m, program, opts, parts);
  for (int k = 0; k < parts; ++k) {
    SCOPED_TRACE(::testing::Message() << "process " << k);
    const auto& f = split.failures[static_cast<std::size_t>(k)];
    ASSERT_TRUE(f) << "the run did not fail";
    const std::string what = failure_text(f);
    EXPECT_NE(what.find(want(k)), std::string::npos) << what;
  }
}

// A run that deadlocks: process 0 of the split run reports it as the single process does, word for
// word (its blocked ranks, whichever process runs them, its tasks, the count of finished ranks, the
// waits, the full buffers, the unmatched messages and the trace_hash), and the others say whose
// report it is.
void expect_the_single_processs_deadlock_report(const Machine& m, const Program& program, const std::vector<int>& parts,
                                                RunOptions opts = phantom()) {
  const std::string one = failure_in_one_process(m, program, opts);
  ASSERT_NE(one.find(" finished"), std::string::npos) << "not a deadlock: " << one;
  for (const int n : parts) {
    SCOPED_TRACE(::testing::Message() << n << " processes");
    const ts_test::SplitRun split = ts_test::run_split(m, program, opts, n);
    for (int k = 0; k < n; ++k) {
      const auto& f = split.failures[static_cast<std::size_t>(k)];
      ASSERT_TRUE(f) << "process " << k << ": the run did not fail";
      const std::string what = failure_text(f);
      if (k == 0)
        EXPECT_EQ(what, one);
      else
        EXPECT_TRUE(what.starts_with("process 0 of the split run failed (its report says why)\ntrace_hash "))
            << "process " << k << ": " << what;
    }
  }
}

// Each process's run ends in an error whose text has `what`.
void expect_every_process_fails(const Machine& m, const Program& program, int parts, const std::string& what,
                                RunOptions opts = phantom()) {
  expect_processes_fail(
      m, program, parts, [&](int) { return what; }, opts);
}

void ring(Proc& p) {
  std::vector<std::byte> in(100), out(100);
  const int n = p.size();
  p.sendrecv((p.rank() + 1) % n, 0, out, (p.rank() + n - 1) % n, 0, in);
}

// Every rank sends to every other, long and short messages at once, with computation between: worms
// block each other across the processes' shares of the machine, and receives match any source.
// Rank `who`, if any, gives up before its receive number `at`, just after a send of its own.
// Rank `who` fails before its receive number `at`, just after a send: by default its program throws;
// with `failing_call`, a call that fails (or returns, in a split run that finds the failure later).
void crowded_until(Proc& p, int who, int at, const std::function<void(Proc&)>& failing_call = {}) {
  const int n = p.size(), me = p.rank();
  std::vector<std::byte> buf(700);
  std::vector<Request> reqs;
  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n;
    reqs.push_back(
        p.isend(to, k % 3, std::span<const std::byte>(buf).first(static_cast<std::size_t>((me * 37 + k * 11) % 700))));
  }
  std::vector<std::vector<std::byte>> in(static_cast<std::size_t>(n), std::vector<std::byte>(700));
  for (int k = 1; k < n; ++k) {
    p.compute(static_cast<Time>((me * 13 + k) % 7) * 1000);
    if (me == who && k == at) {
      p.send((me + 3) % n, 0, std::span<const std::byte>(buf).first(24));
      if (!failing_call) throw Error(fmt::format("rank {} gives up", me));
      failing_call(p);
    }
    p.recv(any_source, any_tag, in[static_cast<std::size_t>(k)]);
  }
  p.waitall(reqs);
}
void crowded(Proc& p) { crowded_until(p, -1, 0); }

TEST(Partition, ARingSplitOverProcessesIsTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), ring, {1, 2, 3, 4, 16});
}

TEST(Partition, CrowdedTrafficSplitOverProcessesIsTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), crowded, {2, 3, 4});
  expect_split_runs_same(ts_test::prime_machine("torus:4x4"), crowded, {2, 4});
}

// The processes meet when a VP of any of them may act next (its own events, an arrival, a send's
// end), not once per lookahead: a long message streams between two meetings. On mesh:2x1 (C_send
// = C_recv = 10 us, s = r = 10 ns/B, 40 ns/B links, 100 ns hops, 1024+32-byte packets; the
// lookahead L = C_send = 10 us) rank 0 sends rank 1 one message of B bytes, each rank in its own
// process.
// - Window 1, [0, L): both programs start; rank 0 hands its message over at C_send + B s >= L and
//   waits for it to leave, rank 1 waits in its receive. The processes meet: no VP event is left in
//   either, so the next window has no end until the network calls the engine.
// - B = 16, one packet: the message is handed over at 10.16 us; its send's end is known at its
//   injection, so the window ends 10 us later, past its arrival (10.16 + 2 x 0.1 + 48 x 0.04 =
//   12.28 us); both programs end in it: 2 meetings, the second finding nothing left.
// - B = 100,000, 98 packets: handed over at 1010 us; the last packet's tail leaves the node at 1010
//   + (100,000 + 98 x 32) x 0.04 = 5135.44 us, known when its header reaches the ejection channel
//   (a packet is longer than the path, 3 positions), less than L before that. The window ends
//   there; rank 0's wake-up at 5135.44 us is the next meeting's earliest VP event, and the arrival
//   and both programs' ends fall in the window after it: 3 meetings. With windows a lookahead
//   past the earliest event of any kind, every packet (42.24 us on the wire, more than L) took a
//   meeting of its own: 98 or more.
// The makespan is the message's end-to-end cost (docs/model.md 2.5), C_send + B s + 2 t_hop + (B +
// 98 H) b + C_recv + B r = 10 + 1000 + 0.2 + 4125.44 + 10 + 1000 = 6145.64 us.
TEST(Partition, ProcessesMeetOnlyWhenAVpMayActNext) {
  const Machine m = parse_machine("mesh:2x1");
  for (const auto& [bytes, meetings] : {std::pair<std::size_t, std::uint64_t>{16, 2}, {100'000, 3}}) {
    SCOPED_TRACE(::testing::Message() << bytes << " bytes");
    const Program one_message = [bytes](Proc& p) {
      std::vector<std::byte> buf(bytes);
      if (p.rank() == 0) p.send(1, 0, buf);
      if (p.rank() == 1) p.recv(0, 0, buf);
    };
    expect_split_runs_same(m, one_message, {2});
    const ts_test::SplitRun split = ts_test::run_split(m, one_message, phantom(), 2);
    for (const RunResult& r : split.results) {
      EXPECT_EQ(r.windows, meetings);
      if (bytes == 100'000) {
        EXPECT_EQ(r.makespan, nanoseconds(6'145'640));
      }
    }
  }
  const Program nothing = [](Proc&) {};
  EXPECT_EQ(run(m, nothing, phantom()).windows, 0u);  // one process meets nobody
}

TEST(Partition, MoreProcessesThanRanksLeaveSomeWithoutPrograms) {
  expect_split_runs_same(ts_test::prime_machine("mesh:2x2"), ring, {6});
}

TEST(Partition, ADeadlockAcrossProcessesEndsEveryProcess) {
  const Program deadlock = [](Proc& p) {
    std::vector<std::byte> b(8);
    p.recv((p.rank() + 1) % p.size(), 0, b);
  };
  expect_the_single_processs_deadlock_report(ts_test::prime_machine("mesh:4x4"), deadlock, {2, 3, 4});
  // 128 ranks blocked: the first 64 named, in rank order, whichever processes run them.
  expect_the_single_processs_deadlock_report(ts_test::prime_machine("mesh:16x8"), deadlock, {3});
  // Ranks 0 and 1 wait for each other in process 0; ranks 2 and 3 finish in process 1; and the
  // other way round.
  for (const int first : {0, 2}) {
    const Program pair = [first](Proc& p) {
      std::vector<std::byte> b(8);
      if (p.rank() == first || p.rank() == first + 1) p.recv(2 * first + 1 - p.rank(), 0, b);
    };
    expect_the_single_processs_deadlock_report(ts_test::prime_machine("mesh:1x4"), pair, {2});
  }
  // Tasks that wait, in two processes: each rank's task waits for the next rank's message, which its
  // task never sends, and each rank waits for its own task.
  const Program tasks_wait = [](Proc& p) {
    Request task = p.spawn(p.world(), [&p](const Group&) {
      std::vector<std::byte> b(8);
      p.recv((p.rank() + 1) % p.size(), 7, b);
    });
    p.wait(task);
  };
  expect_the_single_processs_deadlock_report(ts_test::prime_machine("mesh:1x4"), tasks_wait, {2, 4});
}

// The hash of a failed run identifies it: every process's report gives the single process's
// trace_hash and says it is of the run. A deadlock is found at a window's end, after every event. A
// failure inside a window has run on in the other processes: each takes back what it ran past the
// failure in the sequential order (its hash terms, and the clocks its turns, handlers and clears to
// send moved), and numbers and hashes the window's sends made before it.
// `also`, if given, checks each split run's reports (by process) against the single process's.
using FailureCheck = std::function<void(const std::vector<std::string>& split, const std::string& one)>;
void expect_split_failures_same(const Machine& m, const Program& program, const std::vector<int>& parts,
                                RunOptions opts = phantom(), const FailureCheck& also = {}) {
  std::uint64_t one = 0;
  Time at = 0;
  std::uint64_t place = 0;
  std::string one_what;
  try {
    run(m, program, opts);
    FAIL() << "the single process's run did not fail";
  } catch (const RunError& e) {
    ASSERT_FALSE(e.hash_of_shares);
    std::tie(one, at, place, one_what) = std::tuple{e.trace_hash, e.failed_at, e.failed_place, e.what()};
  }
  for (const int n : parts) {
    const ts_test::SplitRun split = ts_test::run_split(m, program, opts, n);
    std::vector<std::string> whats;
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(fmt::format("process {} of {}", k, n));
      try {
        ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "the split run did not fail";
        std::rethrow_exception(split.failures[static_cast<std::size_t>(k)]);
      } catch (const RunError& e) {
        EXPECT_EQ(fmt::format("{:016x}", e.trace_hash), fmt::format("{:016x}", one));
        EXPECT_FALSE(e.hash_of_shares);
        EXPECT_EQ(e.failed_at, at);
        EXPECT_EQ(e.failed_place, place);
        EXPECT_NE(std::string(e.what()).find("(of the run up to the failure)"), std::string::npos) << e.what();
        whats.emplace_back(e.what());
      }
    }
    if (also) also(whats, one_what);
  }
}

TEST(Partition, ADeadlockedSplitRunsHashIsTheSingleProcesss) {
  const Program deadlock = [](Proc& p) {
    std::vector<std::byte> b(8);
    p.send((p.rank() + 5) % p.size(), 0, b);
    p.compute(static_cast<Time>(p.rank()) * 3000);
    p.recv((p.rank() + 1) % p.size(), 1, b);  // never sent: every rank waits
  };
  expect_split_failures_same(ts_test::prime_machine("mesh:4x4"), deadlock, {2, 4});
}

// A message is numbered at the window's end, after its sender began to wait for it: the report of a
// wait for a send names the message as the single process does.
TEST(Partition, AWaitForASendNamesItsMessageAsOneProcessDoes) {
  const Program stuck = [](Proc& p) {
    std::vector<std::byte> b(8);
    p.send((p.rank() + 8) % p.size(), 1, b);  // by rendezvous: it waits for a receive that never comes
  };
  RunOptions o = phantom();
  o.eager_limit = 0;
  const Machine m = ts_test::prime_machine("mesh:4x4");
  const std::string one = failure_in_one_process(m, stuck, o);
  for (int r = 0; r < 16; ++r) {
    const std::size_t at = one.find(fmt::format("rank {} blocked since", r));
    ASSERT_NE(at, std::string::npos) << one;
    EXPECT_NE(one.substr(at, one.find('\n', at) - at).find("send of message #"), std::string::npos) << one;
  }
  expect_the_single_processs_deadlock_report(m, stuck, {2, 4}, o);
}

TEST(Partition, AProgramThatFailsInOneProcessEndsEveryProcess) {
  const Program fails = [](Proc& p) {
    ring(p);
    if (p.rank() == 13) throw std::runtime_error("rank 13 gives up");
    ring(p);
  };
  const ts_test::SplitRun split = ts_test::run_split(ts_test::prime_machine("mesh:4x4"), fails, phantom(), 2);
  for (int k = 0; k < 2; ++k) ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "process " << k;
  try {
    std::rethrow_exception(split.failures[1]);
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("rank 13 gives up"), std::string::npos) << e.what();
  }
  try {
    std::rethrow_exception(split.failures[0]);
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("process 1 of the split run failed"), std::string::npos) << e.what();
  }
}

// A run that ends with messages never received, each in its receiver's process, and receive
// requests dropped in two processes, the later rank first (rank 2 after a receive): the run fails
// in every process, the first one reports what one process reports (the first 20 of the 31
// messages, in rank order, and the drops in the run's order), and the others say whose report it is.
TEST(Partition, WhatARunLeftBehindIsReportedAsOneProcessReportsIt) {
  const Program leaves = [](Proc& p) {
    std::vector<std::byte> b(8);
    for (int tag = 0; tag < 2; ++tag) p.send((p.rank() + 1) % p.size(), tag, b);  // but one never received
    if (p.rank() == 2) p.recv(1, 1, b);
    if (p.rank() == 2 || p.rank() == 13) p.irecv(any_source, 7, b);  // dropped at once: never completed
    p.barrier();
  };
  expect_split_failures_same(
      ts_test::prime_machine("mesh:4x4"), leaves, {2, 3, 4}, phantom(), [](const auto& split, const std::string& one) {
        EXPECT_TRUE(
            one.starts_with("the run finished with 31 message(s) never received:\n  message #15 from 15 to 0, "
                            "tag 0, 8 bytes, arrived t="))
            << one;
        EXPECT_NE(one.find("\n  message #1 from 1 to 2, tag 0,"), std::string::npos) << one;
        EXPECT_EQ(one.find("from 1 to 2, tag 1"), std::string::npos) << one;  // received
        // The 20th shown, and the 21st not.
        EXPECT_NE(one.find("\n  message #9 from 9 to 10, tag 0, 8 bytes, arrived t="), std::string::npos) << one;
        EXPECT_EQ(one.find("from 9 to 10, tag 1"), std::string::npos) << one;
        const auto r13 = one.find("rank 13: a receive request"), r2 = one.find("rank 2: a receive request");
        ASSERT_NE(r2, std::string::npos) << one;
        EXPECT_LT(r13, r2) << one;
        EXPECT_EQ(split[0], one);
        for (std::size_t k = 1; k < split.size(); ++k)
          EXPECT_TRUE(split[k].starts_with("process 0 of the split run failed (its report says why)")) << split[k];
      });
}

// Requests kept past their programs by ranks of two processes, the later rank first: every process
// fails with a usage error, the first one's naming both in rank order, as one process does.
TEST(Partition, RequestsThatOutliveTheirProgramsAreReportedAsOneProcessReportsThem) {
  const Machine m = ts_test::prime_machine("mesh:4x4");
  // Each run's requests and buffers outlive it: a send reads its buffer until it completes.
  const auto keeping = [](std::vector<Request>& kept, std::vector<std::vector<std::byte>>& bufs) -> Program {
    kept.resize(16);
    bufs.assign(16, std::vector<std::byte>(8));
    return [&kept, &bufs](Proc& p) {
      std::vector<std::byte>& b = bufs[static_cast<std::size_t>(p.rank())];
      if (p.rank() == 2) p.send(3, 1, b);
      if (p.rank() == 3) p.recv(2, 1, b);  // rank 3's request comes after rank 12's
      if (p.rank() == 3 || p.rank() == 12) kept[static_cast<std::size_t>(p.rank())] = p.isend(p.rank() + 1, 0, b);
      if (p.rank() == 4 || p.rank() == 13) p.recv(p.rank() - 1, 0, b);
    };
  };
  std::vector<Request> kept;
  std::vector<std::vector<std::byte>> bufs;
  std::string one;
  try {
    run(m, keeping(kept, bufs), phantom());
    FAIL() << "the single process's run did not fail";
  } catch (const RunUsageError& e) {
    one = e.what();
  }
  const auto r3 = one.find("\n  rank 3: send of message #2 to 4"),
             r12 = one.find("\n  rank 12: send of message #1 to 13");
  ASSERT_NE(r3, std::string::npos) << one;
  ASSERT_NE(r12, std::string::npos) << one;
  EXPECT_LT(r3, r12) << one;
  for (const int n : {2, 4}) {
    SCOPED_TRACE(fmt::format("{} processes", n));
    std::vector<Request> kept_split;
    std::vector<std::vector<std::byte>> bufs_split;
    const ts_test::SplitRun split = ts_test::run_split(m, keeping(kept_split, bufs_split), phantom(), n);
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(fmt::format("process {}", k));
      ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]);
      try {
        std::rethrow_exception(split.failures[static_cast<std::size_t>(k)]);
      } catch (const RunUsageError& e) {
        EXPECT_EQ(std::string(e.what()), k == 0 ? one : "process 0 of the split run failed (its report says why)");
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not a usage error: " << e.what();
      }
    }
  }
}

// Ranks 3 and 12 fail at the same instant, each in its own process: one process stops at the first
// in the sequential order (rank 3, the lower at one instant), and so does the split run. Rank 12's
// process, which failed too, says that the other one's failure is the run's; so does every
// process when rank 12 fails first.
TEST(Partition, TheFirstFailureInTheRunsOrderIsTheSplitRunsFailure) {
  const auto fails_at = [](Time three, Time twelve) {
    return [three, twelve](Proc& p) {
      if (p.rank() != 3 && p.rank() != 12) return ring(p);
      // A message to itself: the rank fails in the turn that receives it, 500 ps apart at most
      // (one window: the least send set-up is about 1 ns).
      p.compute(p.rank() == 3 ? three : twelve);
      std::vector<std::byte> out(8), in(8);
      p.sendrecv(p.rank(), 0, out, p.rank(), 0, in);
      throw std::runtime_error(fmt::format("rank {} gives up", p.rank()));
    };
  };
  const Machine m = ts_test::prime_machine("mesh:4x4");
  for (const auto& [three, twelve, first, process] : {std::tuple{microseconds(2), microseconds(2), 3, 0},
                                                      std::tuple{microseconds(2) + 500, microseconds(2), 12, 1}}) {
    std::string one;
    try {
      run(m, fails_at(three, twelve), phantom());
      ADD_FAILURE() << "the run did not fail";
    } catch (const RunError& e) {
      one = e.what();
    }
    const std::string gives_up = fmt::format("rank {} gives up", first);
    ASSERT_NE(one.find(gives_up), std::string::npos) << one;
    const std::string first_line = one.substr(0, one.find('\n'));
    const ts_test::SplitRun split = ts_test::run_split(m, fails_at(three, twelve), phantom(), 2);
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "process " << k;
      const std::string what = failure_text(split.failures[static_cast<std::size_t>(k)]);
      if (k == process) {
        EXPECT_EQ(what.substr(0, what.find('\n')), first_line) << what;
      } else {
        EXPECT_NE(what.find(fmt::format("process {} of the split run failed", process)), std::string::npos) << what;
        EXPECT_EQ(what.find("gives up"), std::string::npos) << what;
      }
    }
  }
}

// A layer's notes (RunOptions::window_notes) reach every other process at every window's end, the
// window in which a process fails included: process 1 fails, and processes 0 and 2 still get each
// other's notes of that window (process 2's came after the failed one's in the swap). The failed
// process gives its notes of that window too (what its ranks did before the failure).
TEST(Partition, EveryWindowsNotesReachTheOthersTheFailuresToo) {
  constexpr int kParts = 3;
  std::array<int, kParts> given{};
  std::array<std::array<int, kParts>, kParts> taken{};  // [receiver][giver]
  const auto fails = [](Proc& p) {
    if (p.rank() != 7) return ring(p);  // rank 7 is process 1's (ranks 5..9 of 16)
    p.compute(microseconds(2));
    std::vector<std::byte> out(8), in(8);
    p.sendrecv(p.rank(), 0, out, p.rank(), 0, in);
    throw std::runtime_error("rank 7 gives up");
  };
  const auto notes = [&](RunOptions& o, int k) {
    o.window_notes = [&given, k] {
      ++given[static_cast<std::size_t>(k)];
      return std::vector<std::byte>{static_cast<std::byte>(k)};
    };
    o.on_window_notes = [&taken, k](int from, std::span<const std::byte> bytes) {
      ASSERT_EQ(bytes.size(), 1u);
      EXPECT_EQ(static_cast<int>(bytes[0]), from);
      ++taken[static_cast<std::size_t>(k)][static_cast<std::size_t>(from)];
    };
  };
  const ts_test::SplitRun split =
      ts_test::run_split(ts_test::prime_machine("mesh:4x4"), fails, phantom(), kParts, notes);
  for (int k = 0; k < kParts; ++k) ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "process " << k;
  EXPECT_GT(given[0], 1) << "the run ended in its first window";
  for (int j = 0; j < kParts; ++j)
    for (int k = 0; k < kParts; ++k)
      if (j != k) {
        EXPECT_EQ(taken[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)], given[static_cast<std::size_t>(k)])
            << "process " << j << " from " << k;
      }
  EXPECT_EQ(given[0], given[2]);
  EXPECT_EQ(given[1], given[0]) << "the failed process gave no notes in its failure's window";
}

// A failure a layer finds only at a window's end (RunOptions::window_failure: MPI's collective
// checks) is placed in the sequential order among the processes' own: it fails the run unless a
// failure earlier in that order came first, and it is the failure of its own turn, whatever else
// failed in that turn (after the call the layer names). Ranks 0..7 are process 0's, 8..15 process 1's.
TEST(Partition, AFailureALayerFindsAtTheWindowsEndTakesItsPlaceInTheRunsOrder) {
  struct Case {
    int layer_rank;  // the rank whose turn at t = 0 the layer fails
    int throwing;    // a rank whose program throws in its first turn (-1: none)
    int reported;    // the rank whose failure is the run's
  };
  const Machine m = ts_test::prime_machine("mesh:4x4");
  for (const Case c : {Case{3, -1, 3}, Case{3, 3, 3}, Case{3, 12, 3}, Case{12, 3, 3}, Case{12, 5, 5}}) {
    SCOPED_TRACE(fmt::format("layer fails rank {}, rank {} throws", c.layer_rank, c.throwing));
    const auto program = [&c](Proc& p) {
      if (p.rank() == c.throwing) throw std::runtime_error(fmt::format("rank {} gives up", p.rank()));
      ring(p);
    };
    // Each rank's first turn's place, written by the rank's own process.
    std::array<std::uint64_t, 16> first_place{};
    const auto layer = [&c, &first_place](RunOptions& o, int) {
      o.window_failure = [&c]() -> std::optional<RunOptions::WindowFailure> {
        return RunOptions::WindowFailure{0, c.layer_rank, 1234, "the layer's finding"};
      };
      o.on_vp_resume = [&first_place](int rank, Time now, std::uint64_t place) {
        if (now == 0 && first_place[static_cast<std::size_t>(rank)] == 0)
          first_place[static_cast<std::size_t>(rank)] = place;
      };
    };
    const ts_test::SplitRun split = ts_test::run_split(m, program, phantom(), 2, layer);
    const int process = c.reported < 8 ? 0 : 1;
    const bool layers = c.reported == c.layer_rank;
    for (int k = 0; k < 2; ++k) {
      const auto& failure = split.failures[static_cast<std::size_t>(k)];
      ASSERT_TRUE(failure) << "process " << k;
      const std::string what = failure_text(failure);
      if (k == process)
        EXPECT_EQ(what.substr(0, what.find('\n')),
                  layers ? fmt::format("rank {} failed at t=0.001234 us: the layer's finding", c.reported)
                         : fmt::format("rank {} failed at t=0 us: rank {} gives up", c.reported, c.reported));
      else
        EXPECT_NE(what.find(fmt::format("process {} of the split run failed", process)), std::string::npos) << what;
      try {
        std::rethrow_exception(failure);
      } catch (const RunError& e) {
        EXPECT_EQ(e.failed_at, 0);
        EXPECT_EQ(e.failed_place, first_place[static_cast<std::size_t>(c.reported)]);
        EXPECT_EQ(dynamic_cast<const RunUsageError*>(&e) != nullptr, layers) << "the layer's failure is a usage error";
      }
    }
  }
}

// Each rank's payload names its sender and its place in the stream: a byte out of place, from another
// process or not, fails the rank that reads it.
void checked_exchange(Proc& p) {
  const int n = p.size(), me = p.rank();
  const auto byte_of = [](int from, int k, std::size_t i) { return static_cast<std::byte>(from * 31 + k * 7 + i); };
  std::vector<Request> reqs;
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(n));
  for (int k = 1; k < n; ++k) {
    auto& b = out[static_cast<std::size_t>(k)];
    b.resize(static_cast<std::size_t>(100 + 150 * k));  // more than one packet from the second on
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = byte_of(me, k, i);
    reqs.push_back(p.isend((me + k) % n, k, b));
  }
  std::vector<std::byte> in(100 + 150 * static_cast<std::size_t>(n));
  for (int k = 1; k < n; ++k) {
    p.compute(static_cast<Time>((me * 5 + k) % 3) * 2000);
    const int from = (me + n - k) % n;
    const Status st = p.recv(from, k, in);
    for (std::size_t i = 0; i < st.size; ++i)
      if (in[i] != byte_of(from, k, i))
        throw std::runtime_error(fmt::format("rank {}: byte {} from rank {} is wrong", me, i, from));
  }
  p.waitall(reqs);
}

TEST(Partition, RealPayloadsTravelWithTheirMessagesBetweenTheProcesses) {
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), checked_exchange, {2, 3, 4}, real);
}

// Flow control (docs/model.md 2.16): messages above the eager limit go by rendezvous, whose request
// to send, clear to send and data cross the processes in three windows; the receives match any
// source, and synchronous sends of rendezvous size (they complete when the data leaves) are carried.
// It fails if a rendezvous's data is numbered when it is handed over instead of with its request.
// A window's payloads above Partition::payloads_inline_up_to go to their destinations' processes
// alone, each once: with every window's sent apart (a limit of 0), the processes send exactly the
// payloads of the messages between ranks of different processes.
TEST(Partition, PayloadsGoToTheirDestinationsProcessAloneOnce) {
  const Machine m = ts_test::prime_machine("mesh:4x4");
  RunOptions real = phantom();
  real.phantom_payloads = false;
  const RunResult one = run(m, checked_exchange, real);
  for (const int parts : {3, 4}) {
    std::size_t crossing = 0;  // checked_exchange: rank r sends 100 + 150 k bytes to r + k
    const auto process = [&](int rank) {
      int k = 0;
      while (rank >= Partition::ranks_of(k, parts, 16).second) ++k;
      return k;
    };
    for (int r = 0; r < 16; ++r)
      for (int k = 1; k < 16; ++k)
        if (process(r) != process((r + k) % 16)) crossing += static_cast<std::size_t>(100 + 150 * k);
    for (const std::optional<std::size_t> limit : {std::optional<std::size_t>(0), std::optional<std::size_t>()}) {
      SCOPED_TRACE(::testing::Message() << parts << " processes, payloads inline up to "
                                        << (limit ? std::to_string(*limit) : "the default"));
      const ts_test::SplitRun split = ts_test::run_split(m, checked_exchange, real, parts, {}, limit);
      for (int k = 0; k < parts; ++k) {
        ASSERT_FALSE(split.failures[static_cast<std::size_t>(k)])
            << failure_text(split.failures[static_cast<std::size_t>(k)]);
        expect_same_split(split.results[static_cast<std::size_t>(k)], one);
      }
      const std::size_t apart = std::accumulate(split.sent_apart.begin(), split.sent_apart.end(), std::size_t{0});
      if (limit)
        EXPECT_EQ(apart, crossing);
      else
        EXPECT_LE(apart, crossing);  // the windows of all sends at once go apart, the later ones inline
    }
  }
  // The inter-level multicast: one payload to each process with a destination of it.
  const Machine hpam = parse_machine("hpam:1x1/4x4,Q=8,multicast,send_holds_until_received=off");
  const algorithms::Algorithm& bcast = algorithms::find("bcast/brute-force");
  const Program brute_force = [&](Proc& p) { bcast.program(p, algorithms::Args{1100, 0, true}); };
  const RunResult multicast = run(hpam, brute_force, real);
  const ts_test::SplitRun split = ts_test::run_split(hpam, brute_force, real, 3, {}, 0);
  for (int k = 0; k < 3; ++k) {
    ASSERT_FALSE(split.failures[static_cast<std::size_t>(k)])
        << failure_text(split.failures[static_cast<std::size_t>(k)]);
    expect_same_split(split.results[static_cast<std::size_t>(k)], multicast);
  }
  EXPECT_GT(split.sent_apart[0], 0u);
}

// Synchronous sends of eager size, whose acknowledgements come back from other processes: matched
// at the arrival (the receive posted first) and at the posting (the message waited), to ranks of
// the same process and of others, some dropped, some tested in a loop; with the crowd's traffic.
void synchronous_sends(Proc& p) {
  const int n = p.size(), me = p.rank();
  std::vector<std::byte> out(40, static_cast<std::byte>(me)), in(40);
  for (int k = 1; k <= 3; ++k) {
    const int to = (me + k * 5) % n, from = (me + n - (k * 5) % n) % n;
    if (k == 2) p.compute(static_cast<Time>(me % 4) * 3000);  // some receives late, some early
    Request r = p.issend(to, k, out);
    if (k == 3) {
      { Request dropped = p.issend(to, 9, out); }
      p.recv(from, 9, in);
    }
    p.recv(from, k, in);
    if (!p.phantom_payloads() && in[0] != static_cast<std::byte>(from))
      throw std::runtime_error("another rank's bytes");
    while (!p.test(r)) p.compute(700);
  }
  crowded(p);
}

TEST(Partition, SynchronousSendsAcrossProcessesAreTheSingleProcesssRun) {
  const Machine m = ts_test::prime_machine("mesh:4x4");
  expect_split_runs_same(m, synchronous_sends, {2, 3, 4});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  real.perturb = 5;
  expect_split_runs_same(ts_test::prime_machine("torus:4x4"), synchronous_sends, {2, 4}, real);
}

TEST(Partition, RendezvousAcrossProcessesAreTheSingleProcesssRun) {
  Machine m = ts_test::prime_machine("mesh:4x4");
  m.net.eager_limit = 256;
  expect_split_runs_same(m, crowded, {2, 3, 4});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_split_runs_same(m, checked_exchange, {2, 4}, real);
  const Program synchronous = [](Proc& p) {
    std::vector<std::byte> out(1000), in(1000);
    Request r = p.issend((p.rank() + 5) % p.size(), 0, out);
    p.recv(any_source, 0, in);
    p.wait(r);
  };
  expect_split_runs_same(m, synchronous, {2, 3});
  RunOptions eager_limit = phantom();  // a run's own limit (mpirun --eager-limit): every message goes by rendezvous
  eager_limit.eager_limit = 0;
  expect_split_runs_same(ts_test::prime_machine("torus:4x4"), crowded, {2, 4}, eager_limit);
}

// Groups made without a message (subgroups, groups of the same members made twice) and by a split
// (whose colors and keys cross the processes), with point-to-point traffic and barriers in them: the
// processes agree on every group's context, so messages match as in one process. `check`: the
// payloads are real, and each message must be its group's.
void in_groups(Proc& p, bool check) {
  const int me = p.rank(), n = p.size();
  std::vector<int> evens, odds;
  for (int r = 0; r < n; ++r) (r % 2 ? odds : evens).push_back(r);
  const Group half = p.group(me % 2 ? odds : evens);
  const Group again = p.group_like(half);  // the same members, another context
  const Group by_third = p.split(p.world(), me % 3, n - me);
  std::vector<std::byte> out(64, static_cast<std::byte>(me)), in(64);
  for (const Group& g : {half, again, by_third}) {
    const int r = g.local_rank(me), size = g.size();
    p.sendrecv((r + 1) % size, 3, out, (r + size - 1) % size, 3, in, g);
    const int from = g.members()[static_cast<std::size_t>((r + size - 1) % size)];
    if (check && in[0] != static_cast<std::byte>(from))
      throw std::runtime_error(fmt::format("rank {}: a message of another group", me));
    p.barrier(g);
  }
  // Ranks 0..n/2-1 as a subgroup of the world: some in every process, some processes without one.
  std::vector<int> firsts(static_cast<std::size_t>(n / 2));
  std::iota(firsts.begin(), firsts.end(), 0);
  if (me < n / 2) {
    const Group low = p.subgroup(p.world(), firsts);
    p.sendrecv((me + 1) % low.size(), 0, out, (me + low.size() - 1) % low.size(), 0, in, low);
  }
}

TEST(Partition, GroupsAndSplitsAcrossProcessesAreTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), [](Proc& p) { in_groups(p, false); }, {2, 3, 4});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_split_runs_same(
      ts_test::prime_machine("torus:4x4"), [](Proc& p) { in_groups(p, true); }, {2, 4}, real);
  // A hardware barrier's arrivals cross the processes at the window's end; at 1 us its latency is
  // shorter than the least send set-up, and the windows shrink to it.
  for (const char* spec : {"mesh:4x4,barrier=hardware,barrier_us=5", "mesh:4x4,barrier=hardware,barrier_us=1"}) {
    SCOPED_TRACE(spec);
    expect_split_runs_same(parse_machine(spec), [](Proc& p) { in_groups(p, false); }, {2, 3, 4});
  }
}

// Remote atomics, requests whose handlers compute and echo a payload, and one-way messages, between
// ranks of the same and of other processes: handlers run in their destination's process, and their
// replies, sent from inside an arrival, take their place among the window's messages there.
// Rank `who`, if any, gives up once its requests are sent.
// Rank `who`, if any, gives up after its requests; or node `handler_fails`'s echo handler fails on
// the request of rank `from` (either kEveryNode: any).
constexpr int kEveryNode = -2;
void active_messages_until(Proc& p, int who, int handler_fails = -1, int from = -1) {
  const int n = p.size(), me = p.rank();
  p.register_word(0);
  p.am_register(1, [handler_fails, from](AmContext& c) {
    if ((c.rank() == handler_fails || handler_fails == kEveryNode) && (c.source() == from || from == kEveryNode))
      throw Error("the echo handler fails");
    c.compute(300 * (c.args()[0] % 5 + 1));
    c.reply(c.args(), c.payload());
  });
  p.am_register(2, [](AmContext& c) { c.word(0) += c.args()[0]; });
  p.barrier(p.world());
  std::vector<AmFuture> adds;
  for (int k = 1; k <= 3; ++k) adds.push_back(p.ifetch_add((me + 5 * k) % n, 0, me + 1));
  std::vector<std::byte> mine(40);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<std::byte>(me * 3 + static_cast<int>(i));
  const std::int64_t arg = me;
  AmFuture echo = p.am_request((me * 7 + 3) % n, 1, std::span(&arg, 1), mine, mine.size());
  p.am_send((me + 1) % n, 2, std::span(&arg, 1));
  if (me == who) throw Error(fmt::format("rank {} gives up", me));
  for (auto& f : adds) p.atomic_wait(f);
  const AmReply r = p.am_wait(echo);
  if (r.args.size() != 1 || r.args[0] != me ||
      !std::equal(r.payload.begin(), r.payload.end(), mine.begin(), mine.end()))
    throw std::runtime_error(fmt::format("rank {}: the echo came back changed", me));
  p.barrier(p.world());
  // Every fetch_add has completed: rank me's word holds what the ranks that added to it gave, and
  // the one-way message's number if its handler has run by now.
  std::int64_t added = 0;
  for (int r = 0; r < n; ++r)
    for (int k = 1; k <= 3; ++k) added += (r + 5 * k) % n == me ? r + 1 : 0;
  const std::int64_t w = p.word(0), one_way = (me + n - 1) % n;
  if (w != added && w != added + one_way)
    throw std::runtime_error(fmt::format("rank {}: its word holds {}, not {} (+ {})", me, w, added, one_way));
}
void active_messages(Proc& p) { active_messages_until(p, -1); }

TEST(Partition, ActiveMessagesAcrossProcessesAreTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), active_messages, {2, 3, 4});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_split_runs_same(ts_test::prime_machine("torus:4x4"), active_messages, {2, 4}, real);
}

// Two tasks per rank beside its own program, each a ring of its own on the spawn's group, at once with
// the rank's ring and with computation between: tasks of ranks in several processes meet at the same
// instants, where they come after every VP, by rank and then by the rank's own count.
// Rank `who`, if any, gives up once its tasks are spawned.
void with_tasks_until(Proc& p, int who) {
  std::vector<Request> tasks;
  for (int k = 1; k <= 2; ++k)
    tasks.push_back(p.spawn(p.world(), [&p, k](const Group& g) {
      std::vector<std::byte> out(static_cast<std::size_t>(60 * k), static_cast<std::byte>(p.rank())), in(out.size());
      const int n = g.size(), me = g.local_rank(p.rank());
      p.compute(static_cast<Time>(k * 500));
      p.sendrecv((me + k) % n, k, out, (me + n - k) % n, k, in, g);
      if (!p.phantom_payloads() && in[0] != static_cast<std::byte>(g.world_rank((me + n - k) % n)))
        throw std::runtime_error(fmt::format("rank {}: task {} received another rank's bytes", p.rank(), k));
    }));
  if (p.rank() == who) throw Error(fmt::format("rank {} gives up", who));
  ring(p);
  p.waitall(tasks);
  ring(p);
}
void with_tasks(Proc& p) { with_tasks_until(p, -1); }

TEST(Partition, TasksAcrossProcessesAreTheSingleProcesssRun) {
  expect_split_runs_same(ts_test::prime_machine("mesh:4x4"), with_tasks, {2, 3, 4});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_split_runs_same(ts_test::prime_machine("torus:4x4"), with_tasks, {2, 4}, real);
}

// Two rings of long messages, the second with a wildcard receive: most of the time every VP waits
// for a message.
void long_ring(Proc& p) {
  std::vector<std::byte> out(20'000), in(20'000);
  const int n = p.size();
  p.sendrecv((p.rank() + 1) % n, 0, out, (p.rank() + n - 1) % n, 0, in);
  p.send((p.rank() + 5) % n, 1, out);
  p.recv(any_source, 1, in);
}

TEST(Partition, AFailedSplitRunsHashIsTheSingleProcesss) {
  const Machine mesh = ts_test::prime_machine("mesh:4x4");
  const Program throws = [](Proc& p) {
    std::vector<std::byte> b(8);
    p.send((p.rank() + 5) % p.size(), 0, b);
    p.recv((p.rank() + 11) % p.size(), 0, b);
    if (p.rank() == 3) throw Error("rank 3 gives up");
  };
  expect_split_failures_same(mesh, throws, {2, 3, 4});
  // Ranks of every process run past the failure in its window, with sends, receives matched and
  // computation; the failing rank sends just before it gives up.
  for (const int who : {2, 5, 14})
    expect_split_failures_same(mesh, [who](Proc& p) { crowded_until(p, who, 4); }, {2, 3, 4});
  RunOptions perturbed = phantom();
  perturbed.perturb = 5;
  expect_split_failures_same(
      mesh, [](Proc& p) { crowded_until(p, 9, 2); }, {4}, perturbed);
  // By rendezvous: clears to send charge the receivers' clocks in the events past the failure.
  Machine rendezvous = mesh;
  rendezvous.net.eager_limit = 256;
  for (const int who : {6, 11})
    expect_split_failures_same(rendezvous, [who](Proc& p) { crowded_until(p, who, 3); }, {2, 4});
  // Handlers charge their nodes' clocks past the failure.
  for (const int who : {0, 7})
    expect_split_failures_same(mesh, [who](Proc& p) { active_messages_until(p, who); }, {2, 3});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_split_failures_same(
      ts_test::prime_machine("torus:4x4"), [](Proc& p) { crowded_until(p, 13, 5); }, {2, 4}, real);
  // Tasks run on past their rank's failure.
  for (const int who : {4, 12}) expect_split_failures_same(mesh, [who](Proc& p) { with_tasks_until(p, who); }, {2, 3});
  // A time limit the event loop finds (every VP waits for a message), before every event of the
  // first instant past it, in whichever process has one.
  for (const Time limit : {400'000, 700'000, 1'000'000, 1'300'000}) {
    SCOPED_TRACE(fmt::format("a time limit of {} us", to_us(limit)));
    RunOptions limited = phantom();
    limited.time_limit = limit;
    expect_split_failures_same(mesh, long_ring, {2, 3, 4}, limited);
  }
}

// The rests of programs that left the emulation (Proc::leave) run after the processes' last window:
// a failure in one is the whole run's, in every process, and the first in the order the ranks left
// is the one reported, as in one process. Without comparing them, the other processes reported a
// run that went well.
TEST(Partition, AFailureInTheRestOfAProgramThatLeftEndsEveryProcess) {
  const auto program = [](std::vector<int> fail) -> Program {
    return [fail](Proc& p) {
      ring(p);
      p.compute(static_cast<Time>((p.size() - p.rank()) * 1000));  // they leave in the reverse order of rank
      ring(p);
      p.leave();
      if (std::find(fail.begin(), fail.end(), p.rank()) != fail.end())
        throw Error(fmt::format("rank {}'s rest failed", p.rank()));
    };
  };
  const Machine mesh = ts_test::prime_machine("mesh:4x4");
  for (const std::vector<int>& fail : {std::vector<int>{3}, std::vector<int>{12}, std::vector<int>{2, 13}}) {
    SCOPED_TRACE(fmt::format("failing ranks {}", fmt::join(fail, ", ")));
    expect_split_failures_same(mesh, program(fail), {2, 4}, phantom(), [](const auto& split, const std::string& one) {
      const std::string what = one.substr(0, one.find('\n'));  // "rank R failed at t=...: ..."
      ASSERT_NE(what.find("'s rest failed"), std::string::npos) << one;
      // Told by the process of the rank whose rest failed first; the others name that process.
      EXPECT_EQ(std::count_if(split.begin(), split.end(), [&](const std::string& s) { return s.starts_with(what); }),
                1);
      for (const std::string& s : split) EXPECT_TRUE(s.starts_with(what) || s.starts_with("process ")) << s;
    });
  }
}

// What moves the clocks of ranks blocked at the failure, in other processes, in events just after
// it: a handler on a rank's node, or a rendezvous's clear to send (charged to the receiver at the
// request's arrival, and to the sender at its own). Rank 0 gives up at its turns every microsecond
// through them.
TEST(Partition, AFailedSplitRunTakesBackTheClocksOfEventsPastTheFailure) {
  static Time gave_up_at = 0;  // rank 0's turn
  const auto program = [](Time compute, bool rendezvous) -> Program {
    return [compute, rendezvous](Proc& p) {
      const int n = p.size(), me = p.rank();
      p.am_register(1, [](AmContext& c) { c.compute(5000); });
      std::vector<std::byte> b(64), never(8);
      if (me == 0) {  // a turn at the arrival of a message to itself, after the computation
        p.compute(compute);
        p.send(0, 9, never);
        p.recv(0, 9, never);
        gave_up_at = p.now();
        throw Error("rank 0 gives up");
      }
      const std::int64_t arg = 0;
      if (me == n - 1 && rendezvous) {
        p.compute(20'000'000);
        p.send(n - 2, 3, b);
      }
      if (me == n - 1 && !rendezvous) p.am_send(n - 2, 1, std::span(&arg, 1));
      if (me == n - 2 && rendezvous) p.recv(n - 1, 3, b);  // posted before the request to send arrives
      p.recv(0, 0, never);                                 // never sent: blocked at the failure
    };
  };
  Machine m = parse_machine("mesh:4x4");  // a send set-up of 10 us: windows that hold these events
  m.net.eager_limit = 32;
  constexpr Time late = 1'000'000'000;
  gave_up_at = 0;
  EXPECT_THROW(run(m, program(late, false), phantom()), RunError);
  const Time delay = gave_up_at - late;  // from the computation's end to rank 0's turn
  ASSERT_GT(delay, 0);
  for (const bool rendezvous : {false, true}) {
    SCOPED_TRACE(rendezvous ? "a rendezvous" : "a handler");
    for (Time at = 1'000'000; at < 80'000'000; at += 1'000'000) {
      SCOPED_TRACE(fmt::format("rank 0 gives up at t={} us", to_us(at)));
      expect_split_failures_same(m, program(at - delay, rendezvous), {2});
    }
  }
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Points opts' trace and order log at `stem`.json and `stem`.log in the test's temporary folder,
// neither there yet.
void fresh_evidence_files(RunOptions& opts, const std::string& stem) {
  // Named after the test too: ctest runs tests at once, each in a process of its own.
  const std::string path =
      ::testing::TempDir() + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + stem;
  opts.trace_file = path + ".json";
  opts.order_log_file = path + ".log";
  std::remove(opts.trace_file.c_str());
  std::remove(opts.order_log_file.c_str());
}

// The trace and the order log a split run's process 0 writes are the single process's, byte for byte.
void expect_same_evidence(const Machine& m, const Program& program, const std::vector<int>& parts,
                          RunOptions opts = phantom()) {
  fresh_evidence_files(opts, "partition_single");
  run(m, program, opts);
  const std::string trace = file_text(opts.trace_file), order = file_text(opts.order_log_file);
  ASSERT_NE(trace.find("\"ph\":\"f\""), std::string::npos) << "the trace has no message arrows";
  ASSERT_NE(order.find("recv #"), std::string::npos) << order;
  for (const int n : parts) {
    SCOPED_TRACE(::testing::Message() << n << " processes");
    fresh_evidence_files(opts, fmt::format("partition_split{}", n));
    const ts_test::SplitRun split = ts_test::run_split(m, program, opts, n);
    for (int k = 0; k < n; ++k)
      EXPECT_FALSE(split.failures[static_cast<std::size_t>(k)])
          << failure_text(split.failures[static_cast<std::size_t>(k)]);
    EXPECT_TRUE(file_text(opts.trace_file) == trace) << "the traces differ: " << opts.trace_file;
    EXPECT_EQ(file_text(opts.order_log_file), order);
  }
}

TEST(Partition, ASplitRunsTraceAndOrderLogAreTheSingleProcesss) {
  const Machine mesh = ts_test::prime_machine("mesh:4x4");
  expect_same_evidence(mesh, crowded, {2, 3, 4});
  expect_same_evidence(mesh, active_messages, {2, 4});
  expect_same_evidence(mesh, with_tasks, {3});
  Machine rendezvous = mesh;
  rendezvous.net.eager_limit = 256;
  expect_same_evidence(rendezvous, crowded, {2, 4});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_same_evidence(ts_test::prime_machine("torus:4x4"), checked_exchange, {2}, real);
  const Machine hpam = parse_machine("hpam:1x1/4x4,Q=8,multicast");  // held until received
  for (const char* name : {"bcast/brute-force"}) {  // the inter-level multicast
    SCOPED_TRACE(name);
    const algorithms::Algorithm& alg = algorithms::find(name);
    expect_same_evidence(hpam, [&](Proc& p) { alg.program(p, algorithms::Args{64, 0, false}); }, {2, 4});
  }
}

// At t = 0 rank 1's task sends, then rank 2's task ends, and rank 2's program, waiting for it, goes
// on at once and sends: the single process takes that turn after the tasks' (it was woken at its
// instant by a turn with a greater order key) and numbers rank 1's message first. So does a split
// run, whose processes hold the two ranks apart.
TEST(Partition, ATurnWokenAtItsInstantNumbersItsSendsWhereOneProcessTakesIt) {
  const Program woken = [](Proc& p) {
    std::vector<std::byte> b(8);
    Request task = p.spawn(p.world(), [&p, &b](const Group&) {  // sends in the task's own world
      if (p.rank() == 1) p.send(0, 5, b);
      if (p.rank() == 0) p.recv(1, 5, b);
    });
    p.wait(task);
    if (p.rank() == 2) p.send(3, 6, b);
    if (p.rank() == 3) p.recv(2, 6, b);
  };
  const Machine line = ts_test::prime_machine("mesh:1x4");
  expect_split_runs_same(line, woken, {2, 4});
  expect_same_evidence(line, woken, {2, 4});  // the order log names every message by its number
}

// At t = 0 rank 2's task ends, and rank 2's program, waiting for it, goes on at once and fails; so
// does rank 1's task. The single process takes rank 1's task before rank 2's woken program (whose
// turn comes after its task's, the greater order key) and stops there: the split run, whose
// processes hold the two ranks apart, places the two failures in that order too.
TEST(Partition, AFailureInATurnWokenAtItsInstantIsPlacedWhereOneProcessTakesIt) {
  const Program fails = [](Proc& p) {
    Request task = p.spawn(p.world(), [&p](const Group&) {
      if (p.rank() == 1) throw std::runtime_error("rank 1's task gives up");
    });
    p.wait(task);
    if (p.rank() == 2) throw std::runtime_error("rank 2 gives up");
  };
  const Machine line = ts_test::prime_machine("mesh:1x4");
  std::string one;
  try {
    run(line, fails, phantom());
    ADD_FAILURE() << "the run did not fail";
  } catch (const RunError& e) {
    one = e.what();
  }
  ASSERT_NE(one.find("rank 1's task gives up"), std::string::npos) << one;
  ASSERT_EQ(one.find("rank 2 gives up"), std::string::npos) << one;
  for (const int n : {2, 4}) {
    const ts_test::SplitRun split = ts_test::run_split(line, fails, phantom(), n);
    for (int k = 0; k < n; ++k) {
      ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << n << " processes, process " << k;
      const std::string what = failure_text(split.failures[static_cast<std::size_t>(k)]);
      EXPECT_EQ(what.find("rank 2 gives up"), std::string::npos) << n << " processes, process " << k << ":\n" << what;
      if (k == n / 4) {  // rank 1's process
        EXPECT_EQ(what.substr(0, what.find('\n')), one.substr(0, one.find('\n'))) << what;
      }
    }
  }
}

// Who blocked whom is the network's, which every process carries whole: each one's explanation is
// the single process's, for a run that ends and for one that fails.
TEST(Partition, EveryProcessExplainsWhoBlockedWhomAsOneProcessDoes) {
  RunOptions o = phantom();
  o.explain = true;
  const Machine m = ts_test::prime_machine("mesh:4x4");
  const RunResult one = run(m, crowded, o);
  ASSERT_NE(one.explanation.find("blocked"), std::string::npos) << one.explanation;
  for (const int n : {2, 4}) {
    const ts_test::SplitRun split = ts_test::run_split(m, crowded, o, n);
    for (int k = 0; k < n; ++k) {
      ASSERT_FALSE(split.failures[static_cast<std::size_t>(k)])
          << failure_text(split.failures[static_cast<std::size_t>(k)]);
      EXPECT_EQ(split.results[static_cast<std::size_t>(k)].explanation, one.explanation)
          << n << " processes, process " << k;
    }
  }
  const Program stuck = [](Proc& p) {  // the crowd, then everyone waits for a message never sent
    crowded(p);
    std::vector<std::byte> b(8);
    p.recv(any_source, 99, b);
  };
  const std::string failed = failure_in_one_process(m, stuck, o);
  const std::size_t from = failed.find("explain: ");
  ASSERT_NE(from, std::string::npos) << failed;
  const std::string explained = failed.substr(from, failed.find("trace_hash", from) - from);
  const ts_test::SplitRun split = ts_test::run_split(m, stuck, o, 2);
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]);
    const std::string what = failure_text(split.failures[static_cast<std::size_t>(k)]);
    EXPECT_NE(what.find(explained), std::string::npos) << "process " << k << ":\n" << what << "\nwant\n" << explained;
  }
}

// Races are found where the receive is, from the vector clocks the messages bring from other
// processes (the crowd's wildcards, rendezvous among them), and what a hardware barrier tells its
// members: every process ends with the single process's races, each described by its own process.
TEST(Partition, EveryProcessFindsTheSingleProcesssRaces) {
  Machine m = ts_test::prime_machine("mesh:4x4");
  m.net.eager_limit = 256;  // the crowd's longer messages go by rendezvous
  m.net.barrier = BarrierKind::hardware;
  m.net.barrier_latency = 1500;
  const Program program = [](Proc& p) {
    crowded(p);
    // Rank 0 takes two of three messages sent between two barriers, then the third and two sent
    // after the second barrier: those of ranks 9 and 15 are causally after its first two receives
    // (the barrier told them), so they are not those receives' alternatives.
    std::vector<std::byte> b(8);
    const int me = p.rank();
    p.barrier(p.world());
    if (me == 5 || me == 12 || me == 7) p.send(0, 1, b);
    if (me == 0)
      for (int k = 0; k < 2; ++k) p.recv(any_source, 1, b);
    p.barrier(p.world());
    if (me == 9 || me == 15) p.send(0, 1, b);
    if (me == 0)
      for (int k = 0; k < 3; ++k) p.recv(any_source, 1, b);
  };
  RunOptions o = phantom();
  o.races = RaceCheck::report;
  o.describe_race = [](const Race& r) {
    return r.rank % 3 == 0 ? fmt::format("the program's words for rank {}'s receive #{}\n", r.rank, r.call)
                           : std::string();
  };
  const RunResult one = run(m, program, o);
  const std::string races = describe_races(one.races);
  std::set<std::uint64_t> rank0_calls;  // rank 0's races between the barriers (calls 16, 17) and after (18, 19)
  for (const Race& r : one.races)
    if (r.rank == 0 && r.call > 15) {
      rank0_calls.insert(r.call);
      for (const RaceAlternative& a : r.alternatives)
        EXPECT_TRUE(r.call >= 18 || (a.source != 9 && a.source != 15)) << races;
    }
  EXPECT_EQ(rank0_calls, (std::set<std::uint64_t>{16, 17, 18, 19})) << races;
  EXPECT_NE(races.find("the program's words for rank 3's"), std::string::npos) << races;
  for (const int n : {2, 3, 4}) {
    const ts_test::SplitRun split = ts_test::run_split(m, program, o, n);
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(::testing::Message() << n << " processes, process " << k);
      ASSERT_FALSE(split.failures[static_cast<std::size_t>(k)])
          << failure_text(split.failures[static_cast<std::size_t>(k)]);
      const RunResult& r = split.results[static_cast<std::size_t>(k)];
      expect_same_split(r, one);
      EXPECT_EQ(describe_races(r.races), races);
      EXPECT_EQ(r.received, one.received);
    }
  }
}

// A failed split run's first process lists the races of every process's ranks, as one process does.
TEST(Partition, TheFirstProcessListsTheRacesOfEveryRankWhenTheRunDeadlocks) {
  const Program stuck = [](Proc& p) {
    crowded(p);
    std::vector<std::byte> b(8);
    p.recv(any_source, 99, b);  // never sent
  };
  RunOptions o = phantom();
  o.races = RaceCheck::report;
  const Machine m = ts_test::prime_machine("mesh:4x4");
  const std::string failed = failure_in_one_process(m, stuck, o);
  const std::size_t from = failed.find("Races up to the failure:");
  ASSERT_NE(from, std::string::npos) << failed;
  const std::string races = failed.substr(from, failed.find("trace_hash", from) - from);
  for (const int n : {2, 4}) {
    const ts_test::SplitRun split = ts_test::run_split(m, stuck, o, n);
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(::testing::Message() << n << " processes, process " << k);
      ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]);
      const std::string what = failure_text(split.failures[static_cast<std::size_t>(k)]);
      if (k == 0)
        EXPECT_NE(what.find(races), std::string::npos) << what << "\nwant\n" << races;
      else
        EXPECT_EQ(what.find("Races up to the failure:"), std::string::npos) << what;
    }
  }
}

// A failed split run still leaves its evidence: process 0 writes what every process recorded, the
// failing rank's last wait and the messages left unreceived included.
TEST(Partition, AFailedSplitRunWritesWhatEveryProcessRecorded) {
  const Program fails = [](Proc& p) {
    std::vector<std::byte> b(8);
    p.send((p.rank() + 1) % p.size(), 0, b);
    p.recv(any_source, 0, b);
    if (p.rank() == 13) throw std::runtime_error("rank 13 gives up");
    p.recv(any_source, 7, b);  // never sent: every rank waits here when rank 13 fails
  };
  RunOptions opts = phantom();
  opts.trace_file = ::testing::TempDir() + "partition_failed.json";
  opts.order_log_file = ::testing::TempDir() + "partition_failed.log";
  std::remove(opts.trace_file.c_str());
  std::remove(opts.order_log_file.c_str());
  const ts_test::SplitRun split = ts_test::run_split(ts_test::prime_machine("mesh:4x4"), fails, opts, 3);
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "process " << k;
  const std::string report = failure_text(split.failures[0]);
  EXPECT_NE(report.find("Written up to the failure at t="), std::string::npos) << report;
  const std::string trace = file_text(opts.trace_file), order = file_text(opts.order_log_file);
  for (int r = 0; r < 16; ++r) {
    SCOPED_TRACE(::testing::Message() << "rank " << r);
    if (r == 13) continue;
    // Each rank's send and the receive of its neighbour's message, whichever process ran it.
    EXPECT_NE(order.find(fmt::format("VP {}:\n  t=", r)), std::string::npos) << order;
    EXPECT_NE(trace.find(fmt::format("to {} tag 0 8 B", (r + 1) % 16)), std::string::npos);
  }
  EXPECT_NE(trace.find("(when the run failed)"), std::string::npos);
}

// After a failure inside a window, the trace and the order log process 0 writes are the single
// process's, byte for byte: each process takes back what it recorded past the failure (receives,
// waits that ended, sends, handlers), ends the waits its VPs were still in at the failure there,
// and counts a message a later receive took as unreceived if it had arrived; the network's track,
// whose waits and holds open at the failure end there, and --explain's account of them too.
std::string explanation_in(const std::string& report) {
  const std::size_t from = report.find("explain: "), to = report.find("\ntrace_hash", from);
  if (from == std::string::npos || to == std::string::npos) return {};
  return report.substr(from, to - from);
}
std::string races_in(const std::string& report) {
  const std::size_t from = report.find("Races up to the failure:");
  return from == std::string::npos ? std::string() : report.substr(from, report.find("trace_hash", from) - from);
}
// A layer that finds a call's failure only at a split run's window's end (RunOptions::window_failure),
// as MPI's collective checks do. The call marks its place in the turn (Proc::mark); in one process
// the mark is 0 and the call fails at once, as MPI's does there; a split run's program goes on past
// it (sends, receives, waits) until the end of the window it was made in names the call, with its
// mark, in every process (a process that ends that window later than the call's own must not see a
// call of the next).
class LayerFinding {
 public:
  void call(Proc& p) {
    const std::uint32_t mark = p.mark();
    if (mark == 0) throw UsageError("the layer's finding");
    const auto rank = static_cast<std::size_t>(p.rank());
    const std::lock_guard lock(lock_);
    found_ =
        RunOptions::WindowFailure{turn_at_[rank], p.rank(), p.now(), "the layer's finding", mark, turn_place_[rank]};
    found_in_ = windows_[process_of_[rank]];
  }
  // Process k's options: its ranks' turns, its windows, and the finding at the end of the window it
  // was made in.
  void serve(RunOptions& o, int k) {
    const auto process = static_cast<std::size_t>(k);
    o.on_vp_resume = [this, process](int rank, Time now, std::uint64_t place) {
      turn_at_[static_cast<std::size_t>(rank)] = now;
      turn_place_[static_cast<std::size_t>(rank)] = place;
      process_of_[static_cast<std::size_t>(rank)] = process;
    };
    o.window_notes = [this, process] {
      ++windows_[process];  // called once at each window's end, before window_failure
      return std::vector<std::byte>();
    };
    o.window_failure = [this, process]() -> std::optional<RunOptions::WindowFailure> {
      const std::lock_guard lock(lock_);
      return found_in_ + 1 == windows_[process] ? found_ : std::nullopt;
    };
  }
  void forget() {  // between runs
    found_.reset();
    windows_.fill(0);
  }

 private:
  std::mutex lock_;
  std::optional<RunOptions::WindowFailure> found_;
  std::uint64_t found_in_ = 0;  // the window the call was made in, of its process
  // Each written by its own process: its ranks' turns, and its windows ended.
  std::array<Time, 64> turn_at_{};
  std::array<std::uint64_t, 64> turn_place_{};
  std::array<std::size_t, 64> process_of_{};
  std::array<std::uint64_t, 8> windows_{};
};

void expect_same_failed_evidence(const Machine& m, const Program& program, const std::vector<int>& parts,
                                 RunOptions opts = phantom(), LayerFinding* layer = nullptr,
                                 bool network_waits = false) {
  if (layer) layer->serve(opts, 0);
  fresh_evidence_files(opts, "partition_failed_single");
  opts.races = RaceCheck::report;
  opts.explain = true;
  std::string report;
  try {
    run(m, program, opts);
    FAIL() << "the single process's run did not fail";
  } catch (const RunError& e) {
    report = e.what();
  }
  const std::string note = report.substr(report.find("\nWritten up to the failure at t="));
  const std::string trace = file_text(opts.trace_file), order = file_text(opts.order_log_file);
  EXPECT_NE(trace.find("(when the run failed)"), std::string::npos) << "no VP was blocked at the failure";
  EXPECT_NE(explanation_in(report), "") << report;
  if (network_waits) {
    EXPECT_NE(trace.find("\"pid\":3,"), std::string::npos) << "no network track";
  }
  // The network's spans that the cut keeps keep their names.
  EXPECT_EQ(file_text(opts.trace_file).find("\"name\":\"\",\"ph\":\"X\",\"pid\":3,"), std::string::npos);
  for (const int n : parts) {
    SCOPED_TRACE(::testing::Message() << n << " processes");
    fresh_evidence_files(opts, fmt::format("partition_failed_split{}", n));
    if (layer) layer->forget();
    const ts_test::SplitRun split = ts_test::run_split(m, program, opts, n, [layer](RunOptions& o, int k) {
      if (layer) layer->serve(o, k);
    });
    for (int k = 0; k < n; ++k) ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]) << "process " << k;
    const std::string split_report = failure_text(split.failures[0]);
    EXPECT_NE(split_report.find(note.substr(0, note.find(':'))), std::string::npos) << split_report;
    EXPECT_EQ(races_in(split_report), races_in(report));
    EXPECT_EQ(explanation_in(split_report), explanation_in(report));
    EXPECT_TRUE(file_text(opts.trace_file) == trace) << "the traces differ: " << opts.trace_file;
    EXPECT_EQ(file_text(opts.order_log_file), order);
  }
}

// A mesh whose route from `from` to `to` throws, in the event loop's handling of the message's
// injection; adaptively, at the header's hop after the first instead.
class ThrowingRoute : public Topology {
 public:
  ThrowingRoute(std::shared_ptr<const Topology> mesh, int from, int to, bool adaptive)
      : mesh_(std::move(mesh)), from_(from), to_(to), adaptive_(adaptive) {}
  std::string name() const override { return mesh_->name(); }
  int nodes() const override { return mesh_->nodes(); }
  std::size_t link_channels() const override { return mesh_->link_channels(); }
  void route(int src, int dst, std::vector<LinkId>& out) const override {
    if (!adaptive_ && src == from_ && dst == to_) throw Error(fmt::format("no route from {} to {}", src, dst));
    mesh_->route(src, dst, out);
  }
  int distance(int src, int dst) const override { return mesh_->distance(src, dst); }
  std::string link_name(LinkId id) const override { return mesh_->link_name(id); }
  bool adaptive() const override { return adaptive_; }
  void next_channels(int src, int dst, LinkId came_in, std::vector<LinkId>& out) const override {
    if (src == from_ && dst == to_ && came_in != kNoLink) throw Error(fmt::format("no hop from {} to {}", src, dst));
    std::vector<LinkId> all;
    mesh_->route(src, dst, all);
    const auto at = came_in == kNoLink ? all.begin() : std::find(all.begin(), all.end(), came_in) + 1;
    if (at != all.end()) out.push_back(*at);
  }
  std::vector<int> dims() const override { return mesh_->dims(); }
  std::vector<int> coords(int node) const override { return mesh_->coords(node); }

 private:
  std::shared_ptr<const Topology> mesh_;
  int from_, to_;
  bool adaptive_;
};

// A failure in the event loop's handling of an event (a user topology's route that throws) comes at
// the same network event in every process, each of which handles every network event: nothing ran
// past it anywhere, and the window's sends before it are numbered as the single process numbered them.
// Long messages to the next three ranks at once, whose worms block each other, and while they
// stream, one to the rank five on.
void near_then_far(Proc& p) {
  const int n = p.size(), me = p.rank();
  std::vector<std::byte> out(5000);
  std::vector<std::vector<std::byte>> in(4, std::vector<std::byte>(5000));
  std::vector<Request> reqs;
  for (int k = 1; k <= 3; ++k) reqs.push_back(p.irecv((me + n - k) % n, k, in[static_cast<std::size_t>(k)]));
  for (int k = 1; k <= 3; ++k) reqs.push_back(p.isend((me + k) % n, k, out));
  p.send((me + 5) % n, 5, out);
  p.recv(any_source, 5, in[0]);
  p.waitall(reqs);
}

TEST(Partition, AFailureInAnEventsHandlingIsPlacedAsInOneProcess) {
  for (const bool adaptive : {false, true}) {
    SCOPED_TRACE(adaptive ? "adaptive" : "routed");
    const Machine mesh = ts_test::prime_machine("mesh:4x4");
    Machine early = mesh, late = mesh;
    early.topology = std::make_shared<ThrowingRoute>(mesh.topology, 3, 11, adaptive);
    expect_split_failures_same(early, crowded, {2, 3, 4});
    // In the second ring, long messages in flight across the processes and windows behind it.
    late.topology = std::make_shared<ThrowingRoute>(mesh.topology, 3, 8, adaptive);
    expect_split_failures_same(late, long_ring, {2, 3, 4});
    expect_same_failed_evidence(late, long_ring, {2, 4});
    // Spans of the network's track open at the failure too.
    expect_same_failed_evidence(late, near_then_far, {2, 3, 4}, phantom(), nullptr, true);
  }
}

// A failure in an active message's handler comes in its node's process alone, while the others go
// on past it: the request's arrival ends its place in every process, and they take back what came
// after it, as in one process.
TEST(Partition, AFailureInAnActiveMessagesHandlerIsPlacedAsInOneProcess) {
  const Machine mesh = ts_test::prime_machine("mesh:4x4");
  // Rank r's echo goes to node (7r + 3) mod 16.
  for (const int from : {0, 5, 9, 14}) {
    const int node = (7 * from + 3) % 16;
    SCOPED_TRACE(fmt::format("node {}'s handler fails on rank {}'s request", node, from));
    const Program failing = [node, from](Proc& p) { active_messages_until(p, -1, node, from); };
    expect_split_failures_same(mesh, failing, {2, 3, 4});
    expect_same_failed_evidence(mesh, failing, {2, 4});
  }
  // Every handler fails: several processes fail in one window.
  const Program every = [](Proc& p) { active_messages_until(p, -1, kEveryNode, kEveryNode); };
  expect_split_failures_same(mesh, every, {2, 3, 4});
  expect_same_failed_evidence(mesh, every, {2, 3, 4});
  // Two handlers fail at one instant in two processes, the later process's first: rank 4's request
  // to node 12 is numbered before rank 12's to node 4, and both cross two links.
  const Program crossed = [](Proc& p) {
    p.am_register(1, [](AmContext& c) {
      if (c.rank() == 4 || c.rank() == 12) throw Error(fmt::format("node {}'s handler fails", c.rank()));
      c.reply(c.args(), c.payload());
    });
    if (p.rank() == 4 || p.rank() == 12) {
      const std::int64_t arg = p.rank();
      AmFuture echo = p.am_request(16 - p.rank(), 1, std::span(&arg, 1), {}, 0);
      p.am_wait(echo);
    }
    std::vector<std::byte> b(8);
    p.recv(any_source, 9, b);  // never sent: every other rank waits here
  };
  expect_split_failures_same(mesh, crossed, {2, 4}, phantom(),
                             [](const std::vector<std::string>& whats, const std::string& one) {
                               EXPECT_NE(one.find("node 12's handler fails"), std::string::npos) << one;
                               const bool named = std::any_of(whats.begin(), whats.end(), [](const std::string& w) {
                                 return w.find("node 12's handler fails") != std::string::npos;
                               });
                               EXPECT_TRUE(named) << "no process reports node 12's failure";
                             });
  expect_same_failed_evidence(mesh, crossed, {2, 4});
  // A message that arrives at the failing handler's instant, after it: rank 1's one-way message to
  // node 2 and rank 9's to rank 10 are eight bytes, leave after the same computation, cross one
  // link each and are numbered in that order, so both arrive at one instant, the request first.
  // One process stops at the handler, before rank 9's message arrives: it is neither unreceived
  // there nor a message rank 10's wildcard receive (which took rank 11's, long before) could have
  // matched.
  const Program arriving_after = [](Proc& p) {
    p.am_register(1, [](AmContext& c) { throw Error(fmt::format("node {}'s handler fails", c.rank())); });
    std::vector<std::byte> b(8);
    const std::int64_t arg = 1;
    switch (p.rank()) {
      case 1: p.compute(5'000), p.am_send(2, 1, std::span(&arg, 1)); break;
      case 9: p.compute(5'000), p.send(10, 1, b); break;
      case 11: p.send(10, 1, b); break;
      case 10: p.recv(any_source, 1, b); break;
      default: break;
    }
    p.recv(any_source, 9, b);  // never sent: every rank waits here
  };
  expect_split_failures_same(mesh, arriving_after, {2, 4});
  expect_same_failed_evidence(mesh, arriving_after, {2, 4});
}

// Flow control with bounded receive buffers: whether a send of a split run's window goes eager
// waits for the window's end (the other processes' sends may take the space first). Ranks before
// the failing one send at its instant: their sends are decided before the failure, and where each
// went eager, its VP stood in its send at the failure as in one process (an eager send's CPU time
// is at least the lookahead), so the run is cut there exactly. Where one went by rendezvous, its
// request to send ended sooner and one process's VP went on before the failure: the processes'
// shares, and the report says so.
TEST(Partition, AFailureAmidSendsThatWaitForBufferSpaceIsPlacedWhereTheyWentEager) {
  Machine m = ts_test::prime_machine("mesh:4x4");
  m.net.recv_buffer = 4096;
  m.net.eager_limit = 8192;
  const auto sends_then_fails = [](std::size_t bytes, int who) -> Program {
    return [bytes, who](Proc& p) {
      std::vector<std::byte> b(bytes);
      if (p.rank() == who) throw Error(fmt::format("rank {} gives up", who));
      p.send((p.rank() + 5) % 16, 1, b);
      p.recv((p.rank() + 11) % 16, 1, b);
      p.recv(any_source, 9, b);  // never sent
    };
  };
  for (const int who : {3, 9, 14}) {
    SCOPED_TRACE(fmt::format("rank {} fails", who));
    expect_split_failures_same(m, sends_then_fails(1000, who), {2, 3, 4});
    expect_same_failed_evidence(m, sends_then_fails(1000, who), {2, 4});
  }
  // 5000 bytes do not fit 4096: every send goes by rendezvous.
  const ts_test::SplitRun split = ts_test::run_split(m, sends_then_fails(5000, 9), phantom(), 2);
  for (const std::exception_ptr& f : split.failures) {
    ASSERT_TRUE(f);
    try {
      std::rethrow_exception(f);
    } catch (const RunError& e) {
      EXPECT_TRUE(e.hash_of_shares);
      EXPECT_NE(std::string(e.what()).find("of the processes' shares of the run"), std::string::npos) << e.what();
    }
  }
}

TEST(Partition, AFailedSplitRunsTraceAndOrderLogAreTheSingleProcesss) {
  const Machine mesh = ts_test::prime_machine("mesh:4x4");
  for (const int who : {2, 5, 9})
    expect_same_failed_evidence(mesh, [who](Proc& p) { crowded_until(p, who, 4); }, {2, 3, 4});
  Machine rendezvous = mesh;
  rendezvous.net.eager_limit = 256;
  for (const int who : {6, 11})
    expect_same_failed_evidence(rendezvous, [who](Proc& p) { crowded_until(p, who, 3); }, {2, 4});
  for (const int who : {0, 7})
    expect_same_failed_evidence(mesh, [who](Proc& p) { active_messages_until(p, who); }, {2, 3});
  for (const int who : {4, 12}) expect_same_failed_evidence(mesh, [who](Proc& p) { with_tasks_until(p, who); }, {2, 3});
  RunOptions real = phantom();
  real.phantom_payloads = false;
  expect_same_failed_evidence(
      ts_test::prime_machine("torus:4x4"), [](Proc& p) { crowded_until(p, 13, 5); }, {2, 4}, real);
  // Around rank 1's failure, in other processes: messages that arrived before it and are received
  // after it (unreceived at the failure, and so the other outcomes of rank 15's wildcard receive),
  // one that arrives after it and is never received (not there yet), and a rank whose clock ran
  // past the failure before it blocked (a wait of no length).
  const auto around = [](Time fail) -> Program {
    return [fail](Proc& p) {
      std::vector<std::byte> b(8);
      switch (p.rank()) {
        case 0: p.send(15, 1, b), p.send(14, 1, b), p.send(15, 1, b); break;
        case 13: p.compute(1'000'000), p.send(15, 1, b); break;
        case 1:  // a turn of its own at `fail`: the arrival of a message to itself
          p.compute(fail), p.send(1, 5, b), p.recv(1, 5, b);
          throw Error("rank 1 gives up");
        case 2: p.compute(45'000'000), p.send(13, 2, b); break;
        case 5: p.compute(60'000'000); break;
        case 12: p.compute(42'000'000), p.send(15, 3, b), p.compute(9'000'000), p.send(14, 3, b); break;
        case 14: p.recv(12, 3, b), p.recv(0, 1, b); break;  // after rank 12's message: rank 0's waits
        case 15:  // a wildcard before the failure, and receives of its race's other messages after
          p.recv(any_source, 1, b), p.recv(12, 3, b), p.recv(0, 1, b), p.recv(any_source, 1, b);
          break;
        default: break;
      }
      p.recv(any_source, 9, b);  // never sent: every rank but 1 waits here at the end
    };
  };
  for (Time fail = 41'999'000; fail < 42'001'000; fail += 100) {
    SCOPED_TRACE(fmt::format("rank 1 fails at t={} us", to_us(fail)));
    expect_same_failed_evidence(mesh, around(fail), {2, 4});
  }
  // A time limit the event loop finds: nothing past it happened, in any process.
  for (const Time limit : {400'000, 700'000, 1'000'000, 1'300'000}) {
    SCOPED_TRACE(fmt::format("a time limit of {} us", to_us(limit)));
    RunOptions limited = phantom();
    limited.time_limit = limit;
    expect_same_failed_evidence(mesh, long_ring, {2, 4}, limited);
  }
  // A failure a layer finds at the window's end, at the call that marked it: what the turn did from
  // the call on (more sends, receives, a wait) is taken back, what it did before is kept.
  for (const int who : {2, 9, 13}) {
    SCOPED_TRACE(fmt::format("a call of rank {} fails", who));
    LayerFinding layer;
    const Program program = [&layer, who](Proc& p) { crowded_until(p, who, 4, [&layer](Proc& q) { layer.call(q); }); };
    expect_same_failed_evidence(mesh, program, {2, 3, 4}, phantom(), &layer);
  }
}

// A call a layer finds to fail at the window's end, made in a turn that its instant woke: at t = 0
// rank 1's program goes on after its task's turn, which comes after every rank's first turn, and
// makes the call; rank 2's program throws in its first turn. One process stops at rank 2 and never
// makes the call: the layer names the turn by the place on_vp_resume gave it, and the split run
// puts the call there too, after rank 2's failure.
TEST(Partition, AFailureALayerFindsInATurnWokenAtItsInstantIsPlacedWhereOneProcessTakesIt) {
  LayerFinding layer;
  const Program program = [&layer](Proc& p) {
    if (p.rank() == 2) throw std::runtime_error("rank 2 gives up");
    Request task = p.spawn(p.world(), [](const Group&) {});
    p.wait(task);
    if (p.rank() == 1) layer.call(p);
  };
  const Machine line = ts_test::prime_machine("mesh:1x4");
  RunOptions o = phantom();
  layer.serve(o, 0);
  std::string one;
  std::uint64_t hash = 0, place = 0;
  try {
    run(line, program, o);
    ADD_FAILURE() << "the run did not fail";
  } catch (const RunError& e) {
    std::tie(one, hash, place) = std::tuple{std::string(e.what()), e.trace_hash, e.failed_place};
    EXPECT_EQ(e.failed_at, 0);
  }
  ASSERT_TRUE(one.starts_with("rank 2 failed at t=0 us: rank 2 gives up")) << one;
  for (const int n : {2, 4}) {
    layer.forget();
    const ts_test::SplitRun split =
        ts_test::run_split(line, program, phantom(), n, [&layer](RunOptions& opts, int k) { layer.serve(opts, k); });
    for (int k = 0; k < n; ++k) {
      SCOPED_TRACE(fmt::format("{} processes, process {}", n, k));
      ASSERT_TRUE(split.failures[static_cast<std::size_t>(k)]);
      const std::string what = failure_text(split.failures[static_cast<std::size_t>(k)]);
      if (k == (2 * n) / 4) {  // rank 2's process
        EXPECT_EQ(what.substr(0, what.find('\n')), one.substr(0, one.find('\n')));
      } else {
        EXPECT_NE(what.find(fmt::format("process {} of the split run failed", (2 * n) / 4)), std::string::npos) << what;
      }
      try {
        std::rethrow_exception(split.failures[static_cast<std::size_t>(k)]);
      } catch (const RunError& e) {
        EXPECT_EQ(e.failed_at, 0);
        EXPECT_EQ(e.failed_place, place);
        EXPECT_EQ(fmt::format("{:016x}", e.trace_hash), fmt::format("{:016x}", hash));
        EXPECT_EQ(dynamic_cast<const RunUsageError*>(&e), nullptr) << "the layer's finding was taken";
      }
    }
  }
}

// A replayed schedule (RunOptions::schedule) forces wildcard receives where they are posted, in
// their rank's process: every process ends with the single process's forced run. An entry no rank
// used is the same usage error in every process, and a choice no run can make is named as
// infeasible by every process with a blocked rank.
TEST(Partition, AReplayedScheduleForcesTheSingleProcesssMatches) {
  const Machine m = ts_test::prime_machine("mesh:4x4");
  RunOptions forced = phantom();
  // Ranks 0, 6 and 13 take their 15 messages in the reverse of their senders' distance order from
  // them, the first receive from the rank just below.
  for (const int r : {0, 6, 13})
    for (int k = 1; k < 16; ++k) forced.schedule.push_back({r, static_cast<std::uint64_t>(k), (r + 16 - k) % 16});
  const RunResult free = run(m, crowded, phantom()), one = run(m, crowded, forced);
  EXPECT_NE(one.trace_hash, free.trace_hash) << "the schedule changed no match";
  expect_split_runs_same(m, crowded, {2, 3, 4}, forced);

  RunOptions unused = forced;
  unused.schedule.push_back({9, 99, 1});
  expect_every_process_fails(m, crowded, 3, "names no wildcard receive or probe of this run at 9:99=1", unused);

  RunOptions infeasible = phantom();
  infeasible.schedule = {{10, 1, 3}, {10, 2, 3}};  // rank 3 sends rank 10 one message only
  const std::string failed = failure_in_one_process(m, crowded, infeasible);
  const std::string headline = failed.substr(0, failed.find('\n'));
  ASSERT_TRUE(headline.starts_with("infeasible schedule at t=")) << headline;
  // Process 0's ranks all finish: its report is still the single process's, which names rank 10 of
  // process 1.
  expect_the_single_processs_deadlock_report(m, crowded, {2}, infeasible);
  // Every rank waits for rank 10, which waits in vain: the report names the infeasible choice that
  // only rank 10's process sees, as the single process does.
  const Program waits_for_ten = [](Proc& p) {
    std::vector<std::byte> b(8);
    if (p.rank() == 3 || p.rank() == 5) p.send(10, 0, b);
    if (p.rank() != 10) {
      p.recv(10, 1, b);
      return;
    }
    p.recv(any_source, 0, b);
    p.recv(any_source, 0, b);
    for (int r = 0; r < p.size(); ++r)
      if (r != 10) p.send(r, 1, b);
  };
  const std::string waited = failure_in_one_process(m, waits_for_ten, infeasible);
  ASSERT_TRUE(waited.starts_with("infeasible schedule at t=")) << waited;
  expect_the_single_processs_deadlock_report(m, waits_for_ten, {4}, infeasible);
}

TEST(Partition, WhatASplitRunCannotCarryIsRefusedWithTheReason) {
  Machine holds = ts_test::prime_machine("mesh:4x4");
  holds.net.send_holds_until_received = true;
  holds.costs.recv_overhead = 0;
  expect_every_process_fails(holds, ring, 2, "least receive overhead (C_recv) is 0");
  Machine free_sends = ts_test::prime_machine("mesh:4x4");
  free_sends.costs.send_overhead = free_sends.costs.send_tail = free_sends.costs.send_per_packet = 0;
  expect_every_process_fails(free_sends, ring, 2, "no lookahead");
  expect_every_process_fails(parse_machine("mesh:4x4,barrier=hardware,barrier_us=0"), ring, 2,
                             "hardware barrier releases with no latency");
  Machine buffered = ts_test::prime_machine("mesh:4x4");
  buffered.net.recv_buffer = 4096;
  buffered.costs.recv_overhead = 0;
  expect_every_process_fails(buffered, ring, 2, "receives free bounded receive buffers");
}

}  // namespace

namespace {

// Every catalog algorithm at two sizes split over 2 processes with real payloads (each algorithm checks
// the data it received) and over 4 with phantom payloads, perturbed (seed `perturb`, 0: not): the
// single process's run. Returns how many (algorithm, size) pairs ran.
int expect_same_split_on_the_catalog(const std::string& machine, std::span<const std::size_t> sizes,
                                     std::uint64_t perturb) {
  const Machine m = parse_machine(machine);
  int compared = 0;
  for (const auto& alg : algorithms::catalog()) {
    if (alg.name.starts_with("selftest/deadlock")) continue;
    for (const std::size_t size : sizes) {
      SCOPED_TRACE(fmt::format("{} {} bytes on {}", alg.name, size, machine));
      RunResult one;
      // alltoallv/ (paper 003) on section 7's generated traffic, the size being t.
      const std::string traffic = alg.name.starts_with("alltoallv/") ? "k=4,l=1/2" : "";
      try {
        one = run(
            m, [&](Proc& p) { alg.program(p, algorithms::run_args(size, 0, false, traffic)); }, phantom());
      } catch (const std::exception&) {
        continue;  // the machine does not suit it (a mesh algorithm on a switch)
      }
      for (const int parts : {2, 4}) {
        RunOptions o = phantom();
        o.phantom_payloads = parts == 4;
        o.perturb = parts == 4 ? perturb : 0;
        const algorithms::Args args = algorithms::run_args(size, 0, !o.phantom_payloads, traffic);
        const ts_test::SplitRun r = ts_test::run_split(
            m, [&](Proc& p) { alg.program(p, args); }, o, parts);
        for (int k = 0; k < parts; ++k) {
          SCOPED_TRACE(fmt::format("process {} of {}", k, parts));
          if (const auto& f = r.failures[static_cast<std::size_t>(k)]) {
            try {
              std::rethrow_exception(f);
            } catch (const std::exception& e) {
              ADD_FAILURE() << "the split run failed: " << e.what();
            }
            continue;
          }
          expect_same_split(r.results[static_cast<std::size_t>(k)], one);
        }
      }
      ++compared;
    }
  }
  return compared;
}

// One test per machine, so that they run side by side; the perturbed runs' sleeps are most of the time.
void expect_the_catalog_split(const std::string& machine, std::vector<std::size_t> sizes, std::uint64_t perturb = 7) {
  const int compared = expect_same_split_on_the_catalog(machine, sizes, perturb);
  std::printf("%s: %d (algorithm, size) pairs split the same\n", machine.c_str(), compared);
  EXPECT_GT(compared, 0);
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnAMesh) {
  expect_the_catalog_split("mesh:8x8", {16, 4100});
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnTheCm5) {
  expect_the_catalog_split("cm5:64", {16, 1100});
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnASwitchCluster) {
  expect_the_catalog_split("switch2:16+16", {16, 4100});
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnTheDelta) {
  expect_the_catalog_split("delta:8x8", {16, 4100});
}

// The Delta's 16x16 too (256 VPs, its alltoalls 65,280 messages each), unperturbed: --perturb's sleeps
// would make it take most of an hour. One test per size, so that the two run side by side: together
// they are the suite's longest (about two minutes on two cores).
TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnTheDelta16x16With16Bytes) {
  expect_the_catalog_split("delta:16x16", {16}, 0);
}

TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnTheDelta16x16With4100Bytes) {
  expect_the_catalog_split("delta:16x16", {4100}, 0);
}

// Paper 001's machine with its inter-level multicast (its sends not held until received, which a split
// run refuses): the HPAM algorithms' forked worms.
TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnAnHpamWithMulticast) {
  expect_the_catalog_split("hpam:1x1/8x8,Q=8,multicast,send_holds_until_received=off", {16, 1100});
}

// Bounded receive buffers (docs/model.md 2.7): a receive frees its message's space in every
// process's copy of the network. With 1,100-byte messages into 16 KiB worms wait for space
// (alltoall/1-lev-dir ends at 20,480.94 us instead of 20,081.64); where the single process ends in
// a message-dependent deadlock (gather/2-lev-rec), every process of the split run does.
TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunWithBoundedReceiveBuffers) {
  expect_the_catalog_split("mesh:8x8,buffer=16384", {16, 1100});
  const Machine m = parse_machine("mesh:8x8,buffer=16384");
  const algorithms::Algorithm& gather = algorithms::find("gather/2-lev-rec");
  const Program program = [&](Proc& p) { gather.program(p, algorithms::Args{1100, 0, false}); };
  ASSERT_NE(failure_in_one_process(m, program, phantom()).find("message-dependent deadlock"), std::string::npos);
  expect_the_single_processs_deadlock_report(m, program, {2});
}

// Bounded receive buffers with flow control (docs/model.md 2.16): a send takes space at its destination
// or goes by rendezvous, decided at the window's end by every process in the sequential order. With
// 4 KiB of buffer 1,100-byte messages often find it full.
TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunWithFlowControl) {
  expect_the_catalog_split("mesh:8x8,eager_limit=2048,buffer=4096", {16, 1100});
}

// The preset holds every send until its receive completes (docs/model.md 2.21): a receive in one
// process completes a send in another.
TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnAnHpamWithHeldSends) {
  expect_the_catalog_split("hpam:1x1/8x8,Q=8,multicast", {16, 1100});
}

// ... and with an eager limit, every message above it by rendezvous: the clears to send are sent in
// their requests' arrivals, and an arrival the network schedules at the instant it handles, with a
// lower message id than the event that schedules it, comes after that event (Engine::hand_over).
// Unperturbed: the perturbed runs' sleeps over 4 processes would take minutes.
TEST(Partition, TheCatalogSplitOverProcessesIsTheSingleProcesssRunOnAnHpamWithHeldSendsAndRendezvous) {
  expect_the_catalog_split("hpam:1x1/8x8,Q=8,eager_limit=512", {16, 1100}, 0);
}

}  // namespace
