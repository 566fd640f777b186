// The programs of an instant (docs/parallel.md): the VPs one instant lets go on run their programs
// at once on several host threads, from where the call they waited in returns up to their next
// call, and the run is the one of a single host core. Every test here runs fibers on 1, 2 and 4 host
// cores (the programs of every instant at once, however short: parallel_programs_from_us = 0),
// perturbed too, and on threads, and checks the same trace hash, times, statistics and results.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/host_independent.hpp"
#include "touchstone/error.hpp"

using namespace touchstone;

namespace {

using Way = ts_test::HostConfig;
using ts_test::describe;
using ts_test::same_failure_every_way;
const auto& kWays = ts_test::kParallelWays;

// The suite's options for a way, with the programs of every instant at once, however short.
RunOptions every_instant(const Way& w) { return ts_test::every_parallel_turn(w); }

// Runs `program` every way; every run must be the first's. Returns the runs' instants_at_once, in
// kWays' order.
std::vector<std::uint64_t> expect_same_every_way(const Machine& m, const Program& program) {
  std::vector<std::uint64_t> at_once;
  RunResult ref;
  for (const Way& w : kWays) {
    SCOPED_TRACE(describe(w));
    const RunResult r = run(m, program, every_instant(w));
    at_once.push_back(r.instants_at_once);
    if (&w == &kWays[0]) ref = r;
    else ts_test::expect_same_run(r, ref);
  }
  return at_once;
}

// A Jacobi-like sweep: each rank computes on its own vector, then trades its edge values with its
// two ring neighbours (irecv, isend, waitall) and starts again from where waitall returns: its
// computing is the program of the instant that completes its receives.
void halo_sweeps(Proc& p, std::vector<double>& out) {
  const int n = p.size(), me = p.rank(), left = (me + n - 1) % n, right = (me + 1) % n;
  std::vector<double> u(64, me), v(64);
  for (int it = 0; it < 6; ++it) {
    for (std::size_t i = 1; i + 1 < u.size(); ++i) v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) + std::sqrt(u[i] + 1);
    u.swap(v);
    double edge[2] = {u[1], u[62]}, halo[2] = {0, 0};
    Request rq[4] = {p.irecv(left, it, std::as_writable_bytes(std::span(halo, 1))),
                     p.irecv(right, it, std::as_writable_bytes(std::span(halo + 1, 1))),
                     p.isend(right, it, std::as_bytes(std::span(edge, 1))),
                     p.isend(left, it, std::as_bytes(std::span(edge + 1, 1)))};
    p.waitall(rq);
    u[0] = halo[0];
    u[63] = halo[1];
  }
  out[static_cast<std::size_t>(me)] = u[31];
}

}  // namespace

TEST(InstantPrograms, HaloSweepsAreTheSameRunOnEveryHostAndComputeTheSameValues) {
  const Machine m = parse_machine("torus:4x4");
  std::vector<std::vector<double>> values;
  const Program program = [&](Proc& p) { halo_sweeps(p, values.back()); };
  std::vector<std::uint64_t> at_once;
  RunResult ref;
  for (const Way& w : kWays) {
    SCOPED_TRACE(describe(w));
    values.emplace_back(16, -1.0);
    const RunResult r = run(m, program, every_instant(w));
    at_once.push_back(r.instants_at_once);
    if (&w == &kWays[0]) ref = r;
    else ts_test::expect_same_run(r, ref);
    EXPECT_EQ(values.back(), values.front());
  }
  // Every rank's receives complete at once on the torus's uniform links: the programs of those
  // instants ran at once with more than one host core, and never with one or on threads.
  EXPECT_EQ(at_once[0], 0u);
  EXPECT_GT(at_once[1], 0u);
  EXPECT_EQ(at_once[1], at_once[2]);
  EXPECT_EQ(at_once[5], 0u);
}

// The trace and the order log of such a run are the same files on every host: the trace lists its
// slices by start, not in the order the engine committed them (which the programs of an instant
// change for the completions of waits).
namespace {
// Runs `program` every way with a trace and an order log; every way must write the first's files.
// `fails`: every run must fail, with VPs still waiting at the failure.
void expect_same_files_every_way(const Machine& m, const Program& program, bool fails) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("ts_instants_{}", ::getpid());
  std::filesystem::create_directories(dir);
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::string trace0, order0;
  for (const Way& w : kWays) {
    SCOPED_TRACE(describe(w));
    RunOptions o = every_instant(w);
    o.trace_file = (dir / "trace.json").string();
    o.order_log_file = (dir / "order.txt").string();
    if (fails) {
      EXPECT_THROW(run(m, program, o), RunError);
    } else {
      run(m, program, o);
    }
    const std::string trace = read(o.trace_file), order = read(o.order_log_file);
    ASSERT_GT(trace.size(), 1000u);
    if (fails) {
      ASSERT_NE(trace.find("(when the run failed)"), std::string::npos);
    }
    if (&w == &kWays[0]) {
      trace0 = trace;
      order0 = order;
      continue;
    }
    EXPECT_EQ(trace, trace0);
    EXPECT_EQ(order, order0);
  }
  std::filesystem::remove_all(dir);
}
}  // namespace

TEST(InstantPrograms, TheTraceAndTheOrderLogAreTheSameFiles) {
  std::vector<double> values(16);
  expect_same_files_every_way(
      parse_machine("torus:4x4"), [&](Proc& p) { halo_sweeps(p, values); }, false);
}

// ... and so are the files of a run that fails at a turn of an instant whose later members' waits
// completed ahead of it: those completions never happened in the sequential order, and the files
// show those VPs still waiting, "(when the run failed)", as one host core does. Their receives and
// waits were in the files on several host cores.
TEST(InstantPrograms, AFailedRunsTraceAndOrderLogAreTheSameFiles) {
  expect_same_files_every_way(
      parse_machine("torus:4x4"),
      [](Proc& p) {
        std::vector<double> out(16);
        halo_sweeps(p, out);
        if (p.rank() == 6 || p.rank() == 9) throw std::runtime_error(fmt::format("rank {} gives up", p.rank()));
        p.barrier();
      },
      true);
}

// A barrier's release and the end of compute() let VPs go on at one instant too; the programs'
// clocks (Proc::now) are those of their turns.
TEST(InstantPrograms, BarrierReleasesAndComputeEndsAreTheSameRun) {
  const Machine m = parse_machine("cm5:32");
  std::vector<std::vector<Time>> seen(std::size(kWays), std::vector<Time>(32));
  std::size_t way = 0;
  const Program program = [&](Proc& p) {
    for (int k = 0; k < 4; ++k) {
      p.barrier();
      p.compute(microseconds(3 + p.rank() % 2));
      seen[way][static_cast<std::size_t>(p.rank())] += p.now();
      std::vector<std::byte> b(8 * (1 + k));
      if (p.rank() % 2) p.send(p.rank() - 1, k, b);
      else p.recv(p.rank() + 1, k, b);
    }
  };
  std::vector<std::uint64_t> at_once;
  RunResult ref;
  for (; way < std::size(kWays); ++way) {
    SCOPED_TRACE(describe(kWays[way]));
    const RunResult r = run(m, program, every_instant(kWays[way]));
    at_once.push_back(r.instants_at_once);
    if (way == 0) ref = r;
    else ts_test::expect_same_run(r, ref);
    EXPECT_EQ(seen[way], seen[0]);
  }
  EXPECT_GT(at_once[1], 0u);
}

// A program that throws in its instant's program fails the run with the report of one host core:
// the failure is an event of its turn.
TEST(InstantPrograms, AFailureInAnInstantsProgramIsReportedAtItsTurn) {
  const Machine m = parse_machine("torus:4x4");
  const Program program = [](Proc& p) {
    std::vector<double> out(16);
    halo_sweeps(p, out);
    if (p.rank() == 6 || p.rank() == 9) throw std::runtime_error(fmt::format("rank {} gives up", p.rank()));
    p.barrier();
  };
  const std::string report = same_failure_every_way(m, program);
  EXPECT_NE(report.find("rank 6 failed at t="), std::string::npos) << report;
}

// A wait that fails as it completes (a message longer than its receive buffer) fails the program at
// its turn too, whichever VPs its instant let go on before and after it.
TEST(InstantPrograms, AWaitThatFailsAsItCompletesIsReportedAtItsTurn) {
  const Machine m = parse_machine("torus:4x4");
  const Program program = [](Proc& p) {
    const int n = p.size(), me = p.rank(), left = (me + n - 1) % n, right = (me + 1) % n;
    for (int it = 0; it < 4; ++it) {
      double edge = me, halo[2] = {0, 0};
      const std::size_t room = it == 3 && me == 5 ? 4 : sizeof(double);  // too small: the message has 8 bytes
      Request rq[4] = {p.irecv(left, it, std::as_writable_bytes(std::span(halo, 1)).first(room)),
                       p.irecv(right, it, std::as_writable_bytes(std::span(halo + 1, 1))),
                       p.isend(right, it, std::as_bytes(std::span(&edge, 1))),
                       p.isend(left, it, std::as_bytes(std::span(&edge, 1)))};
      p.waitall(rq);
    }
  };
  const std::string report = same_failure_every_way(m, program);
  EXPECT_NE(report.find("rank 5 failed at t="), std::string::npos) << report;
  EXPECT_NE(report.find("more than the receive buffer of 4 bytes"), std::string::npos) << report;
}

// Programs that end in their instant's program, and one that lets a send request go there and then
// overwrites the buffer: the message still carries the bytes it had when it was let go.
TEST(InstantPrograms, EndsAndRequestsLetGoInAnInstantsProgram) {
  const Machine m = parse_machine("mesh:4x4");
  std::vector<int> got(16, -1);
  const Program program = [&](Proc& p) {
    const int n = p.size(), me = p.rank();
    std::vector<double> out(16);
    halo_sweeps(p, out);
    if (me % 4 == 3) return;  // ends in the program of the instant that completed its waitall
    int word = 1000 + me, in = -1;
    const Group stayed = p.group({0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14});
    if ((me + 1) % n % 4 != 3) {
      Request s = p.isend((me + 1) % n, 99, std::as_bytes(std::span(&word, 1)));
      p.barrier(stayed);
      // The barrier's release is an instant: s is let go in its program, then the buffer changes.
    } else {
      p.barrier(stayed);
    }
    word = -7;
    if ((me + n - 1) % n % 4 != 3) {
      p.recv((me + n - 1) % n, 99, std::as_writable_bytes(std::span(&in, 1)));
      got[static_cast<std::size_t>(me)] = in;
    }
  };
  const std::vector<std::uint64_t> at_once = expect_same_every_way(m, program);
  EXPECT_GT(at_once[1], 0u);
  for (int r = 0; r < 16; ++r) {
    const int from = (r + 15) % 16;
    if (r % 4 == 3 || from % 4 == 3) continue;
    EXPECT_EQ(got[static_cast<std::size_t>(r)], 1000 + from) << "rank " << r;
  }
}

TEST(InstantPrograms, ANegativeThresholdIsRefused) {
  RunOptions o;
  o.parallel_programs_from_us = -1;
  EXPECT_THROW(run(parse_machine("mesh:2x2"), [](Proc&) {}, o), UsageError);
}

// A library layered on the Proc that keeps state all VPs share (as the MPI interface does) takes
// the VP's turn before touching it (Proc::await_turn): the shared log grows in the order of one
// host core whatever runs at once. Hooks that touch only their own VP's state
// (RunOptions::hooks_are_per_vp) are called in that order too, and do not hold the programs back.
TEST(InstantPrograms, AwaitTurnOrdersSharedStateAndPerVpHooksLetProgramsRunAtOnce) {
  const Machine m = parse_machine("torus:4x4");
  std::vector<int> shared_log;
  std::vector<std::vector<int>> pauses(16);
  std::vector<double> values(16);
  const Program program = [&](Proc& p) {
    for (int round = 0; round < 3; ++round) {
      halo_sweeps(p, values);
      double own = 0;  // the rank's own work: may run beside other ranks'
      for (int i = 0; i < 2000; ++i) own += std::sqrt(i + p.rank());
      p.await_turn();
      shared_log.push_back(p.rank() * 1000 + round * 10 + (own > 0 ? 1 : 0));
    }
  };
  std::vector<std::vector<int>> logs, all_pauses;
  std::vector<std::uint64_t> at_once;
  RunResult ref;
  for (const Way& w : kWays) {
    SCOPED_TRACE(describe(w));
    shared_log.clear();
    for (auto& v : pauses) v.clear();
    RunOptions o = every_instant(w);
    o.hooks_are_per_vp = true;
    o.on_vp_pause = [&](int rank) {
      auto& mine = pauses[static_cast<std::size_t>(rank)];
      mine.push_back(static_cast<int>(shared_log.size()));  // where the shared log stood
    };
    const RunResult r = run(m, program, o);
    at_once.push_back(r.instants_at_once);
    if (&w == &kWays[0]) ref = r;
    else ts_test::expect_same_run(r, ref);
    logs.push_back(shared_log);
    std::vector<int> flat;
    for (const auto& v : pauses) flat.insert(flat.end(), v.begin(), v.end());
    all_pauses.push_back(flat);
  }
  ASSERT_EQ(logs[0].size(), 48u);
  for (std::size_t i = 1; i < logs.size(); ++i) {
    EXPECT_EQ(logs[i], logs[0]) << describe(kWays[i]);
    EXPECT_EQ(all_pauses[i], all_pauses[0]) << describe(kWays[i]);
  }
  EXPECT_EQ(at_once[0], 0u);
  EXPECT_GT(at_once[1], 0u);  // the hooks did not hold the programs back
  EXPECT_EQ(at_once[5], 0u);
}

// Hooks that assume one VP's code at a time (the default) keep every program in the sequential
// turns: no instant runs its programs at once.
TEST(InstantPrograms, HooksNotPerVpKeepProgramsOneAtATime) {
  const Machine m = parse_machine("torus:4x4");
  std::vector<double> values(16);
  RunOptions o = every_instant({Execution::fibers, 2, 0});
  int pauses = 0;
  o.on_vp_pause = [&](int) { ++pauses; };  // not per VP: a counter all share
  const RunResult r = run(m, [&](Proc& p) { halo_sweeps(p, values); }, o);
  EXPECT_EQ(r.instants_at_once, 0u);
  EXPECT_GT(pauses, 16 * 6);
}
