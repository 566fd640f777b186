#include "livelock.hpp"

#include <fmt/format.h>

namespace touchstone::detail {

bool PollWatch::futile(std::uint64_t actions) {
  if (quiet_since_ != actions) {
    quiet_since_ = actions;
    quiet_polls_ = 0;
  }
  return ++quiet_polls_ >= kQuietPollsOfALivelock;
}

std::string livelock_report(int rank, Time clock, const Call& what, const std::string& label,
                            const std::string& blocked) {
  return fmt::format("livelock at t={} us: rank {} polls in a loop ({}{}) but nothing can change: every other VP "
                     "is blocked or finished, nothing is in flight, and rank {} has neither sent nor received since "
                     "its first futile poll.\n{}",
                     to_us(clock), rank, describe(what), label.empty() ? "" : " at " + label, rank,
                     blocked.empty() ? "No other VP is blocked.\n" : "The other VPs:\n" + blocked);
}

}  // namespace touchstone::detail
