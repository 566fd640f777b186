// Who blocked whom (docs/debugging.md): every wait of a worm's header for a busy channel, with
// the worm in its way and that worm's own wait at that moment, as a chain. Feeds the trace's
// network tracks and --explain (RunOptions::explain). Internal to the runtime.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "network.hpp"
#include "trace.hpp"

namespace touchstone::detail {

class Blame final : public ChannelObserver {
 public:
  Blame(const Network& net, Recorder* recorder) : net_(net), recorder_(recorder) {}
  void on_wait(std::uint32_t c, const Msg& waiter, std::uint32_t packet, const Msg& blocker,
               std::uint32_t blocker_packet, Time t) override;
  void on_grant(std::uint32_t c, const Msg& waiter, std::uint32_t packet, Time t) override;
  /// The channels with the most blocked time and the longest waits with their chains.
  std::string explain(std::size_t top = 10) const;

 private:
  struct Wait {
    std::uint32_t channel = 0;
    std::uint64_t waiter = 0;
    int src = 0, dst = 0;
    Time since = 0;
    int depth = 1;      // links in the chain
    std::string chain;  // "link X, held by message #h (a -> b), which waited for ..."
  };
  static std::uint64_t key(const Msg& m, std::uint32_t packet) { return m.id << 20 | packet; }
  static constexpr int kDepth = 6;

  const Network& net_;
  Recorder* recorder_;
  std::unordered_map<std::uint64_t, Wait> waiting_;  // the waits in progress, by (message, packet)
  struct Total {
    Time blocked = 0;
    std::uint64_t waits = 0;
  };
  std::map<std::uint32_t, Total> per_channel_;
  struct Long {
    Time waited;
    Time since;
    std::string text;
  };
  std::vector<Long> longest_;  // the longest waits, kept sorted, at most kKeep
  static constexpr std::size_t kKeep = 10;
};

}  // namespace touchstone::detail
