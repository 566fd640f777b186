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

/// A VP that polls a world where nothing can change this many times in a row, without acting in
/// between, is in a livelock. Not at the second such poll: a correct program may poll a bounded
/// number of times before it acts (MPICH's rma/linked_list makes 100 MPI_Iprobe calls after each
/// append while the other ranks wait in a barrier, to give an implementation's progress engine a
/// chance). Each poll costs the VP one probe time and the host about a microsecond, so a real
/// livelock is still reported within a fraction of a second of host time.
inline constexpr std::uint64_t kQuietPollsOfALivelock = 65'536;

/// The polls of one VP since it last acted (sent, received, posted a receive, entered a barrier).
class PollWatch {
 public:
  /// Something can still change: the polls so far prove nothing.
  void forget() { quiet_polls_ = 0; }
  /// The VP, which has acted `actions` times so far, polls while nothing can change. True at its
  /// kQuietPollsOfALivelock-th such poll without acting in between: its loop is futile.
  bool futile(std::uint64_t actions);

 private:
  std::uint64_t quiet_since_ = ~0ULL;  // the actions count when the polls below began
  std::uint64_t quiet_polls_ = 0;
};

/// The failure report of a livelock of `rank` at `clock`, polling in `what` at `label` (may be
/// empty); `blocked`: one line per other blocked VP.
std::string livelock_report(int rank, Time clock, const Call& what, const std::string& label,
                            const std::string& blocked);

}  // namespace touchstone::detail
