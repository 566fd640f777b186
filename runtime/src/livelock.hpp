// Livelock detection (docs/debugging.md): a VP that only polls (test, iprobe) while nothing can
// change. The engine knows when nothing can change -- after it caught up with the VP's clock, its
// event queue is empty: every other VP is blocked without a timed wake-up or finished, and nothing
// is in flight. What the VP polled since it last acted is kept here, per VP, and so is the report.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "describe.hpp"
#include "touchstone/time.hpp"

namespace touchstone::detail {

/// The polls of one VP since it last acted (sent, received, posted a receive, entered a barrier).
class PollWatch {
 public:
  /// Something can still change: the polls so far prove nothing.
  void forget() { polls_.clear(); }
  /// The VP, which has acted `actions` times so far, polls `key` (a request, or a probe's pattern)
  /// while nothing can change. True when it polled the same key before without acting in between:
  /// its loop is futile.
  bool repeats(std::uint64_t actions, std::uint64_t key);

 private:
  std::uint64_t quiet_since_ = ~0ULL;  // the actions count when the polls below began
  std::vector<std::uint64_t> polls_;
};

/// The failure report of a livelock of `rank` at `clock`, polling in `what` at `label` (may be
/// empty); `blocked`: one line per other blocked VP.
std::string livelock_report(int rank, Time clock, const Call& what, const std::string& label,
                            const std::string& blocked);

}  // namespace touchstone::detail
