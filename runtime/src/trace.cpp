#include "trace.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "touchstone/error.hpp"

namespace touchstone::detail {

namespace {
// Chrome trace timestamps are microseconds; printed from integer picoseconds (exact_us), they stay
// exact. A negative time (an engine bug) still prints as a valid JSON number, so the trace can be read.
nlohmann::json ts(Time t) { return nlohmann::json::parse(exact_us(t)); }
// Where a flow event binds to a slice [start, end]: strictly inside it when it lasts 2 ps or more,
// so that a slice ending where the next one starts can never take the arrow.
Time inside(Time start, Time end) { return start + (end - start) / 2; }

// A flow (s/f pair) whose ends bind in both viewers. Perfetto binds a flow event to the slice that
// encloses it, so each end lies strictly inside its slice (`inside`), never on a boundary two slices
// share. Chrome's trace engine binds a flow event only to an event with exactly its timestamp,
// process, thread and category, so each end also gets a zero-length anchor slice of its own there
// (args.flow_anchor), nested in the enclosing slice: Perfetto may take either, both are the spot.
void emit_flow(const std::function<void(const nlohmann::json&)>& emit, const char* name, std::uint64_t id, int from_pid,
               int from_tid, Time from, int to_pid, int to_tid, Time to, bool anchor_end) {
  auto anchor = [&](int pid, int tid, Time t, const char* end) {
    emit({{"name", name}, {"cat", "touchstone"}, {"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", ts(t)}, {"dur", 0},
          {"args", {{"flow_anchor", fmt::format("{} of flow {}", end, id)}}}});
  };
  anchor(from_pid, from_tid, from, "start");
  if (anchor_end) anchor(to_pid, to_tid, to, "end");
  emit({{"name", name}, {"cat", "touchstone"}, {"ph", "s"}, {"id", id}, {"pid", from_pid}, {"tid", from_tid},
        {"ts", ts(from)}, {"args", nlohmann::json::object()}});
  emit({{"name", name}, {"cat", "touchstone"}, {"ph", "f"}, {"bp", "e"}, {"id", id}, {"pid", to_pid}, {"tid", to_tid},
        {"ts", ts(to)}, {"args", nlohmann::json::object()}});
}

struct File {
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "w")) {
    if (!f) throw UsageError(fmt::format("cannot write '{}'", path));
  }
  ~File() { std::fclose(f); }
  std::FILE* f;
};
}  // namespace

Recorder::Recorder(int vps) : order_(static_cast<std::size_t>(vps)) {}

void Recorder::span(int rank, const char* name, Time start, Time end, std::string detail) {
  spans_.push_back(Span{vp, rank, name, start, end, std::move(detail), now_});
}

void Recorder::blocked(int rank, Time since, Time end, std::string call, const std::string& more, Stamp began,
                       bool at_end) {
  // A wait that took no time is not shown (unless the failed run stopped it); a run that stamps keeps
  // it nameless, for a cut to name.
  const char* name = end > since || at_end ? "blocked" : nullptr;
  if (!name && !stamping_) return;
  const std::size_t n = call.size();
  spans_.push_back(Span{vp, rank, name, since, end, std::move(call) + more, at_end ? Stamp::end() : now_, began, n});
}

Recorder::Place Recorder::hold(int src, bool from_handler, Wire wire) {
  Place at;
  at.span = spans_.size();
  spans_.push_back(Span{from_handler ? handler : vp, src, nullptr, 0, 0, {}, now_});
  if (wire == Wire::message || wire == Wire::rendezvous_request) {
    auto& lines = order_[static_cast<std::size_t>(src)];
    at.line = lines.size();
    lines.push_back(Line{{}, now_});
  }
  return at;
}

void Recorder::sent(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time start, Time end,
                    bool from_handler, Wire wire, const Place* at) {
  const Track track = from_handler ? handler : vp;
  // A held place keeps the stamp of the send that held it.
  const auto record = [&](const char* name, std::string detail) {
    Span s{track, src, name, start, end, std::move(detail), now_};
    if (at && at->span != Place::none) {
      s.at = spans_[at->span].at;
      spans_[at->span] = std::move(s);
    } else {
      spans_.push_back(std::move(s));
    }
  };
  const auto line = [&](std::string text) {
    auto& lines = order_[static_cast<std::size_t>(src)];
    if (at && at->line != Place::none)
      lines[at->line].text = std::move(text);
    else
      lines.push_back(Line{std::move(text), now_});
  };
  switch (wire) {
    case Wire::message:
    case Wire::rendezvous_request: {
      const bool rdv = wire == Wire::rendezvous_request;
      record("send", fmt::format("#{} to {} tag {} {} B{}", id, dst, tag, size, rdv ? " (rendezvous request)" : ""));
      line(fmt::format("t={} us  send #{} to {} tag {} size {}{}", exact_us(start), id, dst, tag, size,
                       rdv ? " (rendezvous)" : ""));
      if (rdv) return;  // the arrow leaves with the data
      break;
    }
    case Wire::clear_to_send: record("clear to send", fmt::format("for message #{} from {}", id, dst)); return;
    case Wire::acknowledgement: record("acknowledgement", fmt::format("of message #{} from {}", id, dst)); return;
    case Wire::rendezvous_data: record("rendezvous data", fmt::format("#{} to {} {} B", id, dst, size)); break;
  }
  add_flow(Flow{id, src, dst, inside(start, end), kNever, vp, track});
}

void Recorder::add_flow(const Flow& f) {
  if (flow_index_.size() <= f.id) flow_index_.resize(f.id + 1, 0);
  flows_.push_back(f);
  flow_index_[f.id] = flows_.size();
}

void Recorder::end_flow(std::uint64_t id, Time t, Track track, Stamp at) {
  if (id < flow_index_.size() && flow_index_[id]) {
    Flow& f = flows_[flow_index_[id] - 1];
    f.received = t;
    f.end_track = track;
    f.ended = at;
  } else {
    loose_ends_.push_back(FlowEnd{id, t, track, at});
  }
}

void Recorder::received(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time arrival, Time start,
                        Time end) {
  span(dst, "recv", start, end,
       fmt::format("#{} from {} tag {} {} B, arrived {} us", id, src, tag, size, exact_us(arrival)));
  end_flow(id, inside(start, end), vp, now_);
  order_[static_cast<std::size_t>(dst)].push_back(
      Line{fmt::format("t={} us  recv #{} from {} tag {} size {} (arrived {} us)", exact_us(start), id, src, tag, size,
                       exact_us(arrival)),
           now_});
}

void Recorder::handled(std::uint64_t id, int rank, Time start, Time end, std::string detail) {
  spans_.push_back(Span{handler, rank, "handler", start, end, std::move(detail), now_});
  end_flow(id, inside(start, end), handler, now_);
}

std::size_t Recorder::network_span(std::uint64_t track, const std::string& track_name, std::string name, Time start) {
  net_tracks_.try_emplace(track, track_name);
  net_spans_.push_back(NetSpan{track, std::move(name), start, start, {}, now_});
  return net_spans_.size() - 1;
}

void Recorder::end_network_span(std::size_t span, Time end, std::string detail) {
  net_spans_[span].end = end;
  net_spans_[span].detail = std::move(detail);
}

void Recorder::arrow(std::size_t from, std::size_t to) { arrows_.push_back(Arrow{from, to, now_}); }

// Process 3, "network": who blocked whom. A track per channel that blocked someone, holding the
// spans of the worms that held it while they blocked someone, and a track of the waits for each
// resource; waits that overlap go on lanes of their own (a thread's slices must nest). Each
// arrow ("blocked by") starts in the blocker's span and ends in the blocked one's.
void Recorder::write_network(const std::function<void(const nlohmann::json&)>& emit) const {
  if (net_spans_.empty()) return;
  std::map<std::uint64_t, std::vector<std::size_t>> by_track;
  for (std::size_t i = 0; i < net_spans_.size(); ++i) by_track[net_spans_[i].track].push_back(i);
  std::vector<int> tid_of(net_spans_.size());
  int tids = 0;
  emit({{"name", "process_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", network}, {"args", {{"name", "network"}}}});
  for (auto& [track, spans] : by_track) {
    std::stable_sort(spans.begin(), spans.end(),
                     [&](std::size_t a, std::size_t b) { return net_spans_[a].start < net_spans_[b].start; });
    std::vector<Time> lane_end;  // per lane: where its last span ends
    const int first_tid = tids + 1;
    for (std::size_t i : spans) {
      std::size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > net_spans_[i].start) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(0);
      lane_end[lane] = net_spans_[i].end;
      tid_of[i] = first_tid + static_cast<int>(lane);
    }
    for (std::size_t lane = 0; lane < lane_end.size(); ++lane) {
      const int tid = ++tids;
      const std::string& name = net_tracks_.at(track);
      emit({{"name", "thread_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", network}, {"tid", tid},
            {"args", {{"name", lane == 0 ? name : fmt::format("{} ({})", name, lane + 1)}}}});
      emit({{"name", "thread_sort_index"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", network}, {"tid", tid},
            {"args", {{"sort_index", tid}}}});
    }
  }
  for (std::size_t i = 0; i < net_spans_.size(); ++i) {
    const NetSpan& s = net_spans_[i];
    emit({{"name", s.name}, {"cat", "touchstone"}, {"ph", "X"}, {"pid", network}, {"tid", tid_of[i]}, {"ts", ts(s.start)},
          {"dur", ts(s.end - s.start)}, {"args", {{"detail", s.detail}}}});
  }
  // Flow ids: the messages' are message id + 1; the arrows' follow.
  std::uint64_t id = 1;
  for (const auto& f : flows_) id = std::max(id, f.id + 2);
  for (const auto& a : arrows_) {
    // Both ends inside both spans when they overlap by 3 ps or more (the arrow is then vertical,
    // its end 1/3 of the overlap after its start: Chrome's trace engine keeps one event per time of
    // a flow, so the ends need distinct times), else each end inside its own span.
    const NetSpan &from = net_spans_[a.from], &to = net_spans_[a.to];
    const Time lo = std::max(from.start, to.start), hi = std::min(from.end, to.end);
    const bool overlap = hi >= lo + 3;
    const Time at_from = overlap ? lo + (hi - lo) / 3 : inside(from.start, from.end);
    const Time at_to = overlap ? lo + 2 * ((hi - lo) / 3) : inside(to.start, to.end);
    emit_flow(emit, "blocked by", id, network, tid_of[a.from], at_from, network, tid_of[a.to], at_to, true);
    ++id;
  }
}

void Recorder::unreceived(std::uint64_t id, int dst, Stamp arrived) {
  // On a track of its own: a zero-length slice at a VP slice's boundary would make the arrow's end
  // ambiguous. Stamped with its arrival: a message event, before the turns of its instant.
  const Time arrival = arrived.t;
  spans_.push_back(Span{never_received,
                        dst,
                        "unreceived",
                        arrival,
                        arrival,
                        fmt::format("#{} arrived and was never received", id),
                        arrived,
                        {},
                        0,
                        id});
  end_flow(id, arrival, never_received, arrived);
}

// Chrome Trace Event JSON, every string escaped by the JSON library. Process 1 holds a track per
// VP, process 2 a track per node's active-message handlers, process 3 the network's waits and
// holds (write_network), process 4 the messages a failed run left unreceived, per destination;
// thread ids are rank + 1 (viewers treat id 0 specially). Every slice and flow event has the same
// category, and each message is an s/f flow pair whose ends fall strictly inside the send slice
// and the receive (or handler) slice.
void Recorder::write(const std::string& chrome_path, const std::string& order_path, const std::string& machine,
                     std::uint64_t trace_hash, bool failed, bool shares) const {
  const std::string hash = fmt::format("{:016x}", trace_hash);
  if (!chrome_path.empty()) {
    File out(chrome_path);
    bool first = true;
    const std::function<void(const nlohmann::json&)> emit = [&](const nlohmann::json& e) {
      fmt::print(out.f, "{}{}", first ? "" : ",\n", e.dump());
      first = false;
    };
    auto tid = [](int rank) { return rank + 1; };
    fmt::print(out.f, "{{\"displayTimeUnit\":\"ns\",\"otherData\":{},\"traceEvents\":[\n",
               nlohmann::json{{"machine", machine}, {"trace_hash", hash}, {"failed", failed}}.dump());
    bool handlers = false;
    std::vector<bool> never(order_.size(), false);
    for (const auto& s : spans_) {
      if (!s.name) continue;  // a place held for a send that was never numbered
      handlers |= s.track == handler;
      if (s.track == never_received) never[static_cast<std::size_t>(s.rank)] = true;
    }
    emit({{"name", "process_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", vp}, {"args", {{"name", machine}}}});
    if (handlers)
      emit({{"name", "process_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", handler}, {"args", {{"name", machine + ": active-message handlers"}}}});
    for (std::size_t r = 0; r < order_.size(); ++r) {
      emit({{"name", "thread_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", vp}, {"tid", tid(static_cast<int>(r))},
            {"args", {{"name", fmt::format("VP {}", r)}}}});
      if (handlers)
        emit({{"name", "thread_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", handler}, {"tid", tid(static_cast<int>(r))},
              {"args", {{"name", fmt::format("handlers of {}", r)}}}});
    }
    if (std::find(never.begin(), never.end(), true) != never.end())
      emit({{"name", "process_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", never_received},
            {"args", {{"name", "messages never received"}}}});
    for (std::size_t r = 0; r < never.size(); ++r)
      if (never[r])
        emit({{"name", "thread_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", never_received},
              {"tid", tid(static_cast<int>(r))}, {"args", {{"name", fmt::format("to VP {}", r)}}}});
    // In the order of their starts, then track and VP (each VP's own in the order it recorded
    // them): the order of recording is the order of commits, in which the programs of an instant
    // (docs/parallel.md) move a VP's completions before other VPs' calls without changing what
    // happened, so the file is the same on any number of host cores.
    std::vector<const Span*> by_start;
    by_start.reserve(spans_.size());
    for (const auto& s : spans_)
      if (s.name) by_start.push_back(&s);
    // Messages unreceived at one instant, by id: a split run finds them in several places.
    std::stable_sort(by_start.begin(), by_start.end(), [](const Span* a, const Span* b) {
      return std::tie(a->start, a->track, a->rank, a->msg) < std::tie(b->start, b->track, b->rank, b->msg);
    });
    for (const Span* s : by_start)
      emit({{"name", s->name}, {"cat", "touchstone"}, {"ph", "X"}, {"pid", s->track}, {"tid", tid(s->rank)},
            {"ts", ts(s->start)}, {"dur", ts(s->end - s->start)}, {"args", {{"detail", s->detail}}}});
    write_network(emit);
    // In the order of the messages' ids: a split run's processes record their sends apart.
    std::vector<const Flow*> by_id;
    by_id.reserve(flows_.size());
    for (const auto& f : flows_) by_id.push_back(&f);
    std::sort(by_id.begin(), by_id.end(), [](const Flow* a, const Flow* b) { return a->id < b->id; });
    for (const Flow* flow : by_id) {
      const Flow& f = *flow;
      if (f.received == kNever) continue;  // still in flight when a failed run stopped
      // An unreceived message's zero-length slice starts where its arrow ends: it is its own anchor.
      emit_flow(emit, "message", f.id + 1, f.start_track, tid(f.src), f.sent, f.end_track, tid(f.dst), f.received,
                f.end_track != never_received);
    }
    fmt::print(out.f, "\n]}}\n");
  }
  if (!order_path.empty()) {
    File out(order_path);
    fmt::print(out.f, "# per-VP message order on {}: every send and receive in program order\n", machine);
    fmt::print(out.f, "# trace_hash {}{}\n", hash, failed ? fmt::format(" (of {})", failed_hash_of(shares)) : "");
    for (std::size_t r = 0; r < order_.size(); ++r) {
      fmt::print(out.f, "VP {}:\n", r);
      for (const auto& line : order_[r])
        if (!line.text.empty()) fmt::print(out.f, "  {}\n", line.text);  // empty: a place never filled
    }
  }
}

// A split run's share: the spans, sends, ends of arrows and order-log lines of this process's
// ranks, each VP's in the order it recorded them. The network's spans are the same in every process
// and stay out.
void Recorder::share(Packed& out) const {
  std::size_t n = 0;
  for (const auto& s : spans_) n += s.name != nullptr;
  out.put(n);
  for (const auto& s : spans_) {
    if (!s.name) continue;
    out.put(s.track), out.put(s.rank), out.put(s.start), out.put(s.end), out.put(s.msg);
    out.put_text(s.name);
    out.put_text(s.detail);
  }
  out.put(flows_.size());
  for (const auto& f : flows_) out.put(f);
  out.put(loose_ends_.size());
  for (const auto& e : loose_ends_) out.put(e);
  std::size_t ranks = 0;
  for (const auto& lines : order_) ranks += !lines.empty();
  out.put(ranks);
  for (std::size_t r = 0; r < order_.size(); ++r) {
    if (order_[r].empty()) continue;
    out.put(r);
    out.put(order_[r].size());
    for (const auto& line : order_[r]) out.put_text(line.text);
  }
}

void Recorder::merge(Unpacker& in) {
  const auto bad = [] { return RunError("a split run's processes disagree on what they recorded"); };
  for (auto n = in.take<std::size_t>(); n > 0; --n) {
    Span s{};
    s.track = in.take<Track>(), s.rank = in.take<int>(), s.start = in.take<Time>(), s.end = in.take<Time>();
    s.msg = in.take<std::uint64_t>();
    s.name = name_of(in.take_text());
    s.detail = in.take_text();
    if (s.rank < 0 || static_cast<std::size_t>(s.rank) >= order_.size()) throw bad();
    spans_.push_back(std::move(s));
  }
  for (auto n = in.take<std::size_t>(); n > 0; --n) add_flow(in.take<Flow>());
  for (auto n = in.take<std::size_t>(); n > 0; --n) loose_ends_.push_back(in.take<FlowEnd>());
  for (auto ranks = in.take<std::size_t>(); ranks > 0; --ranks) {
    const auto r = in.take<std::size_t>();
    if (r >= order_.size()) throw bad();
    for (auto n = in.take<std::size_t>(); n > 0; --n) order_[r].push_back(Line{in.take_text()});
  }
  // The ends recorded apart from their sends: a receive's process is not its sender's.
  std::vector<FlowEnd> loose;
  loose.swap(loose_ends_);
  for (const FlowEnd& e : loose) end_flow(e.id, e.at, e.track, e.recorded);
}

void Recorder::cut(Stamp failure) {
  const auto past = [failure](Stamp s) { return failure < s; };
  // Receives past the failure had not happened: their arrows end nowhere yet.
  for (Flow& f : flows_)
    if (f.received != kNever && past(f.ended)) f.received = kNever, f.end_track = vp;
  std::erase_if(loose_ends_, [&](const FlowEnd& e) { return past(e.recorded); });
  for (Span& s : spans_) {
    if (!past(s.at) || (!s.name && !s.call)) continue;
    if (s.call && !past(s.began)) {  // its VP was still waiting at the failure
      s.name = "blocked";
      s.end = std::max(s.start, failure.t);
      s.detail.resize(s.call);
      s.detail += " (when the run failed)";
      continue;
    }
    s.name = nullptr;
  }
  for (auto& lines : order_)
    for (Line& l : lines)
      if (past(l.at)) l.text.clear();
  for (const Taken& t : taken_)
    if (past(t.at) && !past(t.arrived)) unreceived(t.id, t.dst, t.arrived);
  taken_.clear();
  // The network's spans, every process's alike: those opened past the failure, with their arrows.
  std::vector<std::size_t> kept(net_spans_.size());
  std::size_t n = 0;
  for (std::size_t i = 0; i < net_spans_.size(); ++i) {
    kept[i] = n;
    if (past(net_spans_[i].opened)) continue;
    if (n != i) net_spans_[n] = std::move(net_spans_[i]);  // a string moved onto itself is left empty
    ++n;
  }
  net_spans_.resize(n);
  std::erase_if(arrows_, [&](const Arrow& a) { return past(a.at); });
  for (Arrow& a : arrows_) a.from = kept[a.from], a.to = kept[a.to];
}

const char* Recorder::name_of(const std::string& name) { return names_.insert(name).first->c_str(); }

}  // namespace touchstone::detail
