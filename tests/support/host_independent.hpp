// The check that a run does not depend on the host: the same program run on fibers and on threads,
// unperturbed and with seeded random host delays (RunOptions::perturb), gives the same trace.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "touchstone/touchstone.hpp"

namespace ts_test {

/// One way of running the VPs' code on the host: fibers or threads, host cores, perturbation seed.
struct HostConfig {
  touchstone::Execution execution;
  int host_cores;
  std::uint64_t perturb;
};

inline std::string describe(const HostConfig& c) {
  return std::string(c.execution == touchstone::Execution::fibers ? "fibers" : "threads") +
         " host_cores=" + std::to_string(c.host_cores) + " perturb=" + std::to_string(c.perturb);
}

inline touchstone::RunOptions options(const HostConfig& c) {
  touchstone::RunOptions o;
  o.execution = c.execution;
  o.host_cores = c.host_cores;
  o.perturb = c.perturb;
  return o;
}

/// The same run: trace hash, times and statistics (events too, unless run-ahead differs).
inline void expect_same_run(const touchstone::RunResult& r, const touchstone::RunResult& ref, bool same_events = true) {
  EXPECT_EQ(r.trace_hash, ref.trace_hash);
  EXPECT_EQ(r.makespan, ref.makespan);
  EXPECT_EQ(r.finish_time, ref.finish_time);
  EXPECT_EQ(r.stats.messages, ref.stats.messages);
  EXPECT_EQ(r.stats.packets, ref.stats.packets);
  EXPECT_EQ(r.stats.blocked_headers, ref.stats.blocked_headers);
  EXPECT_EQ(r.stats.blocked_time, ref.stats.blocked_time);
  if (same_events) {
    EXPECT_EQ(r.stats.events, ref.stats.events);
  }
}

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
