// Determinism (docs/model.md 1.2): the same machine, program and seed give the same trace hash, virtual
// times and statistics whatever the host does: random host delays (perturb), fibers on 1, 2 or 4
// host cores (run-ahead start) or one OS thread per VP, pinned to 1 or 2 host cores or not pinned.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "algorithms/registry.hpp"
#include "support/host_independent.hpp"
#include "support/model.hpp"
#include "touchstone/error.hpp"

using namespace touchstone;

namespace {

using Config = ts_test::HostConfig;
using ts_test::describe;
using ts_test::expect_same_run;

// Runs `program` on m 20 times: fibers on 1, 2 and 4 host cores (run-ahead start) and threads
// (unpinned, 1 core, 2 cores), with and without perturbation, and checks that every run behaved
// identically. Returns the first run.
RunResult expect_identical(const Machine& m, const Program& program, std::uint64_t seed = 0) {
  std::vector<Config> configs;
  const Execution execs[] = {Execution::fibers, Execution::threads, Execution::fibers, Execution::threads,
                             Execution::fibers, Execution::threads};
  const int cores[] = {0, 0, 2, 1, 4, 2};
  for (int i = 0; i < 20; ++i)
    configs.push_back({execs[i % 6], cores[i % 6], i < 6 ? 0 : static_cast<std::uint64_t>(1000 + 7 * i)});
  std::vector<RunResult> results;
  for (const auto& c : configs) {
    RunOptions o;
    o.execution = c.execution;
    o.host_cores = c.host_cores;
    o.perturb = c.perturb;
    o.seed = seed;
    o.parallel_programs_from_us = 0;
    results.push_back(run(m, program, o));
  }
  const RunResult& ref = results[0];
  for (std::size_t i = 1; i < results.size(); ++i) {
    SCOPED_TRACE(describe(configs[i]));
    expect_same_run(results[i], ref);
  }
  return ref;
}

RunResult expect_identical_runs(const std::string& algorithm, std::size_t size,
                                const std::string& machine = "mesh:8x8") {
  const auto& alg = algorithms::find(algorithm);
  const algorithms::Args args{size, 0, true};
  const RunResult ref = expect_identical(parse_machine(machine), [&](Proc& p) { alg.program(p, args); });
  EXPECT_EQ(ref.stats.messages, 64u * 63u);
  return ref;
}

// A node mechanism's determinism test: `algorithm` at `size` on the machine `with` it, 20 times
// (expect_identical), and once on the machine `without` it, whose different trace shows that the
// mechanism acted in this run. The caller checks which way the makespan moved.
struct MechanismRuns {
  RunResult with, without;
};
MechanismRuns mechanism_runs(const std::string& algorithm, std::size_t size, const std::string& with,
                             const std::string& without) {
  const auto& alg = algorithms::find(algorithm);
  const algorithms::Args args{size, 0, true};
  const Program program = [&](Proc& p) { alg.program(p, args); };
  MechanismRuns r{expect_identical(parse_machine(with), program), run(parse_machine(without), program)};
  EXPECT_NE(r.with.trace_hash, r.without.trace_hash);
  return r;
}

TEST(Determinism, AlltoallOneLevXorSameTraceHashOverTwentyPerturbedRuns) {
  expect_identical_runs("alltoall/1-lev-xor", 1100);  // two packets per message
}

TEST(Determinism, AlltoallOneLevDirSameTraceHashOverTwentyPerturbedRuns) {
  expect_identical_runs("alltoall/1-lev-dir", 1100);
}

// Matching costs count queue entries in virtual time (docs/model.md 2.5), whatever order the host
// ran the VPs in; 63 receives posted at once make the count matter.
TEST(Determinism, MatchingCostsSameTraceHashOverTwentyPerturbedRuns) {
  const RunResult with = expect_identical_runs("alltoall/1-lev-dir", 100, "mesh:8x8,match_ns=300");
  const RunResult without = expect_identical_runs("alltoall/1-lev-dir", 100, "mesh:8x8");
  EXPECT_GT(with.makespan, without.makespan);
}

// The hash is sensitive: a different program (or size) gives a different hash.
TEST(Determinism, TraceHashDistinguishesDifferentRuns) {
  const Machine m = parse_machine("mesh:4x4");
  const auto& alg = algorithms::find("alltoall/1-lev-dir");
  auto hash = [&](std::size_t size) {
    return run(m, [&](Proc& p) { alg.program(p, algorithms::Args{size, 0, true}); }).trace_hash;
  };
  EXPECT_EQ(hash(100), hash(100));
  EXPECT_NE(hash(100), hash(101));
}

// Phantom payloads change nothing but the bytes.
TEST(Determinism, PhantomPayloadsGiveTheSameTimesAndHash) {
  const Machine m = parse_machine("mesh:4x4");
  const auto& alg = algorithms::find("alltoall/1-lev-xor");
  const RunResult real = run(m, [&](Proc& p) { alg.program(p, algorithms::Args{2000, 0, true}); });
  RunOptions o;
  o.phantom_payloads = true;
  const RunResult phantom = run(m, [&](Proc& p) { alg.program(p, algorithms::Args{2000, 0, false}); }, o);
  EXPECT_EQ(real.trace_hash, phantom.trace_hash);
  EXPECT_EQ(real.makespan, phantom.makespan);
}

// Run-ahead (runtime/src/network.cpp, Network::took): without an observer a header crosses the
// free channels ahead of it in one event and gives them back when a header with an earlier claim
// comes; with one (--explain) it takes one event per hop. Both must be the same run, on workloads
// where headers meet all the time: worms longer and shorter than their paths (hop_ns=3000 with
// 32+8-byte packets frees channels behind the header), several packets per message, tori,
// cut-through, random and round-robin arbitration, several ports and bounded buffers.
TEST(Determinism, RunAheadGivesTheSameRunAsOneEventPerHop) {
  struct Case {
    const char* machine;
    const char* algorithm;
    std::size_t size;
  };
  int meetings = 0;
  std::uint64_t events_ahead = 0, events_per_hop = 0;
  for (const Case& c : {Case{"mesh:8x8", "alltoall/1-lev-dir", 1100}, Case{"mesh:8x8,hop_ns=3000,packet=32+8", "alltoall/1-lev-dir", 100},
                        Case{"mesh:8x8,hop_ns=3000,packet=32+8", "alltoall/1-lev-xor", 100},
                        Case{"mesh:8x8,hop_ns=3000,packet=32+8,arbitration=round-robin", "gather/2-lev-rec", 64},
                        Case{"torus:8x8,hop_ns=3000,packet=32+8,arbitration=random", "alltoall/1-lev-xor", 100},
                        Case{"mesh:8x8,switching=cut-through,router_buffer=256,hop_ns=500", "alltoall/1-lev-dir", 300},
                        Case{"mesh:4x4x4,hop_ns=2000,ports=2", "alltoall/1-lev-dir", 200},
                        Case{"mesh:8x8,hop_ns=3000,packet=32+8,buffer=512", "gather/1-lev-dir", 100},
                        Case{"delta:8x8", "alltoall/2-lev-c,r-int", 1000}, Case{"cm5:32", "alltoall/1-lev-xor", 100},
                        Case{"switch2:16+16", "allgather/SO-ring", 512}}) {
    SCOPED_TRACE(fmt::format("{} {} {}", c.machine, c.algorithm, c.size));
    const Machine m = parse_machine(c.machine);
    const auto& alg = algorithms::find(c.algorithm);
    const algorithms::Args args{c.size, 0, true};
    const Program program = [&](Proc& p) { alg.program(p, args); };
    RunOptions per_hop;
    per_hop.explain = true;  // an observer is told of every take: one event per hop
    const RunResult ahead = run(m, program);
    const RunResult hops = run(m, program, per_hop);
    expect_same_run(ahead, hops, false);
    meetings += ahead.stats.blocked_headers > 0;
    events_ahead += ahead.stats.events;
    events_per_hop += hops.stats.events;
  }
  EXPECT_GE(meetings, 8);  // headers met in (nearly) every case
  // Fewer events in all, though not in every case: a position given back costs the superseded
  // event and a new one (short worms that meet all the time).
  EXPECT_LT(events_ahead, events_per_hop);
}

// Worms that follow each other: every rank sends to rank 0, so the messages of a row line up behind
// each other towards it, each header taking ahead the channels the tail in front of it will have
// left (releases that a take made ahead scheduled, and that go when it is given back). Crossing
// them, every rank exchanges with a rank half the machine away at staggered times, so headers keep
// asking for channels a line has taken ahead, and a give-back must first undo the takes that rest
// on it, down the line. Both ways the same run, on long and short worms, several packets per
// message, a torus and two ports; and far fewer events than one per hop where lines form.
TEST(Determinism, LinesOfWormsRunAheadGiveTheSameRunAsOneEventPerHop) {
  const Program program = [](Proc& p) {
    const int n = p.size(), me = p.rank();
    std::vector<std::byte> out(900), in(900), all(me == 0 ? std::size_t(n) * 900 : 0);
    for (int round = 0; round < 3; ++round) {
      const std::size_t len = 16 + std::size_t((me * 7 + round * 13) % 5) * 200;
      const int partner = (me + n / 2 + round) % n, from = (me + n - n / 2 - round) % n;
      std::vector<Request> reqs;
      if (me == 0)
        for (int src = 1; src < n; ++src) {
          const std::size_t l = 16 + std::size_t((src * 7 + round * 13) % 5) * 200;
          reqs.push_back(p.irecv(src, 1, std::span(all).subspan(std::size_t(src) * 900, l)));
        }
      const std::size_t from_len = 16 + std::size_t((from * 7 + round * 13) % 5) * 150;
      reqs.push_back(p.irecv(from, 2, std::span(in).first(from_len)));
      p.compute(nanoseconds(700 * ((me + round) % 4)));
      if (me != 0) reqs.push_back(p.isend(0, 1, std::span<const std::byte>(out).first(len)));
      const std::size_t cross = 16 + std::size_t((me * 7 + round * 13) % 5) * 150;
      reqs.push_back(p.isend(partner, 2, std::span<const std::byte>(out).first(cross)));
      p.waitall(reqs);
    }
  };
  std::uint64_t events_ahead = 0, events_per_hop = 0;
  for (const char* machine : {"mesh:16x16", "mesh:16x16,hop_ns=3000,packet=32+8", "mesh:32x4,hop_ns=1000,packet=128+8",
                              "torus:8x8,hop_ns=2000,packet=64+8", "mesh:16x8,ports=2,hop_ns=1500"}) {
    SCOPED_TRACE(machine);
    const Machine m = parse_machine(machine);
    RunOptions per_hop;
    per_hop.explain = true;  // an observer is told of every take: one event per hop
    const RunResult ahead = run(m, program);
    const RunResult hops = run(m, program, per_hop);
    expect_same_run(ahead, hops, false);
    EXPECT_GT(ahead.stats.blocked_headers, 0u);
    events_ahead += ahead.stats.events;
    events_per_hop += hops.stats.events;
    // Where rows of 32 line up towards rank 0 and worms are short, a header goes down the line on
    // the releases the worm in front scheduled ahead: under half the events of one per hop.
    if (std::string_view(machine).starts_with("mesh:32x4")) {
      EXPECT_LT(ahead.stats.events * 2, hops.stats.events);
    }
  }
  EXPECT_LT(events_ahead, events_per_hop);
}

// An injection port's release (runtime/src/network.cpp, Network::free_position_or_port) is an
// event only when a message waits for the port, or for an observer, which is told every event the
// model states. Both must be the same run where a node's messages queue for its ports and free
// them at every moment: bursts of sends of mixed lengths to the same and to different
// destinations (which keep their order across two ports), a network-interface set-up that counts
// from the port's release, sends that come before, at and after a port frees, and a task beside
// each program, whose messages are handed over out of the order they were made in.
TEST(Determinism, PortReleasesOnlyWhereAMessageWaitsGiveTheSameRun) {
  const Program program = [](Proc& p) {
    const int n = p.size(), me = p.rank();
    const std::size_t sizes[] = {100, 3000, 40, 700, 1};
    std::vector<std::byte> out(3000), in(5 * 3000 * 2);
    for (int round = 0; round < 4; ++round) {
      std::vector<Request> reqs;
      for (int k = 0; k < 5; ++k) {
        const std::size_t len = sizes[(k + round) % 5];
        reqs.push_back(p.irecv((me + n - 1) % n, k, std::span(in).subspan(std::size_t(k) * 3000, len)));
        reqs.push_back(p.irecv((me + n - 5) % n, 10 + k, std::span(in).subspan(std::size_t(5 + k) * 3000, len)));
      }
      for (int k = 0; k < 5; ++k) {
        const std::size_t len = sizes[(k + round) % 5];
        reqs.push_back(p.isend((me + 1) % n, k, std::span<const std::byte>(out).first(len)));
        reqs.push_back(p.isend((me + 5) % n, 10 + k, std::span<const std::byte>(out).first(len)));
      }
      p.waitall(reqs);
      p.compute(microseconds(3 * (me % 4)));
    }
  };
  // A task of each rank sends beside its program (its own clock, docs/model.md 1.7): messages of
  // one node created in one order and handed over in another meet at its ports.
  const Program with_tasks = [](Proc& p) {
    const int n = p.size(), me = p.rank();
    std::vector<std::byte> out(2000), in(4 * 2 * 2000);
    Request task = p.spawn(p.world(), [&, n, me](const Group& own) {
      std::vector<Request> reqs;
      for (int k = 0; k < 4; ++k) {
        const std::size_t len = 500 * static_cast<std::size_t>(k + 1) - 1;
        reqs.push_back(p.isend((me + 5) % n, k, std::span<const std::byte>(out).first(len), own));
        reqs.push_back(p.irecv((me + n - 5) % n, k, std::span(in).subspan(std::size_t(k) * 2000, len), own));
      }
      p.waitall(reqs);
    });
    std::vector<Request> reqs;
    for (int k = 0; k < 4; ++k) {
      const std::size_t len = 2000 - 500 * static_cast<std::size_t>(k);
      reqs.push_back(p.irecv((me + n - 1) % n, k, std::span(in).subspan(std::size_t(4 + k) * 2000, len)));
      p.compute(microseconds(k));
      reqs.push_back(p.isend((me + 1) % n, k, std::span<const std::byte>(out).first(len)));
    }
    reqs.push_back(std::move(task));
    p.waitall(reqs);
  };
  for (const char* machine : {"mesh:4x4,ports=2,ni_setup_us=3", "mesh:4x4,ports=2,hop_ns=2000,packet=32+8",
                              "mesh:4x4,ni_setup_us=2", "cm5:32"}) {
    for (const Program* prog : {&program, &with_tasks}) {
      SCOPED_TRACE(fmt::format("{}{}", machine, prog == &with_tasks ? ", with tasks" : ""));
      const Machine m = parse_machine(machine);
      RunOptions every_event;
      every_event.explain = true;
      const RunResult lazy = run(m, *prog), eager = run(m, *prog, every_event);
      expect_same_run(lazy, eager, false);
      EXPECT_GT(lazy.stats.blocked_headers, 0u);
    }
  }
}

// Run-ahead start (RunOptions::host_cores, docs/parallel.md): `algorithms` (all of the catalog but
// the self-tests when empty; parameterised names allowed) at two sizes on `machine` give the same
// run on 2 and 4 host cores, the latter perturbed with seed `perturb_on_four` (0: not perturbed),
// and with phantom payloads on 2 (whose harness buffers the VPs share, docs/performance.md: under
// ThreadSanitizer this finds a program that still writes them), as on one. An algorithm a machine
// or size does not suit fails the same way on each. Returns how many cases ran (and were
// compared); adds the messages their runs delivered before the arrival (docs/parallel.md, "Copies
// made when the match is known") to *early.
int expect_same_on_host_cores(const std::string& machine, const std::vector<std::string>& algorithms,
                              std::array<std::size_t, 2> sizes, std::uint64_t* early = nullptr,
                              std::uint64_t perturb_on_four = 17) {
  const Machine m = parse_machine(machine);
  std::vector<const algorithms::Algorithm*> algs;
  if (algorithms.empty()) {
    for (const auto& alg : algorithms::catalog())
      if (!alg.name.starts_with("selftest/")) algs.push_back(&alg);
  }
  for (const auto& name : algorithms) algs.push_back(&algorithms::find(name));
  int compared = 0;
  for (const auto* alg : algs) {
    for (const std::size_t size : sizes) {
      SCOPED_TRACE(fmt::format("{} {} bytes on {}", alg->name, size, machine));
      const algorithms::Args args{size, 0, true}, unchecked{size, 0, false};
      auto with = [&](int cores, std::uint64_t perturb, bool phantom = false) {
        RunOptions o;
        o.host_cores = cores;
        o.perturb = perturb;
        o.parallel_programs_from_us = 0;  // the programs of every instant at once, however short
        o.phantom_payloads = phantom;
        return run(m, [&](Proc& p) { alg->program(p, phantom ? unchecked : args); }, o);
      };
      std::optional<RunResult> ref;
      std::string refused;
      try {
        ref = with(1, 0);
      } catch (const std::exception& e) {
        refused = e.what();
      }
      using Variant = std::tuple<int, std::uint64_t, bool>;  // host cores, perturbation seed, phantom
      for (const auto& [cores, perturb, phantom] :
           {Variant{2, 0, false}, Variant{4, perturb_on_four, false}, Variant{2, 0, true}}) {
        SCOPED_TRACE(fmt::format("host_cores={} perturb={} phantom={}", cores, perturb, phantom));
        if (!ref) {
          try {
            with(cores, perturb, phantom);
            ADD_FAILURE() << "ran, but failed on one host core: " << refused;
          } catch (const std::exception& e) {
            EXPECT_EQ(e.what(), refused);
          }
          continue;
        }
        RunResult r = with(cores, perturb, phantom);
        if (phantom) {  // no bytes to move
          EXPECT_EQ(r.delivered_early, 0u);
          r.delivered_early = ref->delivered_early;
        }
        expect_same_run(r, *ref);
      }
      compared += ref.has_value();
      if (ref && early) *early += ref->delivered_early;
    }
  }
  return compared;
}

// One test per machine, so that they run side by side; most of the wall time is --perturb's sleeps.
// Most of the catalog suits each machine (alltoallv/ needs a traffic matrix, some algorithms a mesh).
// On the mesh the second size is one whose messages are copied where their match becomes certain,
// by another host thread on 2 and 4 cores.
TEST(Determinism, HostCoresGiveTheSameRunOnTheCatalogOnAMesh) {
  std::uint64_t early = 0;
  EXPECT_EQ(expect_same_on_host_cores("mesh:8x8", {}, {16, 4100}, &early), 94);
  EXPECT_GT(early, 0u);
}

TEST(Determinism, HostCoresGiveTheSameRunOnTheCatalogOnTheCm5) {
  EXPECT_EQ(expect_same_on_host_cores("cm5:64", {}, {16, 1100}), 86);
}

TEST(Determinism, HostCoresGiveTheSameRunOnTheCatalogOnASwitchCluster) {
  EXPECT_EQ(expect_same_on_host_cores("switch2:16+16", {}, {16, 4100}), 88);
}

// Where a send is held until its receive completes, a receive's completion wakes its sender: the
// programs of an instant may not complete their waits ahead of the rank order there (each of these
// gave another trace on 2 host cores than on 1 when they did).
TEST(Determinism, HostCoresGiveTheSameRunWhereSendsAreHeldUntilReceived) {
  EXPECT_EQ(expect_same_on_host_cores("mesh:8x8,send_holds_until_received=on",
                                      {"allgather/ring", "alltoall/pairwise", "allreduce/recursive-doubling",
                                       "bcast/scatter-allgather", "scan/recursive-doubling"},
                                      {16, 4104}),
            10);
}

// With flow control, 4,104-byte messages (reductions take multiples of 8) go by rendezvous: their
// data is copied into its receive's buffer from the clear to send on, by another host thread on 2
// and 4 cores. Collectives of every
// family that exchange, combine and forward.
TEST(Determinism, HostCoresGiveTheSameRunWhereLongMessagesGoByRendezvous) {
  std::uint64_t early = 0;
  EXPECT_EQ(expect_same_on_host_cores("mesh:8x8,eager_limit=1024",
                                      {"alltoall/1-lev-xor", "alltoall/pairwise", "allgather/ring",
                                       "allreduce/recursive-doubling", "bcast/scatter-allgather", "gather/2-lev-rec",
                                       "scatter/logp-lev-rec", "reduce_scatter/recursive-halving"},
                                      {16, 4104}, &early),
            16);
  EXPECT_GT(early, 0u);
}

// The HPAM algorithms of paper 001 (parameterised by their initial sub-mesh) on two-level machines
// with the inter-level multicast.
TEST(Determinism, HostCoresGiveTheSameRunOnTheHpamAlgorithms) {
  EXPECT_EQ(expect_same_on_host_cores("hpam:1x1/8x8,Q=8,multicast",
                                      {"bcast/hybrid(2x2)", "bcast/multicast(2x1)", "scatter/hybrid(2x2)",
                                       "scatter/multicast(2x1)", "gather/hybrid(2x2)"},
                                      {16, 1100}),
            10);
  EXPECT_EQ(expect_same_on_host_cores("hpam:2x2/8x8,Q=8,multicast",
                                      {"scatter/hybrid-level2(2x2)", "scatter/multicast-level2(2x1)",
                                       "gather/hybrid-level2(2x2)", "scatter/hybrid-both(2x2)",
                                       "scatter/multicast-both-qs(2x1)"},
                                      {16, 1100}),
            10);
}

// 256 VPs: one algorithm or two of each family, perturbed (the whole catalog: the test below); 3 of
// the 18 cases refuse 8-byte messages.
TEST(Determinism, HostCoresGiveTheSameRunOnTheDelta) {
  EXPECT_EQ(expect_same_on_host_cores("delta:16x16",
                                      {"alltoall/1-lev-xor", "alltoall/2-lev-c,r", "scatter/1-lev-our-br",
                                       "gather/2-lev-rec", "bcast/binomial", "allgather/ring", "allreduce/ring",
                                       "reduce_scatter/recursive-halving", "scan/recursive-doubling"},
                                      {8, 300}),
            15);
}

// The whole catalog on the Delta too, on 4 host cores unperturbed: --perturb's sleeps would make
// it about 15 minutes (the cases above are perturbed, and so is every case on the other machines).
TEST(Determinism, HostCoresGiveTheSameRunOnTheWholeCatalogOnTheDelta) {
  EXPECT_EQ(expect_same_on_host_cores("delta:16x16", {}, {8, 300}, nullptr, 0), 94);
}

// The first turns and the rests of the programs that left are handed out to other host threads
// only where a timed sample of them says they are worth it (RunOptions::parallel_programs_from_us):
// never under a threshold no turn reaches (the first 65 first turns run ahead on the calling
// thread, the others start in the event loop as on one host core; the rests run one after another),
// and from the third turn on under one every turn reaches. On 256 VPs, more than the sample, both
// give the run of one host core (the first perturbed too).
TEST(Determinism, HostCoresGiveTheSameRunWhateverTheSampledTurnsDecide) {
  const Machine m = parse_machine("mesh:16x16");
  for (const char* name : {"alltoall/1-lev-xor", "gather/logp-lev-sq", "scatter/2-lev-rec", "bcast/binomial",
                           "allreduce/recursive-doubling"}) {
    const algorithms::Algorithm& alg = algorithms::find(name);
    for (const std::size_t size : {std::size_t{16}, std::size_t{4104}}) {
      SCOPED_TRACE(fmt::format("{} {} bytes", name, size));
      const algorithms::Args args{size, 0, true};
      auto with = [&](int cores, double from_us, std::uint64_t perturb) {
        RunOptions o;
        o.host_cores = cores;
        o.parallel_programs_from_us = from_us;
        o.perturb = perturb;
        return run(m, [&](Proc& p) { alg.program(p, args); }, o);
      };
      const RunResult ref = with(1, 10, 0);
      for (const double from_us : {1e9, 1e-3}) {
        SCOPED_TRACE(fmt::format("parallel_programs_from_us={}", from_us));
        expect_same_run(with(2, from_us, 0), ref);
        expect_same_run(with(4, from_us, from_us > 1 ? 23 : 0), ref);
      }
    }
  }
}

// Run-ahead start hands a program that fails before its first call into the runtime the same
// failure, at its turn: rank 3 throws at once, the others first send.
TEST(Determinism, HostCoresFailureBeforeTheFirstCallIsTheSame) {
  const Machine m = parse_machine("mesh:4x4");
  const Program program = [](Proc& p) {
    if (p.rank() == 3) throw std::runtime_error("rank 3 gives up");
    std::vector<std::byte> b(64);
    p.send((p.rank() + 1) % p.size(), 0, b);
  };
  std::vector<std::string> reports;
  for (const int cores : {1, 2, 4}) {
    RunOptions o;
    o.host_cores = cores;
    try {
      run(m, program, o);
      ADD_FAILURE() << "the run did not fail";
    } catch (const RunError& e) {
      reports.emplace_back(e.what());
    }
  }
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_NE(reports[0].find("rank 3 failed at t=0 us: rank 3 gives up"), std::string::npos) << reports[0];
  EXPECT_EQ(reports[1], reports[0]);
  EXPECT_EQ(reports[2], reports[0]);
}

// Remote test-and-set (docs/model.md 7): 31 VPs of cm5:32 ask for rank 0's lock at the same virtual
// time; exactly one wins (old value 0), and it is the same VP in every host configuration.
TEST(Determinism, TestAndSetHasOneWinnerTheSameOnEveryRun) {
  std::vector<int> winners;
  const RunResult ref = expect_identical(parse_machine("cm5:32"), [&](Proc& p) {
    if (p.rank() == 0) p.register_word(0);
    p.barrier();
    if (p.rank() != 0 && p.test_and_set(0, 0) == 0) winners.push_back(p.rank());
  });
  ASSERT_EQ(winners.size(), 20u);  // one winner per run
  for (int w : winners) EXPECT_EQ(w, winners[0]);
  EXPECT_EQ(ref.stats.messages, 2u * 31u);
}
}  // namespace

// Forked worms (docs/model.md 2.11): the multicast broadcast of section 3.2 (level 1's trees and
// multicasts run concurrently) and the multicast scatter, 20 runs each.
TEST(Determinism, MulticastAlgorithmsSameTraceHashOverTwentyPerturbedRuns) {
  for (const auto& [algorithm, machine] : {std::pair{"bcast/multicast(2x1)", "hpam:2x2/4x8,Q=2,multicast"},
                                           std::pair{"scatter/multicast(2x1)", "hpam:1x1/4x8,Q=8,multicast"}}) {
    SCOPED_TRACE(algorithm);
    const auto& alg = algorithms::find(algorithm);
    const algorithms::Args args{300, 0, true};
    const Machine m = parse_machine(machine);
    const RunResult ref = expect_identical(m, [&](Proc& p) { alg.program(p, args); });
    EXPECT_EQ(ref.stats.messages, static_cast<std::uint64_t>(m.nodes() - 1));
  }
}

// Random and round-robin arbitration (docs/model.md 2.13) decide in virtual time, from the seed:
// the contended 2-switch network of paper 004 and a mesh under round-robin.
TEST(Determinism, ArbitrationSameTraceHashOverTwentyPerturbedRuns) {
  for (const auto& [algorithm, machine] : {std::pair{"allgather/combining", "switch2:16+16,placement=cyclic"},
                                           std::pair{"allgather/SB", "switch2:21+11,placement=cyclic"},
                                           std::pair{"alltoall/1-lev-dir", "mesh:4x4,arbitration=round-robin"}}) {
    SCOPED_TRACE(fmt::format("{} on {}", algorithm, machine));
    const auto& alg = algorithms::find(algorithm);
    const algorithms::Args args{256, 0, true};
    const Machine m = parse_machine(machine);
    const RunResult ref = expect_identical(m, [&](Proc& p) { alg.program(p, args); }, 3);
    EXPECT_GT(ref.stats.blocked_headers, 0u);  // arbitration really had waiting headers to choose from
  }
}

// The node mechanisms (docs/model.md 2.14, 2.15) decide nothing from the host:
// per-packet costs on cm5 (multi-packet messages), receive overlap on the delta preset (a chain
// broadcast, whose forwarding nodes overlap).
TEST(Determinism, NodeMechanismsSameTraceHashOverTwentyPerturbedRuns) {
  for (const auto& [algorithm, machine, size] : {std::tuple{"alltoall/1-lev-xor", "cm5:32", 100},
                                                 std::tuple{"scatter/1-lev-our-br", "delta:4x4,recv_overlap=on", 2000}}) {
    SCOPED_TRACE(fmt::format("{} on {}", algorithm, machine));
    const auto& alg = algorithms::find(algorithm);
    const algorithms::Args args{static_cast<std::size_t>(size), 0, true};
    const Machine m = parse_machine(machine);
    const RunResult ref = expect_identical(m, [&](Proc& p) { alg.program(p, args); });
    EXPECT_GT(ref.stats.packets, ref.stats.messages);  // multi-packet messages: the mechanisms act
  }
  // And they change the result: overlap makes the chain faster.
  const auto& br = algorithms::find("scatter/1-lev-our-br");
  const algorithms::Args args{2000, 0, true};
  const Time on = run(parse_machine("delta:4x4,recv_overlap=on"), [&](Proc& p) { br.program(p, args); }).makespan;
  const Time off = run(parse_machine("delta:4x4"), [&](Proc& p) { br.program(p, args); }).makespan;
  EXPECT_LT(on, off);
}

// Demultiplexing per packet (docs/model.md 2.18): paper 000's all-to-one 1-lev-dir on a 4x4 Delta,
// whose 15 converging 5-packet messages interleave at the root. Which packet follows which, and the
// receives each search walks, are decided in virtual time, the same on every host schedule.
TEST(Determinism, PacketDemuxSameTraceHashOverTwentyPerturbedRuns) {
  const auto runs = mechanism_runs("gather/1-lev-dir", 2000, "delta:4x4,demux=packet,demux_us=30", "delta:4x4,demux=message");
  EXPECT_GT(runs.with.makespan, runs.without.makespan);  // packets were matched again
}

// Network-interface set-up (docs/model.md 2.17): the one-to-all 1-lev-dir of paper 000 on a 4x4
// Delta, whose source hands 15 messages to one port; each waits for the previous to leave plus
// ni_setup, decided from the port's release events, the same on every host schedule.
TEST(Determinism, InterfaceSetupSameTraceHashOverTwentyPerturbedRuns) {
  const auto runs = mechanism_runs("scatter/1-lev-dir", 2000, "delta:4x4,ni_setup_us=200", "delta:4x4,ni_setup_us=0");
  EXPECT_GT(runs.with.makespan, runs.without.makespan);  // the rule acts here
}

// The send's tail (docs/model.md 2.19): paper 000's 1-lev-xor on a 4x4 Delta, whose exchanges
// hand each message over send_tail before the send's CPU work ends; the transfer then overlaps
// that work, and messages meet in the network at other times, the same on every host schedule.
TEST(Determinism, SendTailSameTraceHashOverTwentyPerturbedRuns) {
  const auto runs = mechanism_runs("alltoall/1-lev-xor", 600, "delta:4x4,send_tail_us=50", "delta:4x4,send_tail_us=0");
  EXPECT_LT(runs.with.makespan, runs.without.makespan);  // the tail acts here
}

// Flow control (docs/model.md 2.16): a hot spot (every rank sends 1000 bytes straight to rank 0) on
// mesh:4x4 with a 2 KB receive buffer. Without flow control the buffer changes nothing here (the
// receiver frees it as fast as the one ejection channel fills it); with it, senders that find the
// buffer full at their send time go by rendezvous, decided at each sender's virtual time, the same
// on every host schedule.
TEST(Determinism, FlowControlSameTraceHashOverTwentyPerturbedRuns) {
  const auto& alg = algorithms::find("gather/1-lev-dir");
  const algorithms::Args args{1000, 0, true};
  auto once = [&](const char* spec) { return run(parse_machine(spec), [&](Proc& p) { alg.program(p, args); }); };
  EXPECT_EQ(once("mesh:4x4,buffer=2048").trace_hash, once("mesh:4x4").trace_hash);
  const RunResult ref =
      expect_identical(parse_machine("mesh:4x4,buffer=2048,eager_limit=unlimited"), [&](Proc& p) { alg.program(p, args); });
  EXPECT_GT(ref.stats.messages, 15u);       // some went by rendezvous: 3 messages instead of 1
  EXPECT_LT(ref.stats.messages, 3u * 15u);  // and some eager
  EXPECT_GT(ref.makespan, once("mesh:4x4").makespan);
}
