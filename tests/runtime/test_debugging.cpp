// Debugging message ordering (docs/debugging.md): deadlock reports that name the
// wait-for cycle, evidence written when a run fails, internal messages left out, livelocks
// detected in virtual time.
#include <gtest/gtest.h>

#include "support/run_error.hpp"
#include "support/model.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/model.hpp"
#include "support/trace_check.hpp"

using namespace touchstone;

namespace {

using ts_test::run_error;

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Every rank receives from the previous one before it sends: the cycle is 0 <- 2 <- 1 <- 0, found
// from rank 0 along its receive's source. Each call carries the annotation the program gave.
TEST(DeadlockCycle, ApplicationDeadlockNamesTheWaitForCycleWithSourceLocations) {
  for (Execution e : {Execution::fibers, Execution::threads}) {
    int line = 0;
    RunOptions o;
    o.execution = e;
    const std::string report = run_error(ts_test::prime_machine("mesh:1x3"), [&](Proc& p) {
      std::vector<std::byte> b(8);
      const int n = p.size();
      p.annotate("ring"); line = __LINE__;
      p.recv((p.rank() + n - 1) % n, 0, b);
      p.send((p.rank() + 1) % n, 0, b);
    }, o);
    const std::string at = fmt::format(" at test_debugging.cpp:{} ring", line);
    EXPECT_NE(report.find("Wait-for cycle (3 rank(s)):\n"
                          "  rank 0 waits in recv(source=2, tag=0)" + at + " for rank 2\n"
                          "  rank 2 waits in recv(source=1, tag=0)" + at + " for rank 1\n"
                          "  rank 1 waits in recv(source=0, tag=0)" + at + " for rank 0\n"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("rank 1 blocked since t=0 us in wait for recv(source=0, tag=0)" + at),
              std::string::npos) << report;
  }
}

// Rank 0 sends tag 1 where rank 1 waits for tag 0, then waits for rank 1: the message that could
// have broken the cycle is named with the reason it did not match.
TEST(DeadlockCycle, UnmatchedMessageThatCouldHaveBrokenTheCycleIsNamed) {
  const std::string report = run_error(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    std::vector<std::byte> b(8);
    if (p.rank() == 0) {
      p.send(1, 1, b);
      p.recv(1, 0, b);
    } else {
      p.recv(0, 0, b);
      p.send(0, 0, b);
    }
  });
  EXPECT_NE(report.find("Wait-for cycle (2 rank(s)):\n"
                        "  rank 0 waits in recv(source=1, tag=0) for rank 1\n"
                        "  rank 1 waits in recv(source=0, tag=0) for rank 0\n"
                        "Unmatched messages that could have broken it (1):\n"
                        "  message #0 from 0 to 1, tag 1, 8 bytes, arrived t="),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("(the receive wants tag 0)"), std::string::npos) << report;
}

TEST(DeadlockCycle, WaitForFinishedRanksIsNotACycle) {
  const std::string report = run_error(ts_test::prime_machine("mesh:1x3"), [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() == 2) p.recv(any_source, 9, b);
  });
  EXPECT_NE(report.find("No wait-for cycle: the blocked ranks wait for ranks that have finished:\n"
                        "  rank 2 waits in recv(source=any, tag=9) for rank(s) 0, 1, finished\n"),
            std::string::npos)
      << report;
}

// Rank 0 never enters the software barrier the others are in, and waits for rank 1. The report
// names the barrier, not its dissemination receives, and leaves the barrier's messages to rank 0
// out of the unmatched list unless the run asks for internal messages.
TEST(DeadlockCycle, InternalBarrierMessagesAreLeftOutUnlessAsked) {
  Machine m = ts_test::prime_machine("mesh:2x2");
  ASSERT_EQ(m.net.barrier, BarrierKind::software);
  const Program prog = [](Proc& p) {
    std::vector<std::byte> b(4);
    if (p.rank() == 0) p.recv(1, 0, b);
    else p.barrier();
  };
  const std::string plain = run_error(m, prog);
  EXPECT_NE(plain.find("rank 1 blocked since t="), std::string::npos) << plain;
  EXPECT_NE(plain.find("in barrier (a runtime collective)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("No unmatched messages."), std::string::npos) << plain;
  EXPECT_NE(plain.find("rank 0 waits in recv(source=1, tag=0) for rank 1\n"), std::string::npos) << plain;
  RunOptions o;
  o.report_internal = true;
  const std::string full = run_error(m, prog, o);
  EXPECT_EQ(full.find("a runtime collective"), std::string::npos) << full;
  // Rank 3 signals rank 0 in the barrier's first round (3 + 1 mod 4): that message sits at rank 0.
  EXPECT_NE(full.find("message #"), std::string::npos) << full;
  EXPECT_NE(full.find(" from 3 to 0, tag 0, 0 bytes"), std::string::npos) << full;
}

// A failed run leaves its trace and order log, up to the failure, and says so.
TEST(FailureEvidence, DeadlockedRunWritesTraceAndOrderLog) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("ts_evidence_{}", ::getpid());
  std::filesystem::create_directories(dir);
  RunOptions o;
  o.trace_file = (dir / "t.json").string();
  o.order_log_file = (dir / "o.txt").string();
  const std::string report = run_error(ts_test::prime_machine("mesh:1x2"), [](Proc& p) {
    std::vector<std::byte> b(8);
    if (p.rank() == 0) p.send(1, 1, b);
    p.recv(1 - p.rank(), 0, b);
  }, o);
  EXPECT_NE(report.find("Written up to the failure at t="), std::string::npos) << report;
  EXPECT_NE(report.find("the trace '" + o.trace_file + "' and the order log '" + o.order_log_file + "'"),
            std::string::npos) << report;
  const auto trace = nlohmann::json::parse(slurp(o.trace_file));
  int failed_spans = 0;
  for (const auto& ev : trace["traceEvents"])
    if (ev.value("name", "") == "blocked" && ev["args"]["detail"].get<std::string>().find("(when the run failed)") !=
                                                 std::string::npos)
      ++failed_spans;
  EXPECT_EQ(failed_spans, 2);
  ts_test::check_trace(o.trace_file);
  const std::string log = slurp(o.order_log_file);
  EXPECT_NE(log.find("send #0 to 1 tag 1 size 8"), std::string::npos) << log;
  std::filesystem::remove_all(dir);
}

// A run that fails with worms still waiting in the network (both ranks of mesh:1x2 send two
// 64-byte messages into 64-byte receive buffers before receiving): its trace ends those waits at
// the failure, each still naming what it waits for, and stays whole for a viewer.
TEST(FailureEvidence, WaitsStillOpenInTheNetworkEndAtTheFailure) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.net.recv_buffer = 64;
  RunOptions o;
  o.trace_file = testing::TempDir() + "/open_waits.json";
  const std::string report = run_error(m, [](Proc& p) {
    std::vector<std::byte> b(64);
    p.send(1 - p.rank(), 0, b);
    p.send(1 - p.rank(), 0, b);
    p.recv(1 - p.rank(), 0, b);
    p.recv(1 - p.rank(), 0, b);
  }, o);
  ASSERT_NE(report.find("deadlock at t="), std::string::npos) << report;
  const ts_test::CheckedTrace t = ts_test::check_trace(o.trace_file);
  std::vector<std::string> open;
  for (const auto& s : t.slices)
    if (s.pid == 3 && s.detail.find("(when the run failed)") != std::string::npos) open.push_back(s.detail);
  std::sort(open.begin(), open.end());
  ASSERT_EQ(open.size(), 2u) << report;
  EXPECT_NE(open[0].find("packet 0 of message #2 (0 -> 1) had waited "), std::string::npos) << open[0];
  EXPECT_NE(open[0].find(" for receive-buffer space at node 1 (64 of 64 bytes in use)"), std::string::npos) << open[0];
  EXPECT_NE(open[1].find("packet 0 of message #3 (1 -> 0) had waited "), std::string::npos) << open[1];
}

// Rank 0 polls for a message rank 1 never sends (rank 1 waits for rank 0). Timeline: rank 0's
// first iprobe at t=0 still sees rank 1's start-up pending; its second, at probe_cost, finds the
// world quiet (rank 1 blocked, nothing in flight): the first futile poll; the k-th futile poll is at
// k probe_cost, and the 65,536th (kQuietPollsOfALivelock, runtime/src/livelock.hpp) is reported.
TEST(Livelock, PollingWhileNothingCanChangeIsReportedAtItsLastAllowedQuietPoll) {
  for (Execution e : {Execution::fibers, Execution::threads}) {
    const Machine m = ts_test::prime_machine("mesh:1x2");
    RunOptions o;
    o.execution = e;
    const std::string report = run_error(m, [](Proc& p) {
      std::vector<std::byte> b(8);
      if (p.rank() == 0) {
        while (!p.iprobe(1, 5)) {
        }
      } else {
        p.recv(0, 3, b);
      }
    }, o);
    EXPECT_NE(report.find(fmt::format("livelock at t={} us: rank 0 polls in a loop (iprobe(source=1, tag=5))",
                                      to_us(65'536 * m.costs.probe_cost))),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("rank 1 blocked since t=0 us in wait for recv(source=0, tag=3)"), std::string::npos)
        << report;
  }
}

// A correct program may poll a quiet world a bounded number of times and then act (MPICH's
// rma/linked_list gives a progress engine 100 MPI_Iprobe calls while the others wait): 65,535
// quiet polls (after the first poll, which sees rank 1's start-up pending) and a send run to the
// end; one quiet poll more is the livelock.
TEST(Livelock, BoundedPollingOfAQuietWorldIsNotALivelock) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  auto program = [](int polls) {
    return [polls](Proc& p) {
      std::vector<std::byte> b(8);
      if (p.rank() == 0) {
        for (int i = 0; i < polls; ++i) EXPECT_FALSE(p.iprobe(1, 5));
        p.send(1, 3, b);
      } else {
        p.recv(0, 3, b);
      }
    };
  };
  for (int polls : {100, 65'536}) {
    // Each iprobe that finds nothing costs probe_cost; then the send to the neighbour (one hop).
    const ts_test::Model x{m};
    const Time arrival = x.arrival_cf(x.handed(polls * m.costs.probe_cost, 8), 1, 8);
    EXPECT_EQ(run(m, program(polls)).makespan, x.recv_done(0, arrival, 8)) << polls;
  }
  const std::string report = run_error(m, program(65'537));
  EXPECT_NE(report.find(fmt::format("livelock at t={} us: rank 0 polls in a loop (iprobe(source=1, tag=5))",
                                    to_us(65'536 * m.costs.probe_cost))),
            std::string::npos)
      << report;
}

// A test() loop on a receive nobody will match, while the other rank alternates two polls: each
// rank is named for its own loop only once the world is quiet.
TEST(Livelock, TestLoopOnAnUnmatchableReceiveIsReported) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  const std::string report = run_error(m, [](Proc& p) {
    std::vector<std::byte> b(8);
    if (p.rank() == 1) {
      Request r = p.irecv(0, 0, b);
      while (!p.test(r)) {
      }
    }
  });
  EXPECT_NE(report.find("livelock at t="), std::string::npos) << report;
  EXPECT_NE(report.find("rank 1 polls in a loop (test of recv(source=0, tag=0))"), std::string::npos) << report;
}

// Polling that ends because the polling VP itself acts (a bounded retry loop that then sends) is
// not a livelock when each poll sees something in flight.
TEST(Livelock, PollingForAMessageInFlightIsNotALivelock) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  int polls = 0;
  run(m, [&](Proc& p) {
    std::vector<std::byte> b(8);
    if (p.rank() == 0) {
      p.compute(50'000);
      p.send(1, 0, b);
    } else {
      while (!p.iprobe(0, 0)) ++polls;
      p.recv(0, 0, b);
    }
  });
  EXPECT_GT(polls, 100);
}

// Who blocked whom: on mesh:1x3 rank 1's 65-byte message M1 (handed 13 ps after rank 0's 64-byte
// M0, one hop closer) takes link 1->2 at h1 + t_hop, before M0's header wants it at h0 + 2 t_hop
// (13 < 23); M0 then takes the link between M1's two packets, and M1's second packet waits for
// it. --explain names the link, both waits and what held the link; the two waits add up to the
// run's blocked time. The trace shows each wait on the link's "waits" track, each blocker's hold
// on the link's own track and an arrow from the hold to the wait; every arrow binds.
TEST(Explain, NamesTheChannelTheWaitAndTheWormInTheWay) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const ts_test::Model x{m};
  RunOptions o;
  o.explain = true;
  o.trace_file = testing::TempDir() + "/explain.json";
  const RunResult r = run(m, [](Proc& p) {
    std::vector<std::byte> b(65);
    if (p.rank() == 0) p.send(2, 0, std::span(b).first(64));
    if (p.rank() == 1) p.send(2, 0, b);
    if (p.rank() == 2) {
      p.recv(0, 0, b);
      p.recv(1, 0, b);
    }
  }, o);
  // M1's header takes the link at `took1`; its first packet's tail leaves it at r1 (one position
  // behind the ejection port, which the header took at h1 + 2 t_hop: B*b - t_hop later). M0 waits
  // from w0 to r1 and holds the link until its own tail leaves, r0 (the same way: M0 takes the
  // ejection port at r1 + t_hop, just as M1's first tail leaves it); M1's second packet starts when the
  // first has left the injection port (h1 + B*b) and wants the link at r1, then waits until r0.
  const Time hop = x.hop(), h0 = x.handed(0, 64), h1 = x.handed(0, 65);
  const Time took1 = h1 + hop, r1 = h1 + 2 * hop + x.wire(65, 0) * x.b(1) - hop;
  const Time w0 = h0 + 2 * hop, r0 = r1 + hop + x.wire(64, 0) * x.b(2) - hop;
  ASSERT_EQ(h1 + x.wire(65, 0) * x.b(1) + hop, r1);
  EXPECT_EQ(r.stats.blocked_time, (r1 - w0) + (r0 - r1));
  auto us = [](Time t) { return fmt::format("{}.{:06} us", t / 1'000'000, t % 1'000'000); };
  EXPECT_EQ(r.explanation,
            fmt::format("explain: where worms waited, by kind of wait, each with its resources of most blocked time:\n"
                        "links: {0} blocked over 2 wait(s) at 1 of them\n"
                        "  link (0,1)->(0,2): {0} blocked over 2 wait(s)\n"
                        "the 2 longest waits of headers in the network, each with what was in its way and what "
                        "that worm waited for:\n"
                        "  packet 1 of message #1 (1 -> 2) waited {1} from t={2} for link (0,1)->(0,2) held by "
                        "packet 0 of message #0 (0 -> 2)\n"
                        "  packet 0 of message #0 (0 -> 2) waited {3} from t={4} for link (0,1)->(0,2) held by "
                        "packet 0 of message #1 (1 -> 2)\n"
                        "no chain: no worm waited for a worm that was waiting itself\n",
                        us(r.stats.blocked_time), us(r0 - r1), us(r1), us(r1 - w0), us(w0)));
  const ts_test::CheckedTrace t = ts_test::check_trace(o.trace_file);
  // Network slices (process 3) by track name: the holds, then the waits.
  std::map<std::string, std::vector<std::tuple<std::string, Time, Time>>> tracks;
  for (const auto& s : t.slices)
    if (s.pid == 3) tracks[t.thread_names.at({s.pid, s.tid})].emplace_back(s.name, s.start, s.end);
  for (auto& [name, list] : tracks) std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return std::get<1>(a) < std::get<1>(b); });
  using S = std::vector<std::tuple<std::string, Time, Time>>;
  EXPECT_EQ(tracks, (std::map<std::string, S>{
                        {"link (0,1)->(0,2)", S{{"#1 (1 -> 2)", took1, r1}, {"#0 (0 -> 2)", r1, r0}}},
                        {"waits for link (0,1)->(0,2)", S{{"blocked header", w0, r1}, {"blocked header", r1, r0}}}}));
  // Each arrow leads from the hold of the worm a wait names to that wait.
  int arrows = 0;
  for (const auto& [id, f] : t.flows) {
    if (f.name != "blocked by" || !f.from || !f.to) continue;
    ++arrows;
    const std::string holder = f.from->name.substr(1, f.from->name.find(' ') - 1);  // "#1 (1 -> 2)" -> "1"
    EXPECT_NE(f.to->detail.find("held by packet 0 of message #" + holder + " "), std::string::npos)
        << f.from->name << " -> " << f.to->detail;
  }
  EXPECT_EQ(arrows, 2);
}

}  // namespace

namespace {

// Regression: a worm's Packet goes back to the pool when its header has streamed out, while its
// tail still holds the links behind. On mesh:1x3, M0 (0 -> 2, one 64-byte packet, W = 95 wire
// bytes, b = 7 ps) is handed at h0 and its header takes link 1->2 at h0 + 2 t_hop and the
// ejection port at h0 + 3 t_hop; its tail leaves the link at h0 + 3 t_hop + W b - t_hop. Rank 1
// computes 100 ps and sends M1 (1 -> 2, same size): handed at h0 + 100, M1's packet is the pooled
// one M0's header freed, and its header wants link 1->2 at h0 + 100 + t_hop, while M0's tail is
// still on it. --explain used to name M1 as blocked by its own packet.
TEST(Explain, NamesTheWormWhoseTailHoldsTheLinkNotAReusedPacket) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  const ts_test::Model model{m};
  RunOptions o;
  o.explain = true;
  const RunResult r = run(m, [](Proc& p) {
    std::vector<std::byte> b(64);
    if (p.rank() == 0) p.send(2, 0, b);
    if (p.rank() == 1) {
      p.compute(100);
      p.send(2, 0, b);
    }
    if (p.rank() == 2) {
      p.recv(0, 0, b);
      p.recv(1, 0, b);
    }
  }, o);
  const Time h0 = model.handed(0, 64), hop = model.hop(), body = model.wire(64, 0) * model.b(2);
  const Time wants = h0 + 100 + hop, freed = h0 + 3 * hop + body - hop;
  ASSERT_LT(h0 + 3 * hop, h0 + 100);  // M0's header is out before M1 starts: its packet is reused
  ASSERT_LT(wants, freed);
  auto us = [](Time t) { return fmt::format("{}.{:06} us", t / 1'000'000, t % 1'000'000); };
  EXPECT_EQ(r.explanation,
            fmt::format("explain: where worms waited, by kind of wait, each with its resources of most blocked time:\n"
                        "links: {0} blocked over 1 wait(s) at 1 of them\n"
                        "  link (0,1)->(0,2): {0} blocked over 1 wait(s)\n"
                        "the 1 longest waits of headers in the network, each with what was in its way and what "
                        "that worm waited for:\n"
                        "  packet 0 of message #1 (1 -> 2) waited {0} from t={1} for link (0,1)->(0,2) held by "
                        "packet 0 of message #0 (0 -> 2)\n"
                        "no chain: no worm waited for a worm that was waiting itself\n",
                        us(freed - wants), us(wants)));
  EXPECT_EQ(r.stats.blocked_time, freed - wants);
}

// A failed run's report gives the explanation after the failure's own message, which (a VP's
// exception) does not end its line: "... came" then "explain:" on a line of its own.
TEST(Explain, AFailedRunsReportStartsTheExplanationOnALineOfItsOwn) {
  RunOptions o;
  o.explain = true;
  try {
    run(
        ts_test::prime_machine("mesh:1x2"),
        [](Proc& p) {
          std::vector<std::byte> b(8);
          if (p.rank() == 0) p.send(1, 0, b);
          if (p.rank() == 1) {
            p.recv(0, 0, b);
            throw Error("the message came");
          }
        },
        o);
    FAIL() << "the run did not fail";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the message came\nexplain: nothing ever waited in the network\ntrace_hash "),
              std::string::npos)
        << what;
  }
}

}  // namespace

namespace {

// An injection wait: with a CPU that writes bytes for free (send_per_byte 0), rank 0's second
// 1000-byte isend (handed at h1 = 2 C_send) finds the injection port still held by the first
// message, whose packet k holds it from h0 + k*B*b; it starts when the first's last packet has
// left, at h0 + W*b. --explain lists it apart from the waits of headers in the network; the trace
// shows it with an arrow from the packet that held the port.
TEST(Explain, NamesTheMessageQueuedForTheInjectionPort) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.costs.send_per_byte = 0;
  const ts_test::Model x{m};
  RunOptions o;
  o.explain = true;
  o.trace_file = testing::TempDir() + "/injection.json";
  const RunResult r = run(m, [](Proc& p) {
    std::vector<std::byte> a(1000), b(1000);
    if (p.rank() == 0) {
      std::vector<Request> rs;
      rs.push_back(p.isend(1, 0, a));
      rs.push_back(p.isend(1, 1, b));
      p.waitall(rs);
    }
    if (p.rank() == 1) {
      p.recv(0, 0, a);
      p.recv(0, 1, b);
    }
  }, o);
  const Time h0 = x.handed(0, 1000), h1 = h0 + x.send_cost(1000), b = x.b(1);
  const Time started = h0 + x.wire_total(1000) * b;
  const Time holder = (h1 - h0) / (x.wire(1000, 0) * b);  // full packets before the last
  ASSERT_LT(holder, 15);
  auto us = [](Time t) { return fmt::format("{}.{:06} us", t / 1'000'000, t % 1'000'000); };
  EXPECT_EQ(r.explanation,
            fmt::format("explain: where worms waited, by kind of wait, each with its resources of most blocked time:\n"
                        "injection ports (messages queued to start): {0} blocked over 1 wait(s) at 1 of them\n"
                        "  injection port 0 of node 0: {0} blocked over 1 wait(s)\n"
                        "the 0 longest waits of headers in the network, each with what was in its way and what "
                        "that worm waited for:\n"
                        "no chain: no worm waited for a worm that was waiting itself\n",
                        us(started - h1)));
  const ts_test::CheckedTrace t = ts_test::check_trace(o.trace_file);
  int arrows = 0;
  for (const auto& [id, f] : t.flows)
    if (f.name == "blocked by" && f.from && f.to) {
      ++arrows;
      EXPECT_EQ(f.from->name, "#0 (0 -> 1)");
      // The port's hold by that message's next packet (taken ahead, from when packet `holder` leaves).
      EXPECT_EQ(f.from->start, h0 + (holder + 1) * x.wire(1000, 0) * b);
      EXPECT_EQ(t.thread_names.at({f.from->pid, f.from->tid}), "injection port 0 of node 0");
      EXPECT_EQ(f.to->detail, fmt::format("message #1 (0 -> 1) waited {} from t={} for injection port 0 of node 0 "
                                          "held by packet {} of message #0 (0 -> 1)",
                                          us(started - h1), us(h1), holder));
    }
  EXPECT_EQ(arrows, 1);
}

}  // namespace
