// The measured region: MPI_Pcontrol, the profiling interface's hook (MPI-3.1 14.2.4), marks the part
// of a program that `touchstone mpirun` and `touchstone sweep --program` report (docs/mpi.md,
// "Measuring a region"). A level other than 0 begins a region on the calling rank, level 0 ends it;
// a rank's k-th region is measured together with every other rank's k-th, from the first rank's
// beginning to the last rank's end, so that a program whose ranks all begin at one instant measures
// exactly what the catalog's makespan measures for the same messages.
#include <algorithm>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "measure.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace touchstone::mpi {

MeasuredRegions measured_regions(const Session& s, std::string& problem) {
  MeasuredRegions m;
  int first_marking = -1;
  for (int r = 0; r < s.np; ++r) {
    const RankState& rs = s.ranks[static_cast<std::size_t>(r)];
    if (rs.regions.empty() && !rs.region_open) continue;
    if (rs.region_open) {
      problem = fmt::format("rank {} began a measured region with MPI_Pcontrol at t={} us and never ended it "
                            "with MPI_Pcontrol(0)", r, to_us(*rs.region_open));
      return {};
    }
    if (first_marking < 0) {
      first_marking = r;
      m.count = static_cast<int>(rs.regions.size());
    } else if (static_cast<int>(rs.regions.size()) != m.count) {
      problem = fmt::format("rank {} marked {} measured region(s) with MPI_Pcontrol and rank {} marked {}: the ranks "
                            "must mark the same regions", first_marking, m.count, r, rs.regions.size());
      return {};
    }
  }
  for (int k = 0; k < m.count; ++k) {
    Time begin = kNever, end = 0;
    for (const RankState& rs : s.ranks)
      if (!rs.regions.empty()) {
        begin = std::min(begin, rs.regions[static_cast<std::size_t>(k)].first);
        end = std::max(end, rs.regions[static_cast<std::size_t>(k)].second);
      }
    m.total += end - begin;
  }
  return m;
}

}  // namespace touchstone::mpi

int MPI_Pcontrol(const int level, ...) {
  // Callable at any time (the standard puts no condition on it), so before MPI_Init too.
  RankState& rs = state("MPI_Pcontrol", false);
  const Time now = rs.proc->now();
  if (level != 0 && !rs.region_open) {
    rs.region_open = now;
  } else if (level == 0 && rs.region_open) {
    rs.regions.emplace_back(*rs.region_open, now);
    rs.region_open.reset();
  }
  return MPI_SUCCESS;
}
