// The check that a run does not depend on the host: the same program run on fibers and on threads,
// unperturbed and with seeded random host delays (RunOptions::perturb), gives the same trace.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

/// The ways the tests of the parallel turns (instants, programs past their sends) run a program:
/// fibers on 1, 2 and 4 host cores, perturbed on 2 and 4, and threads.
inline const HostConfig kParallelWays[] = {
    {touchstone::Execution::fibers, 1, 0},  {touchstone::Execution::fibers, 2, 0},
    {touchstone::Execution::fibers, 4, 0},  {touchstone::Execution::fibers, 2, 31},
    {touchstone::Execution::fibers, 4, 47}, {touchstone::Execution::threads, 0, 0}};

/// A way's options with every parallel turn taken however short the programs
/// (parallel_programs_from_us = 0); `read_no_arrival`: the programs never read Status::arrival,
/// so that they may go on past their receives too (RunOptions::programs_read_no_arrival).
inline touchstone::RunOptions every_parallel_turn(const HostConfig& c, bool read_no_arrival = false) {
  touchstone::RunOptions o = options(c);
  o.parallel_programs_from_us = 0;
  o.programs_read_no_arrival = read_no_arrival;
  return o;
}

inline void expect_same_run(const touchstone::RunResult& r, const touchstone::RunResult& ref, bool same_events = true);

/// Runs `program` every kParallelWays way with every parallel turn taken, `reset()` before each run
/// and `check()` after it; every run must be the first's (expect_same_run). Returns the runs'
/// results in kParallelWays' order, for what may differ by host (continued_ahead).
template <class Reset, class Check>
std::vector<touchstone::RunResult> same_run_every_way(const touchstone::Machine& m, const touchstone::Program& program,
                                                      Reset reset, Check check, bool read_no_arrival = false) {
  std::vector<touchstone::RunResult> results;
  for (const HostConfig& w : kParallelWays) {
    SCOPED_TRACE(describe(w));
    reset();
    results.push_back(touchstone::run(m, program, every_parallel_turn(w, read_no_arrival)));
    check();
    if (results.size() > 1) expect_same_run(results.back(), results.front());
  }
  return results;
}

/// Runs `program` every kParallelWays way; every run must fail with the first's report, which it
/// returns.
inline std::string same_failure_every_way(const touchstone::Machine& m, const touchstone::Program& program,
                                          bool read_no_arrival = false) {
  std::vector<std::string> reports;
  for (const HostConfig& w : kParallelWays) {
    try {
      touchstone::run(m, program, every_parallel_turn(w, read_no_arrival));
      ADD_FAILURE() << describe(w) << ": the run did not fail";
    } catch (const touchstone::RunError& e) {
      reports.emplace_back(e.what());
    }
  }
  if (reports.empty()) return {};
  for (std::size_t i = 1; i < reports.size(); ++i) EXPECT_EQ(reports[i], reports[0]) << describe(kParallelWays[i]);
  return reports[0];
}

/// The same run: trace hash, times, statistics (events too, unless run-ahead differs) and the
/// messages delivered before their arrival.
inline void expect_same_run(const touchstone::RunResult& r, const touchstone::RunResult& ref, bool same_events) {
  EXPECT_EQ(r.trace_hash, ref.trace_hash);
  EXPECT_EQ(r.makespan, ref.makespan);
  EXPECT_EQ(r.finish_time, ref.finish_time);
  EXPECT_EQ(r.stats.messages, ref.stats.messages);
  EXPECT_EQ(r.stats.packets, ref.stats.packets);
  EXPECT_EQ(r.stats.blocked_headers, ref.stats.blocked_headers);
  EXPECT_EQ(r.stats.blocked_time, ref.stats.blocked_time);
  EXPECT_EQ(r.delivered_early, ref.delivered_early);  // decided in the sequential order
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
