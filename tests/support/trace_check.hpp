// Reads a Chrome Trace Event JSON file the way a trace viewer must, and checks what a viewer
// needs to show it whole: every slice has a category and nests properly with the other slices of
// its thread (viewers drop slices that overlap partially), every flow has one start and one end
// with the same category, and each end binds to exactly one slice: the deepest slice of its thread
// that contains it, with no other slice of the thread ending or starting exactly there (a flow
// event on a boundary between two slices binds to either, depending on the viewer). Chrome's trace
// engine binds a flow event only to an event with its exact timestamp, process, thread and
// category: each flow event must have one, a zero-length anchor slice (args.flow_anchor, kept out
// of `slices`) or a slice that starts there. tests/trace_engine/ parses traces with Chrome's engine
// itself.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts_test {

struct TraceSlice {
  int pid = 0, tid = 0;
  std::string name, detail;
  std::int64_t start = 0, end = 0;  // picoseconds (the trace prints microseconds with 6 decimals)
};

struct TraceFlow {
  std::string name;
  const TraceSlice* from = nullptr;  // the slices the flow's start and end bind to
  const TraceSlice* to = nullptr;
};

struct CheckedTrace {
  nlohmann::json json;
  std::vector<TraceSlice> slices;
  std::map<std::uint64_t, TraceFlow> flows;  // by flow id
  std::map<std::pair<int, int>, std::string> thread_names;
  std::vector<TraceSlice> anchors;  // zero-length slices that give flow events a start to bind to
};

inline std::int64_t trace_ps(const nlohmann::json& us) { return std::llround(us.get<double>() * 1e6); }

namespace detail {
// The slice a flow event at ts on (pid, tid) binds to; null (and a test failure) unless exactly
// one deepest slice contains ts and no slice boundary of the thread other than a zero-length
// slice's lies at ts.
inline const TraceSlice* bind(const std::vector<TraceSlice>& slices, const nlohmann::json& e) {
  const int pid = e.at("pid"), tid = e.at("tid");
  const std::int64_t ts = trace_ps(e.at("ts"));
  const TraceSlice* deepest = nullptr;
  for (const auto& s : slices) {
    if (s.pid != pid || s.tid != tid || ts < s.start || ts > s.end) continue;
    if (s.end > s.start && (ts == s.start || ts == s.end)) {
      ADD_FAILURE() << "flow event on the boundary of slice '" << s.name << "' [" << s.start << ", " << s.end
                    << "] ps: " << e.dump();
      return nullptr;
    }
    if (!deepest || (s.end - s.start) < (deepest->end - deepest->start)) deepest = &s;
  }
  if (!deepest) ADD_FAILURE() << "flow event inside no slice of its thread: " << e.dump();
  return deepest;
}
}  // namespace detail

inline CheckedTrace check_trace(const std::string& path) {
  CheckedTrace t;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  t.json = nlohmann::json::parse(ss.str());  // throws on invalid JSON
  std::vector<const nlohmann::json*> flow_events;
  for (const auto& e : t.json.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(e.contains("cat")) << "an event without a category: " << e.dump();
    EXPECT_GE(e.at("pid").get<int>(), 1) << e.dump();
    if (ph == "M") {
      if (e.at("name") == "thread_name") t.thread_names[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    } else if (ph == "X") {
      EXPECT_EQ(e.at("cat"), "touchstone") << e.dump();
      EXPECT_GE(e.at("tid").get<int>(), 1) << e.dump();
      const std::int64_t start = trace_ps(e.at("ts"));
      if (e.at("args").contains("flow_anchor")) {
        EXPECT_EQ(trace_ps(e.at("dur")), 0) << e.dump();
        t.anchors.push_back(TraceSlice{e.at("pid"), e.at("tid"), e.at("name"), e.at("args").at("flow_anchor"), start, start});
        continue;
      }
      t.slices.push_back(TraceSlice{e.at("pid"), e.at("tid"), e.at("name"), e.at("args").value("detail", ""), start,
                                    start + trace_ps(e.at("dur"))});
      EXPECT_GE(t.slices.back().end, start) << e.dump();
    } else if (ph == "s" || ph == "f") {
      EXPECT_EQ(e.at("cat"), "touchstone") << "a flow event the slices' category does not bind: " << e.dump();
      EXPECT_TRUE(e.contains("args")) << e.dump();
      if (ph == "f") {
        EXPECT_EQ(e.value("bp", ""), "e") << "a flow end that does not bind to its enclosing slice: " << e.dump();
      }
      flow_events.push_back(&e);
    } else {
      ADD_FAILURE() << "an event of an unexpected phase: " << e.dump();
    }
  }
  // Slices of a thread nest: sorted by start (longest first), each lies inside or after the others.
  std::map<std::pair<int, int>, std::vector<const TraceSlice*>> by_thread;
  for (const auto& s : t.slices) by_thread[{s.pid, s.tid}].push_back(&s);
  for (auto& [thread, list] : by_thread) {
    EXPECT_TRUE(t.thread_names.count(thread)) << "thread " << thread.first << "/" << thread.second << " has no name";
    std::sort(list.begin(), list.end(), [](const TraceSlice* a, const TraceSlice* b) {
      return a->start != b->start ? a->start < b->start : a->end > b->end;
    });
    std::vector<const TraceSlice*> open;
    for (const TraceSlice* s : list) {
      while (!open.empty() && open.back()->end <= s->start) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(s->end, open.back()->end) << "slices overlap partially on thread " << thread.first << "/"
                                            << thread.second << ": '" << open.back()->name << "' and '" << s->name
                                            << "' (" << s->detail << ")";
      }
      open.push_back(s);
    }
  }
  for (const nlohmann::json* e : flow_events) {
    const std::uint64_t id = e->at("id");
    EXPECT_GE(id, 1u);
    TraceFlow& f = t.flows[id];
    const TraceSlice* s = detail::bind(t.slices, *e);
    const int pid = e->at("pid"), tid = e->at("tid");
    const std::int64_t ts = trace_ps(e->at("ts"));
    auto starts_here = [&](const TraceSlice& x) { return x.pid == pid && x.tid == tid && x.start == ts; };
    EXPECT_TRUE(std::any_of(t.anchors.begin(), t.anchors.end(), starts_here) ||
                std::any_of(t.slices.begin(), t.slices.end(), starts_here))
        << "a flow event with no event of its timestamp to bind to in Chrome's trace engine: " << e->dump();
    if (e->at("ph") == "s") {
      EXPECT_EQ(f.from, nullptr) << "duplicate flow start " << e->dump();
      f.from = s;
    } else {
      EXPECT_EQ(f.to, nullptr) << "duplicate flow end " << e->dump();
      f.to = s;
    }
    if (!f.name.empty()) {
      EXPECT_EQ(f.name, e->at("name").get<std::string>()) << e->dump();
    }
    f.name = e->at("name");
  }
  for (const auto& [id, f] : t.flows) EXPECT_TRUE(f.from && f.to) << "flow " << id << " (" << f.name << ") is not whole";
  return t;
}

}  // namespace ts_test
