// Forced matches (RunOptions::schedule, docs/debugging.md): which wildcard receives and probes of
// a replayed run take which source. Its own part because it is a table checked against the
// program, not a step of a message's way: the entries are validated when the run is made, looked
// up when a wildcard is posted, and every entry must have been used when the run ends.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "op.hpp"
#include "touchstone/packed.hpp"
#include "touchstone/run.hpp"

namespace touchstone::detail {

class ForcedSchedule {
 public:
  ForcedSchedule() = default;
  /// UsageError for an entry out of range (ranks in 0..nodes-1, calls from 1) or given twice.
  ForcedSchedule(const std::vector<ForcedMatch>& schedule, int nodes);
  bool empty() const { return forced_.empty(); }
  /// The source wildcard receive or probe `call` of `rank` takes: the forced one, or `src` when
  /// none is forced. UsageError if the forced source is not in the receive's group g.
  int source(int rank, std::uint64_t call, int src, const GroupData* g);
  /// UsageError naming the entries that matched no wildcard of the run.
  void check_all_used() const;
  /// The entries used so far, packed, and those another process of a split run used, taken back
  /// (each process forces the wildcards of its own ranks).
  void share_used(Packed& out) const;
  void take_used(Unpacker& in);

 private:
  std::map<std::pair<int, std::uint64_t>, int> forced_;  // (rank, call) -> source
  std::vector<std::pair<int, std::uint64_t>> used_;
};

}  // namespace touchstone::detail
