// Recording a run for people: Chrome Trace Event JSON (Perfetto opens it) and a plain-text
// per-VP message order log (docs/cli.md). Only built when a run asks for one of them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "touchstone/time.hpp"

namespace touchstone::detail {

class Recorder {
 public:
  explicit Recorder(int vps);
  /// A span on a VP's track: "send", "recv", "compute", "blocked", "barrier".
  void span(int rank, const char* name, Time start, Time end, std::string detail = {});
  void sent(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time start, Time end);
  void received(std::uint64_t id, int src, int dst, int tag, std::size_t size, Time arrival, Time start, Time end);
  /// An active-message handler ran for message `id` on rank's handler track.
  void handled(std::uint64_t id, int rank, Time start, Time end, std::string detail);
  /// A message that arrived and was never received (a failed run): its arrow ends on the
  /// destination's track at its arrival.
  void unreceived(std::uint64_t id, int dst, Time arrival);
  /// A header waited for a channel (runtime/src/blame.hpp): a span on that channel's track.
  void network_span(std::uint32_t channel, const std::string& channel_name, Time start, Time end, std::string detail);
  /// Writes whichever files have a non-empty path. Throws UsageError if a file cannot be written.
  void write(const std::string& chrome_path, const std::string& order_path, const std::string& machine) const;

 private:
  enum Track : int { vp = 1, handler = 2, network = 3 };  // Chrome trace process ids (from 1)
  struct Span {
    Track track;
    int rank;
    const char* name;
    Time start, end;
    std::string detail;
  };
  struct Flow {
    std::uint64_t id;
    int src, dst;
    Time sent, received;
    Track end_track;
  };
  void end_flow(std::uint64_t id, Time t, Track track);
  std::vector<Span> spans_;
  std::vector<Flow> flows_;
  std::vector<std::uint64_t> flow_index_;  // message id -> index in flows_ + 1
  std::vector<std::vector<std::string>> order_;
  std::map<std::uint32_t, std::string> channels_;  // network tracks: channel -> name
};

}  // namespace touchstone::detail
