#include "trace.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "touchstone/error.hpp"

namespace touchstone::detail {

namespace {
// Chrome trace timestamps are microseconds; print picoseconds exactly as fractional microseconds.
std::string us(Time t) { return fmt::format("{}.{:06}", t / 1'000'000, t % 1'000'000); }

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
  spans_.push_back(Span{vp, rank, name, start, end, std::move(detail)});
}

void Recorder::sent(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time start, Time end) {
  span(src, "send", start, end, fmt::format("#{} to {} tag {} {} B", id, dst, tag, size));
  if (flow_index_.size() <= id) flow_index_.resize(id + 1, 0);
  flows_.push_back(Flow{id, src, dst, start, kNever, vp});
  flow_index_[id] = flows_.size();
  order_[static_cast<std::size_t>(src)].push_back(
      fmt::format("t={} us  send #{} to {} tag {} size {}", us(start), id, dst, tag, size));
}

void Recorder::end_flow(std::uint64_t id, Time t, Track track) {
  if (id < flow_index_.size() && flow_index_[id]) {
    Flow& f = flows_[flow_index_[id] - 1];
    f.received = t;
    f.end_track = track;
  }
}

void Recorder::received(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time arrival, Time start,
                        Time end) {
  span(dst, "recv", start, end, fmt::format("#{} from {} tag {} {} B, arrived {} us", id, src, tag, size, us(arrival)));
  end_flow(id, start, vp);
  order_[static_cast<std::size_t>(dst)].push_back(fmt::format("t={} us  recv #{} from {} tag {} size {} (arrived {} us)",
                                                              us(start), id, src, tag, size, us(arrival)));
}

void Recorder::handled(std::uint64_t id, int rank, Time start, Time end, std::string detail) {
  spans_.push_back(Span{handler, rank, "handler", start, end, std::move(detail)});
  end_flow(id, start, handler);
}

void Recorder::network_span(std::uint32_t channel, const std::string& channel_name, Time start, Time end,
                            std::string detail) {
  channels_.emplace(channel, channel_name);
  spans_.push_back(Span{network, static_cast<int>(channel), "blocked header", start, end, std::move(detail)});
}

void Recorder::unreceived(std::uint64_t id, int dst, Time arrival) {
  span(dst, "unreceived", arrival, arrival, fmt::format("#{} arrived and was never received", id));
  end_flow(id, arrival, vp);
}

// Chrome Trace Event JSON, every string escaped by the JSON library. Process 1 holds a track per
// VP, process 2 a track per node's active-message handlers; thread ids are rank + 1 (viewers
// treat id 0 specially). Every slice and flow event has the same category, and each message is an
// s/f flow pair whose ends fall inside the send slice and the receive (or handler) slice.
void Recorder::write(const std::string& chrome_path, const std::string& order_path, const std::string& machine) const {
  if (!chrome_path.empty()) {
    File out(chrome_path);
    auto emit = [&, first = true](const nlohmann::json& e) mutable {
      fmt::print(out.f, "{}{}", first ? "" : ",\n", e.dump());
      first = false;
    };
    auto tid = [](int rank) { return rank + 1; };
    fmt::print(out.f, "{{\"displayTimeUnit\":\"ns\",\"otherData\":{},\"traceEvents\":[\n",
               nlohmann::json{{"machine", machine}}.dump());
    bool handlers = false;
    for (const auto& s : spans_) handlers |= s.track == handler;
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
    // Process 3: a track per channel on which some header waited, its spans naming the worm
    // that held the channel and what that worm waited for (who blocked whom).
    if (!channels_.empty())
      emit({{"name", "process_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", network}, {"args", {{"name", machine + ": network"}}}});
    for (const auto& [c, name] : channels_)
      emit({{"name", "thread_name"}, {"cat", "__metadata"}, {"ph", "M"}, {"pid", network}, {"tid", tid(static_cast<int>(c))},
            {"args", {{"name", name}}}});
    // Timestamps are microseconds; printed from integer picoseconds, they stay exact.
    auto ts = [](Time t) { return nlohmann::json::parse(us(t)); };
    for (const auto& s : spans_)
      emit({{"name", s.name}, {"cat", "touchstone"}, {"ph", "X"}, {"pid", s.track}, {"tid", tid(s.rank)},
            {"ts", ts(s.start)}, {"dur", ts(s.end - s.start)}, {"args", {{"detail", s.detail}}}});
    for (const auto& f : flows_) {
      if (f.received == kNever) continue;  // still in flight when a failed run stopped
      emit({{"name", "message"}, {"cat", "touchstone"}, {"ph", "s"}, {"id", f.id + 1}, {"pid", vp}, {"tid", tid(f.src)},
            {"ts", ts(f.sent)}, {"args", nlohmann::json::object()}});
      emit({{"name", "message"}, {"cat", "touchstone"}, {"ph", "f"}, {"bp", "e"}, {"id", f.id + 1}, {"pid", f.end_track},
            {"tid", tid(f.dst)}, {"ts", ts(f.received)}, {"args", nlohmann::json::object()}});
    }
    fmt::print(out.f, "\n]}}\n");
  }
  if (!order_path.empty()) {
    File out(order_path);
    fmt::print(out.f, "# per-VP message order on {}: every send and receive in program order\n", machine);
    for (std::size_t r = 0; r < order_.size(); ++r) {
      fmt::print(out.f, "VP {}:\n", r);
      for (const auto& line : order_[r]) fmt::print(out.f, "  {}\n", line);
    }
  }
}

}  // namespace touchstone::detail
