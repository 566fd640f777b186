// The bug examples of examples/bugs.hpp, found with the debugging tools (docs/debugging.md): the
// race detector finds each planted race with the margin computed here from the model's formulas
// (tests/support/model.hpp, contention-free: the messages never share a channel), exploration
// finds the failing outcome within 10 runs and --schedule replays it with one trace hash, and the
// send-send exchange deadlocks only with bounded buffers, with its cycle in the report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/run_error.hpp"

#include "examples/bugs.hpp"
#include "support/model.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace touchstone;

namespace {

constexpr std::size_t kWord = sizeof(std::int64_t);

using ts_test::run_error;

// Worker r of mesh:2x2 computes 10r us, then sends one word d_r hops to rank 0:
//   a_r = arrival_cf(handed(10r us, 8), d_r, 8), with d_1 = d_2 = 1, d_3 = 2.
TEST(BugExamples, WildcardCollectRacesWithExactMargins) {
  const Machine m = parse_machine("mesh:2x2");
  const ts_test::Model x{m};
  auto a = [&](int r) { return x.arrival_cf(x.handed(microseconds(10) * r, kWord), r == 3 ? 2 : 1, kWord); };
  RunOptions o;
  o.races = RaceCheck::report;
  const RunResult r = run(m, bugs::wildcard_collect, o);
  ASSERT_EQ(r.races.size(), 2u) << describe_races(r.races);
  EXPECT_EQ(r.races[0].call, 1u);
  EXPECT_EQ(r.races[0].source, 1);
  EXPECT_EQ(r.races[0].arrival, a(1));
  ASSERT_EQ(r.races[0].alternatives.size(), 2u);
  EXPECT_EQ(r.races[0].alternatives[0].source, 2);
  EXPECT_EQ(r.races[0].alternatives[0].margin, a(2) - a(1));
  EXPECT_EQ(r.races[0].alternatives[1].source, 3);
  EXPECT_EQ(r.races[0].alternatives[1].margin, a(3) - a(1));
  EXPECT_EQ(r.races[1].call, 2u);
  EXPECT_EQ(r.races[1].source, 2);
  ASSERT_EQ(r.races[1].alternatives.size(), 1u);
  EXPECT_EQ(r.races[1].alternatives[0].margin, a(3) - a(2));
}

TEST(BugExamples, ExplorationFindsTheWrongSlotAndScheduleReplaysIt) {
  const Machine m = parse_machine("mesh:2x2");
  const Exploration e = explore(m, bugs::wildcard_collect, RunOptions{}, 10);
  EXPECT_FALSE(e.original.failed);
  EXPECT_LE(e.runs, 10);
  ASSERT_FALSE(e.different.empty()) << describe_exploration(e, 10);
  const ExploredRun& bad = e.different[0];
  EXPECT_EQ(format_schedule(bad.schedule), "0:1=2");
  EXPECT_TRUE(bad.failed);
  EXPECT_NE(bad.outcome.find("slot 1 holds 200, expected 100"), std::string::npos) << bad.outcome;
  // The replay fails the same way, with the same events, however the host runs the VPs.
  std::vector<std::string> errors;
  for (Execution ex : {Execution::fibers, Execution::threads})
    for (std::uint64_t perturb : {0, 7}) {
      RunOptions o;
      o.schedule = bad.schedule;
      o.execution = ex;
      o.perturb = perturb;
      errors.push_back(run_error(m, bugs::wildcard_collect, o));
    }
  for (const auto& err : errors) EXPECT_EQ(err, errors[0]);
  // A forced run that completes has one trace hash too: force the order the original had anyway.
  std::vector<std::uint64_t> hashes;
  for (Execution ex : {Execution::fibers, Execution::threads})
    for (std::uint64_t perturb : {0, 7}) {
      RunOptions o;
      o.schedule = parse_schedule("0:1=1,0:2=2");
      o.execution = ex;
      o.perturb = perturb;
      hashes.push_back(run(m, bugs::wildcard_collect, o).trace_hash);
    }
  for (auto h : hashes) EXPECT_EQ(h, hashes[0]);
}

// A failed run has a trace hash too, of everything it did up to the failure. The
// exploration names it beside each failing schedule; replaying the schedule fails with that hash
// under fibers and threads, with and without perturbation, and the evidence files carry it.
TEST(BugExamples, FailedReplayHasTheTraceHashTheExplorationNamed) {
  const Machine m = parse_machine("mesh:2x2");
  const Exploration e = explore(m, bugs::wildcard_collect, RunOptions{}, 10);
  // Three runs fail from the original; two more go on from the first failing ones (rank 0's second
  // receive forced too), failing as their parents did.
  ASSERT_EQ(e.different.size(), 5u) << describe_exploration(e, 10);
  const std::string report = describe_exploration(e, 10);
  std::set<std::uint64_t> distinct;
  for (const ExploredRun& bad : e.different) {
    SCOPED_TRACE(format_schedule(bad.schedule));
    ASSERT_TRUE(bad.failed);
    ASSERT_NE(bad.trace_hash, 0u);
    distinct.insert(bad.trace_hash);
    const std::string hex = fmt::format("{:016x}", bad.trace_hash);
    EXPECT_NE(report.find(format_schedule(bad.schedule) + ": " + bad.outcome + " (trace_hash " + hex + ")"),
              std::string::npos) << report;
    for (Execution ex : {Execution::fibers, Execution::threads})
      for (std::uint64_t perturb : {0, 7, 11}) {
        RunOptions o;
        o.schedule = bad.schedule;
        o.execution = ex;
        o.perturb = perturb;
        try {
          run(m, bugs::wildcard_collect, o);
          ADD_FAILURE() << "the replay completed";
        } catch (const RunError& err) {
          EXPECT_EQ(err.trace_hash, bad.trace_hash);
          EXPECT_NE(std::string(err.what()).find("trace_hash " + hex + " (of the run up to the failure)"),
                    std::string::npos) << err.what();
        }
      }
  }
  EXPECT_EQ(distinct.size(), 5u);  // five different runs, five hashes
  // The evidence of a failed replay names the same hash; recording does not change it.
  const ExploredRun& bad = e.different[0];
  RunOptions o;
  o.schedule = bad.schedule;
  o.trace_file = testing::TempDir() + "/replay_trace.json";
  o.order_log_file = testing::TempDir() + "/replay_order.txt";
  try {
    run(m, bugs::wildcard_collect, o);
    ADD_FAILURE() << "the replay completed";
  } catch (const RunError& err) {
    EXPECT_EQ(err.trace_hash, bad.trace_hash);
  }
  const std::string hex = fmt::format("{:016x}", bad.trace_hash);
  std::ifstream trace(o.trace_file);
  const auto j = nlohmann::json::parse(trace);
  EXPECT_EQ(j.at("otherData").at("trace_hash"), hex);
  EXPECT_EQ(j.at("otherData").at("failed"), true);
  std::ifstream order(o.order_log_file);
  std::stringstream log;
  log << order.rdbuf();
  EXPECT_NE(log.str().find("# trace_hash " + hex + " (of the run up to the failure)\n"), std::string::npos) << log.str();
}

// In a forced run the receive is timed as one naming the forced source: on mesh:1x3 rank 1's word
// wins; recv #1 forced to rank 2 (which sends 100 us later) completes at
// max(posted, a_2) + C_recv + 8 recv_per_byte, exactly as recv(2, ...) would.
TEST(BugExamples, ForcedReceiveIsTimedAsAReceiveFromItsSource) {
  const Machine m = parse_machine("mesh:1x3");
  const ts_test::Model x{m};
  constexpr Time kLater = microseconds(100);
  std::vector<Status> got;
  std::vector<Time> done;
  const Program prog = [&](Proc& p) {
    std::int64_t v = 0;
    if (p.rank() == 0) {
      got.push_back(p.recv(any_source, 0, bugs::as_writable(v)));
      done.push_back(p.now());
    } else {
      if (p.rank() == 2) p.compute(kLater);  // rank 1's message is long gone: no contention
      p.send(0, 0, bugs::as_bytes(v));
    }
  };
  RunOptions o;
  o.schedule = parse_schedule("0:1=2");
  EXPECT_THROW(run(m, prog, o), RunError);  // rank 1's message is left unreceived
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].source, 2);
  const Time a2 = x.arrival_cf(x.handed(kLater, kWord), 2, kWord);
  EXPECT_EQ(got[0].arrival, a2);
  EXPECT_EQ(done[0], x.recv_done(0, a2, kWord));
}

TEST(BugExamples, BadSchedulesAreClearErrors) {
  EXPECT_THROW(parse_schedule("0:1"), UsageError);
  EXPECT_THROW(parse_schedule("a:1=2"), UsageError);
  EXPECT_THROW(parse_schedule(""), UsageError);
  RunOptions o;
  o.schedule = parse_schedule("0:9=1");
  EXPECT_THROW(run(parse_machine("mesh:2x2"), bugs::wildcard_collect, o), UsageError);
  o.schedule = parse_schedule("0:1=9");
  EXPECT_THROW(run(parse_machine("mesh:2x2"), bugs::wildcard_collect, o), UsageError);
  // A valid rank that never sends to the receive: the run deadlocks, and the report says the
  // schedule, not the program, named that source.
  o.schedule = parse_schedule("0:1=0");
  EXPECT_THAT(run_error(parse_machine("mesh:2x2"), bugs::wildcard_collect, o),
              testing::HasSubstr("rank 0 blocked since t=0 us in wait for recv(source=any, tag=0), forced by "
                                 "--schedule 0:1=0 to take rank 0's message at bugs.hpp:35 collect"));
}

// Both ranks wait in their second send: its message waits for receive-buffer space the first
// message fills. Without a bound on the buffer the same program completes.
TEST(BugExamples, SendSendExchangeDeadlocksOnlyWithBoundedBuffers) {
  EXPECT_NO_THROW(run(parse_machine("mesh:1x2"), bugs::send_send_exchange));
  const std::string report = run_error(parse_machine("mesh:1x2,buffer=65536"), bugs::send_send_exchange);
  EXPECT_THAT(report, testing::HasSubstr("Wait-for cycle (2 rank(s)):\n"
                                         "  rank 0 waits in send of message #2 to 1 at bugs.hpp:54 second send for rank 1\n"
                                         "  rank 1 waits in send of message #3 to 0 at bugs.hpp:54 second send for rank 0\n"));
  EXPECT_THAT(report, testing::HasSubstr("The receive buffer of node 0 is full (65536 of 65536 bytes reserved), reserved by:\n"
                                         "  unreceived messages #1 from 1 (65536 B)\n"));
}

// Under an eager limit (rendezvous, docs/model.md 2.16) the same unsafe exchange
// deadlocks already in the first send, as it would with MPI's large messages: each 64 KiB send
// waits for the other rank to post a matching receive. Without a limit it completes.
TEST(BugExamples, SendSendExchangeDeadlocksUnderAnEagerLimit) {
  EXPECT_NO_THROW(run(parse_machine("mesh:1x2,eager_limit=unlimited"), bugs::send_send_exchange));
  const std::string report = run_error(parse_machine("mesh:1x2,eager_limit=4096"), bugs::send_send_exchange);
  const std::string rdv = " (65536 bytes, rendezvous: waiting for the receiver to post a matching receive)";
  EXPECT_NE(report.find("Wait-for cycle (2 rank(s)):\n"
                        "  rank 0 waits in send of message #0 to rank 1" + rdv + " at bugs.hpp:52 first send for rank 1\n"
                        "  rank 1 waits in send of message #2 to rank 0" + rdv + " at bugs.hpp:52 first send for rank 0\n"),
            std::string::npos)
      << report;
}

// mesh:2x2,ports=2. The data (64 KiB, 0 -> 3, 2 hops) is handed at h_d = send_cost(64 Ki); the
// flag goes 0 -> 2 (handed at h_d + send_cost(8)), is received and forwarded by rank 2, 2 -> 3.
// Their routes share no channel (two injection and ejection ports per node), so
//   data arrives at arrival_cf(h_d, 2, 64 Ki)
//   flag arrives at arrival_cf(handed(recv_done(0, arrival_cf(handed(h_d, 8), 1, 8), 8), 8), 1, 8)
// and the flag wins by their difference.
TEST(BugExamples, OvertakingFlagRacesTheDataWithItsExactMargin) {
  const Machine m = parse_machine("mesh:2x2,ports=2");
  const ts_test::Model x{m};
  const std::size_t data = 64 * 1024;
  const Time hd = x.handed(0, data);
  const Time data_arrival = x.arrival_cf(hd, 2, data);
  const Time at2 = x.arrival_cf(x.handed(hd, kWord), 1, kWord);
  const Time flag_arrival = x.arrival_cf(x.handed(x.recv_done(0, at2, kWord), kWord), 1, kWord);
  RunOptions o;
  o.races = RaceCheck::report;
  const std::string report = run_error(m, bugs::overtaking_flag, o);
  EXPECT_NE(report.find("the flag from rank 2 arrived before the data"), std::string::npos) << report;
  Race want;
  want.rank = 3;
  want.call = 1;
  want.want_source = any_source;
  want.want_tag = 0;
  want.source = 2;
  want.arrival = flag_arrival;
  want.label = "bugs.hpp:80 expect the data";
  want.message = 2;
  want.alternatives.push_back(RaceAlternative{0, 0, 0, data_arrival, data_arrival - flag_arrival});
  EXPECT_NE(report.find(describe_races({want})), std::string::npos) << report << "\nwanted:\n" << describe_races({want});
}

}  // namespace
