// Who blocked whom (docs/debugging.md): every wait of a worm for a link, an ejection port or
// receive-buffer space, and of a message for an injection port, with the worm in its way and that
// worm's own wait at that moment, as a chain. Feeds the trace's network tracks (the wait, the
// blocker's hold of the channel, an arrow from one to the other) and --explain
// (RunOptions::explain). Internal to the runtime.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "network.hpp"
#include "trace.hpp"

namespace touchstone::detail {

class Blame final : public ChannelObserver {
 public:
  Blame(const Network& net, Recorder* recorder);
  void on_take(std::uint32_t c, const Msg& m, std::uint32_t packet, Time t) override;
  void on_wait(const Wait& w) override;
  void on_grant(const Msg& waiter, std::uint32_t packet, Time t) override;
  /// Ends the trace spans still open at `now` (the end of the run, or its failure): waits that
  /// never ended and holds of channels whose tail time is unknown. Call once, before the trace
  /// is written and before explain() on a failed run.
  void finish(Time now);
  /// A split run's processes go on past a failure to their window's end (docs/parallel.md): from
  /// now on every change is noted with its place (`*place`, as the event loop moves it), so that
  /// cut() can take back those made past a failure.
  void keep_journal(const Stamp* place) { place_ = place; }
  /// A window ended without a failure: its changes stay.
  void forget_journal() { journal_.clear(); }
  /// Takes back the changes made past `failure`, latest first: the waits and holds are then the
  /// single process's at the failure, for finish() to end there. Before the Recorder's own cut,
  /// which renumbers the spans.
  void cut(Stamp failure);
  /// The resources with the most blocked time, the time per kind of wait, the longest waits and
  /// the longest chains.
  std::string explain(std::size_t top = 5) const;

 private:
  using Resource = std::pair<Wait::For, std::uint32_t>;
  std::string resource_name(Resource r) const;
  std::string waits_for(const Wait& w) const;  // "link X", "receive-buffer space at node 3 (...)"
  static std::uint64_t key(std::uint64_t id, std::uint32_t packet) { return id << 20 | packet; }
  static std::string worm(std::uint64_t id, std::uint32_t packet, int src, int dst);
  void end_tenure(std::uint32_t c, Time end);
  void close_wait(std::uint64_t k, Time t, bool failed);
  static constexpr int kDepth = 6;
  static constexpr std::size_t kNoSpan = ~std::size_t{0};

  const Network& net_;
  Recorder* recorder_;
  struct Waiting {
    Resource what;
    std::uint64_t waiter = 0;
    std::uint32_t packet = 0;
    int src = 0, dst = 0;
    Time since = 0;
    int depth = 1;                   // waiting worms in the chain, this one included
    std::vector<std::string> chain;  // "link X held by packet p of message #h (a -> b)", then what that
                                     // worm waits for, ... (at most kDepth)
    std::size_t span = kNoSpan;
  };
  std::unordered_map<std::uint64_t, Waiting> waiting_;  // the waits in progress, by (message, packet)
  // Per channel, its current holder since it took the channel. The hold gets a trace span only if
  // it blocked someone (arrows start there).
  struct Tenure {
    std::uint64_t id = 0;
    std::uint32_t packet = 0;
    int src = 0, dst = 0;
    Time since = 0;
    bool held = false;
    std::size_t span = kNoSpan;
    std::uint32_t blocked = 0;
  };
  std::vector<Tenure> tenure_;
  std::size_t open_tenure_span(std::uint32_t c);
  // Waits queued behind a header that waits too: their arrows start where that header gets going
  // (its next take), by the blocker's (message, packet).
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::size_t>>> pending_arrows_;  // -> (waiter, its span)
  bool finished_ = false;

  struct Total {
    Time blocked = 0;
    std::uint64_t waits = 0;
  };
  std::map<Resource, Total> per_resource_;
  struct Long {
    Time waited;
    int depth;
    std::string text;
  };
  std::vector<Long> longest_;  // the longest waits, kept sorted, at most kKeep
  std::vector<Long> deepest_;  // the longest chains (most worms), then the longest waits
  static constexpr std::size_t kKeep = 10;
  static constexpr std::size_t kKeepChains = 5;

  // keep_journal: each change's undoing, with the place it was made at.
  struct Undo {
    Stamp at;
    std::function<void()> undo;
  };
  const Stamp* place_ = nullptr;
  std::vector<Undo> journal_;
  template <class F>
  void note(F&& undo) {
    if (place_) [[unlikely]]
      journal_.push_back(Undo{*place_, std::forward<F>(undo)});
  }
  void note_tenure(std::uint32_t c) {
    if (place_) note([this, c, old = tenure_[c]] { tenure_[c] = old; });
  }
  template <class Map>
  void note_entry(Map& map, const typename Map::key_type& k);
};

}  // namespace touchstone::detail
