#include "forced_schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::detail {

ForcedSchedule::ForcedSchedule(const std::vector<ForcedMatch>& schedule, int nodes) {
  for (const ForcedMatch& f : schedule) {
    if (f.rank < 0 || f.rank >= nodes || f.source < 0 || f.source >= nodes || f.call < 1)
      throw UsageError(fmt::format("schedule entry {}: ranks must be in 0..{} and calls count from 1",
                                   format_schedule({f}), nodes - 1));
    if (!forced_.emplace(std::pair{f.rank, f.call}, f.source).second)
      throw UsageError(fmt::format("schedule entry {}:{} appears twice", f.rank, f.call));
  }
}

// A forced match: wildcard receive or probe `call` of the rank takes the next matching message
// from the forced source. Its timing stays the model's: the receive is posted when the program
// posts it and completes when that message has arrived, as a receive naming the source would.
int ForcedSchedule::source(int rank, std::uint64_t call, int src, const GroupData* g) {
  auto it = forced_.find({rank, call});
  if (it == forced_.end()) return src;
  if (g && !std::binary_search(g->by_world.begin(), g->by_world.end(), std::pair{it->second, -1},
                               [](const auto& a, const auto& b) { return a.first < b.first; }))
    throw UsageError(fmt::format("schedule entry {}:{}={}: rank {} is not in the receive's group", rank, call,
                                 it->second, it->second));
  used_.push_back(it->first);
  return it->second;
}

void ForcedSchedule::check_all_used() const {
  if (used_.size() >= forced_.size()) return;
  std::vector<ForcedMatch> unused;
  for (const auto& [key, src] : forced_)
    if (std::find(used_.begin(), used_.end(), key) == used_.end())
      unused.push_back(ForcedMatch{key.first, key.second, src});
  throw UsageError(fmt::format("the schedule names no wildcard receive or probe of this run at {}",
                               format_schedule(unused)));
}

void ForcedSchedule::share_used(Packed& out) const {
  out.put(used_.size());
  for (const auto& [rank, call] : used_) out.put(rank), out.put(call);
}

void ForcedSchedule::take_used(Unpacker& in) {
  const auto n = in.take<std::size_t>();
  for (std::size_t i = 0; i < n; ++i) {
    const auto rank = in.take<int>();
    const std::pair key{rank, in.take<std::uint64_t>()};
    if (!forced_.contains(key)) throw_corrupt_swap();
    if (std::find(used_.begin(), used_.end(), key) == used_.end()) used_.push_back(key);  // its own come back too
  }
}

}  // namespace touchstone::detail
