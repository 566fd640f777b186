#include "trace.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>

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
  spans_.push_back(Span{rank, name, start, end, std::move(detail)});
}

void Recorder::sent(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time start, Time end) {
  span(src, "send", start, end, fmt::format("#{} to {} tag {} {} B", id, dst, tag, size));
  if (flow_index_.size() <= id) flow_index_.resize(id + 1, 0);
  flows_.push_back(Flow{id, src, dst, start, kNever});
  flow_index_[id] = flows_.size();
  order_[static_cast<std::size_t>(src)].push_back(
      fmt::format("t={} us  send #{} to {} tag {} size {}", us(start), id, dst, tag, size));
}

void Recorder::received(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time arrival, Time start,
                        Time end) {
  span(dst, "recv", start, end, fmt::format("#{} from {} tag {} {} B, arrived {} us", id, src, tag, size, us(arrival)));
  if (id < flow_index_.size() && flow_index_[id]) flows_[flow_index_[id] - 1].received = start;
  order_[static_cast<std::size_t>(dst)].push_back(fmt::format("t={} us  recv #{} from {} tag {} size {} (arrived {} us)",
                                                              us(start), id, src, tag, size, us(arrival)));
}

void Recorder::write(const std::string& chrome_path, const std::string& order_path, const std::string& machine) const {
  if (!chrome_path.empty()) {
    File out(chrome_path);
    fmt::print(out.f, "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"machine\":\"{}\"}},\"traceEvents\":[\n", machine);
    fmt::print(out.f, "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{{\"name\":\"{}\"}}}}", machine);
    for (std::size_t r = 0; r < order_.size(); ++r)
      fmt::print(out.f, ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{},\"args\":{{\"name\":\"VP {}\"}}}}",
                 r, r);
    for (const auto& s : spans_)
      fmt::print(out.f, ",\n{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":0,\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"detail\":\"{}\"}}}}",
                 s.name, s.rank, us(s.start), us(s.end - s.start), s.detail);
    for (const auto& f : flows_) {
      if (f.received == kNever) continue;
      fmt::print(out.f, ",\n{{\"name\":\"message\",\"cat\":\"msg\",\"ph\":\"s\",\"id\":{},\"pid\":0,\"tid\":{},\"ts\":{}}}",
                 f.id, f.src, us(f.sent));
      fmt::print(out.f,
                 ",\n{{\"name\":\"message\",\"cat\":\"msg\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"pid\":0,\"tid\":{},\"ts\":{}}}",
                 f.id, f.dst, us(f.received));
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
