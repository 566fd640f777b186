// The check that a run does not depend on the host: the same program run on fibers and on threads,
// unperturbed and with seeded random host delays (RunOptions::perturb), gives the same trace.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>

#include "touchstone/touchstone.hpp"

namespace ts_test {

/// Runs `program` on m `runs` times, fibers and threads in turn, the first two runs unperturbed and
/// run i with perturbation seed first_seed + i; expects every run's trace_hash, makespan and blocked
/// time to equal the first run's, and returns the first run's result.
inline touchstone::RunResult expect_host_independent(const touchstone::Machine& m, const touchstone::Program& program,
                                                     int runs, std::uint64_t first_seed) {
  touchstone::RunResult ref;
  for (int i = 0; i < runs; ++i) {
    touchstone::RunOptions o;
    o.execution = i % 2 ? touchstone::Execution::threads : touchstone::Execution::fibers;
    o.perturb = i < 2 ? 0 : first_seed + static_cast<std::uint64_t>(i);
    const touchstone::RunResult r = touchstone::run(m, program, o);
    if (i == 0) {
      ref = r;
      continue;
    }
    EXPECT_EQ(r.trace_hash, ref.trace_hash) << "run " << i;
    EXPECT_EQ(r.makespan, ref.makespan) << "run " << i;
    EXPECT_EQ(r.stats.blocked_time, ref.stats.blocked_time) << "run " << i;
  }
  return ref;
}

}  // namespace ts_test
