#include "livelock.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace touchstone::detail {

bool PollWatch::repeats(std::uint64_t actions, std::uint64_t key) {
  if (quiet_since_ != actions) {
    quiet_since_ = actions;
    polls_.clear();
  }
  if (std::find(polls_.begin(), polls_.end(), key) != polls_.end()) return true;
  polls_.push_back(key);
  return false;
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
