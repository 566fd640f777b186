// Tracing (docs/cli.md): the Chrome Trace Event JSON (a track per VP with send/receive/compute spans,
// an s/f flow pair per message) and the plain-text per-VP message order log.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/model.hpp"
#include "support/trace_check.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Exactly how the trace prints a time: microseconds with 6 decimals (picosecond exact).
std::string us(Time t) { return fmt::format("{}.{:06}", t / 1'000'000, t % 1'000'000); }

constexpr std::size_t kSize = 100;
constexpr Time kCompute = 777;

struct Traced {
  RunResult result;
  std::string trace, order;
};

Traced traced_ring(const Machine& m, const std::string& name) {
  RunOptions o;
  o.trace_file = testing::TempDir() + "/" + name + ".json";
  o.order_log_file = testing::TempDir() + "/" + name + ".order.txt";
  Traced t;
  t.result = run(
      m,
      [](Proc& p) {
        const int n = p.size(), next = (p.rank() + 1) % n, prev = (p.rank() + n - 1) % n;
        const auto out = ts_test::bytes(kSize, p.rank());
        std::vector<std::byte> in(kSize);
        p.sendrecv(next, 0, out, prev, 0, in);
        p.compute(kCompute);
        p.barrier();
      },
      o);
  t.trace = slurp(o.trace_file);
  t.order = slurp(o.order_log_file);
  ts_test::check_trace(o.trace_file);
  return t;
}

TEST(Trace, ChromeTraceIsValidJsonWithSpansPerVpAndFlowPairs) {
  const Machine m = ts_test::prime_machine("mesh:2x2");  // software barrier: 2 rounds x 4 messages
  const Model x{m};
  const Traced t = traced_ring(m, "ring");
  ASSERT_FALSE(t.trace.empty());
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(t.trace)) << t.trace.substr(0, 400);
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_TRUE(j["traceEvents"].is_array());

  std::map<int, std::set<std::string>> spans_by_tid;
  std::set<int> named_threads;
  std::map<std::uint64_t, nlohmann::json> starts, finishes;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      ASSERT_TRUE(e.contains("tid") && e.contains("ts") && e.contains("dur")) << e.dump();
      EXPECT_EQ(e.value("cat", ""), "touchstone") << "a slice without the flows' category: " << e.dump();
      EXPECT_EQ(e["pid"], 1) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
      spans_by_tid[e["tid"].get<int>()].insert(e["name"].get<std::string>());
      // Every VP's send span starts at 0 and lasts C_send + size*send_per_byte.
      if (e["name"] == "send" && e["args"]["detail"].get<std::string>().find(fmt::format("tag 0 {} B", kSize)) != std::string::npos) {
        EXPECT_EQ(e["ts"].get<double>(), 0.0);
        EXPECT_EQ(e["dur"].get<double>(), to_us(x.send_cost(kSize))) << e.dump();
      }
      if (e["name"] == "compute") {
        EXPECT_EQ(e["dur"].get<double>(), to_us(kCompute)) << e.dump();
      }
    } else if (ph == "M" && e["name"] == "thread_name") {
      named_threads.insert(e["tid"].get<int>());
    } else if (ph == "s") {
      EXPECT_TRUE(starts.emplace(e["id"].get<std::uint64_t>(), e).second) << "duplicate flow start " << e.dump();
    } else if (ph == "f") {
      EXPECT_TRUE(finishes.emplace(e["id"].get<std::uint64_t>(), e).second) << "duplicate flow end " << e.dump();
    }
  }
  EXPECT_EQ(named_threads, (std::set<int>{1, 2, 3, 4}));  // thread ids from 1: rank + 1
  for (int tid = 1; tid <= 4; ++tid) {
    for (const char* name : {"send", "recv", "compute", "barrier"})
      EXPECT_TRUE(spans_by_tid[tid].count(name)) << "VP " << tid - 1 << " has no " << name << " span";
  }
  EXPECT_EQ(spans_by_tid.size(), 4u);  // one track per VP, nothing else
  // One arrow per message, from the sender's track to the receiver's, not going back in time.
  EXPECT_EQ(starts.size(), t.result.stats.messages);
  EXPECT_EQ(t.result.stats.messages, 4u + 8u);
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.count(id)) << "flow " << id << " has no end";
    const auto& f = finishes.at(id);
    EXPECT_LE(s["ts"].get<double>(), f["ts"].get<double>());
    EXPECT_NE(s["tid"].get<int>(), f["tid"].get<int>());
  }
  EXPECT_EQ(finishes.size(), starts.size());
}

TEST(Trace, OrderLogListsEachVpsSendsAndReceivesInProgramOrder) {
  const Machine m = ts_test::prime_machine("mesh:2x2");
  const Model x{m};
  const Traced t = traced_ring(m, "order");
  ASSERT_FALSE(t.order.empty());
  // Split into per-VP sections.
  std::map<int, std::vector<std::string>> lines;
  std::istringstream in(t.order);
  int vp = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VP ", 0) == 0) vp = std::stoi(line.substr(3));
    else if (vp >= 0 && !line.empty()) lines[vp].push_back(line);
  }
  ASSERT_EQ(lines.size(), 4u);
  const Time h = x.handed(0, kSize);
  for (int r = 0; r < 4; ++r) {
    const int next = (r + 1) % 4, prev = (r + 3) % 4;
    const auto& l = lines[r];
    ASSERT_GE(l.size(), 2u + 4u) << r;  // the ring exchange, then 2 barrier rounds of send + recv
    EXPECT_NE(l[0].find("t=0.000000 us"), std::string::npos) << l[0];
    EXPECT_NE(l[0].find(fmt::format("send #{}", r)), std::string::npos) << l[0];  // ids in creation order
    EXPECT_NE(l[0].find(fmt::format("to {} tag 0 size {}", next, kSize)), std::string::npos) << l[0];
    EXPECT_NE(l[1].find(fmt::format("from {} tag 0 size {}", prev, kSize)), std::string::npos) << l[1];
    // Ring neighbours in mesh:2x2 (row-major 0 1 / 2 3): 0->1 and 2->3 take 1 link, 1->2 and
    // 3->0 cross a diagonal (2 links). Rank r receives from prev.
    const int d = (prev == 1 || prev == 3) ? 2 : 1;
    const Time a = x.arrival_cf(h, d, kSize);
    EXPECT_NE(l[1].find(fmt::format("(arrived {} us)", us(a))), std::string::npos) << l[1] << " expected " << us(a);
    int sends = 0, recvs = 0;
    for (const auto& s : l) {
      sends += s.find(" send #") != std::string::npos;
      recvs += s.find(" recv #") != std::string::npos;
    }
    EXPECT_EQ(sends, 3);  // one ring message + 2 barrier rounds
    EXPECT_EQ(recvs, 3);
  }
}

// Strings come from users (machine names, handler names): the JSON library escapes them.
TEST(Trace, MachineNameWithQuotesAndBackslashStaysValidJson) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.name = "my \"lab\" machine\\ 2";
  RunOptions o;
  o.trace_file = testing::TempDir() + "/quoted.json";
  run(m, [](Proc& p) { if (p.rank() == 0) p.send(1, 0, {}); else p.recv(0, 0, {}); }, o);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(slurp(o.trace_file)));
  EXPECT_EQ(j["otherData"]["machine"], m.name);
  EXPECT_EQ(j["traceEvents"][0]["args"]["name"], m.name);
}

// Active-message handlers run on their own track (process 2), so they never overlap the VP's
// spans; the request's arrow ends there. A message never received (a failed run) still has its
// arrow, ending at its arrival on the destination's track.
TEST(Trace, HandlersHaveTheirOwnTrackAndEveryMessageAnArrow) {
  const Machine m = ts_test::prime_machine("mesh:1x2");
  RunOptions o;
  o.trace_file = testing::TempDir() + "/am.json";
  EXPECT_THROW(run(m, [](Proc& p) {
    p.register_word(0, 0);
    p.barrier();
    if (p.rank() == 0) {
      p.fetch_add(1, 0, 5);
      p.send(1, 7, {});  // never received
    }
  }, o), RunError);
  ts_test::check_trace(o.trace_file);
  const auto j = nlohmann::json::parse(slurp(o.trace_file));
  std::map<std::uint64_t, int> start_pid, end_pid;
  int handler_spans = 0, unreceived = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "handler") {
      ++handler_spans;
      EXPECT_EQ(e["pid"], 2) << e.dump();
      EXPECT_EQ(e["tid"], 2) << e.dump();
    }
    if (e["ph"] == "X" && e["name"] == "unreceived") {
      ++unreceived;
      EXPECT_EQ(e["pid"], 4) << e.dump();  // the unreceived messages' own track: "to VP 1"
      EXPECT_EQ(e["tid"], 2) << e.dump();
    }
    if (e["ph"] == "s") start_pid[e["id"].get<std::uint64_t>()] = e["pid"].get<int>();
    if (e["ph"] == "f") end_pid[e["id"].get<std::uint64_t>()] = e["pid"].get<int>();
  }
  EXPECT_EQ(handler_spans, 1);
  EXPECT_EQ(unreceived, 1);
  EXPECT_EQ(start_pid.size(), end_pid.size());
  int to_handler = 0;
  for (const auto& [id, pid] : end_pid) {
    EXPECT_GE(id, 1u);  // flow ids from 1
    to_handler += pid == 2;
  }
  EXPECT_EQ(to_handler, 1);
}

}  // namespace

namespace {

// A contended all-to-all (every rank posts all receives, then sends to rank 0, 1, ... in turn) on
// mesh:3x3 with one ejection port, once with unlimited receive buffers and once with 4 KiB:
// headers wait for links, ejection ports and buffer space, messages for the injection port. The
// trace a viewer reads must stay whole: every slice nests with the others of its thread (waits
// that overlap get lanes of their own), every flow binds to exactly one slice at each end, each
// "blocked by" arrow starts in the hold of the worm the wait names, and every kind of wait is there.
TEST(Trace, EveryFlowBindsInAContendedAllToAll) {
  std::set<std::string> wait_kinds;
  std::string explained;
  for (const std::int64_t buffer : {std::int64_t{-1}, std::int64_t{4096}}) {
    Machine m = ts_test::prime_machine("mesh:3x3");
    m.net.recv_buffer = buffer;
    m.net.packet_payload = 1024;  // one packet a message: a reserved buffer fills without waiting for later packets
    RunOptions o;
    o.trace_file = testing::TempDir() + "/contended.json";
    o.explain = true;
    const RunResult r = run(m, [](Proc& p) {
      const int n = p.size();
      std::vector<std::vector<std::byte>> in(static_cast<std::size_t>(n), std::vector<std::byte>(700));
      const std::vector<std::byte> out(700);
      std::vector<Request> rs;
      for (int k = 1; k < n; ++k) rs.push_back(p.irecv((p.rank() + n - k) % n, 0, in[static_cast<std::size_t>(k)]));
      for (int dst = 0; dst < n; ++dst)  // everyone to 0 first, then to 1, ...
        if (dst != p.rank()) rs.push_back(p.isend(dst, 0, out));
      p.waitall(rs);
    }, o);
    explained += r.explanation;
    const ts_test::CheckedTrace t = ts_test::check_trace(o.trace_file);
    for (const auto& [thread, name] : t.thread_names)
      for (const char* kind : {"waits for link", "waits for ejection port", "waits for injection port",
                               "waits for receive-buffer space"})
        if (thread.first == 3 && name.rfind(kind, 0) == 0) wait_kinds.insert(kind);
    std::size_t arrows = 0, messages = 0;
    for (const auto& [id, f] : t.flows) {
      if (!f.from || !f.to) continue;
      if (f.name == "message") {
        ++messages;
        continue;
      }
      ++arrows;
      ASSERT_EQ(f.name, "blocked by");
      EXPECT_EQ(f.from->pid, 3);
      EXPECT_EQ(f.to->pid, 3);
      // "#12 (3 -> 5)" holds; the wait names "packet K of message #12 (3 -> 5)" as held or queued ahead.
      const std::string who = f.from->name.substr(1);
      EXPECT_NE(f.to->detail.find(" of message #" + who), std::string::npos) << f.from->name << " -> " << f.to->detail;
    }
    EXPECT_EQ(messages, r.stats.messages);
    EXPECT_GT(arrows, 0u);
  }
  EXPECT_EQ(wait_kinds.size(), 4u) << explained;
}

}  // namespace
