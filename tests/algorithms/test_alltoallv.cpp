// Many-to-many personalized communication (paper 003): every byte of random matrices reaches its
// destination exactly once with every algorithm (the harness checks every received byte, and the
// receive buffers are exactly the columns' sizes); the stage bounds of section 6.1 and 6.2 hold
// over many random matrices.
#include <gtest/gtest.h>

#include <numeric>

#include "algorithms/alltoallv.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using algorithms::TrafficMatrix;

namespace {

// A random bounded-traffic (not equal-traffic) matrix: entries drawn so row and column sums stay
// at most t, some rows and columns empty.
TrafficMatrix random_bounded(int p, std::int64_t t, std::uint64_t seed) {
  std::uint64_t s = seed;
  auto next = [&] { s = s * 6364136223846793005ULL + 1442695040888963407ULL; return s >> 33; };
  TrafficMatrix m(p);
  std::vector<std::int64_t> row(static_cast<std::size_t>(p), 0), col(static_cast<std::size_t>(p), 0);
  for (int x = 0; x < 4 * p; ++x) {
    const int i = static_cast<int>(next() % static_cast<std::uint64_t>(p)), j = static_cast<int>(next() % static_cast<std::uint64_t>(p));
    const std::int64_t room = std::min(t - row[static_cast<std::size_t>(i)], t - col[static_cast<std::size_t>(j)]);
    if (room <= 0) continue;
    const auto v = static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(room + 1));
    m.set(i, j, m.at(i, j) + v);
    row[static_cast<std::size_t>(i)] += v;
    col[static_cast<std::size_t>(j)] += v;
  }
  return m;
}

const char* const kAlgorithms[] = {"alltoallv/linear-permutation", "alltoallv/two-stage", "alltoallv/two-stage-shuffled",
                                   "alltoallv/random-scheduling", "alltoallv/random-scheduling-plus"};

TEST(Alltoallv, EveryByteArrivesOnceOnGeneratedMatrices) {
  for (const char* machine : {"cm5:32", "mesh:2x3", "mesh:4x4"})
    for (const char* name : kAlgorithms)
      for (const char* spec : {"k=2,l=1/2,t=1000", "k=4,l=1/4,t=333", "k=1,t=50"}) {
        const Machine m = parse_machine(machine);
        if (m.nodes() < 4 && std::string(spec).rfind("k=4", 0) == 0) continue;
        algorithms::Args args;
        args.traffic = algorithms::parse_traffic(spec);
        const auto& alg = algorithms::find(name);
        RunOptions o;
        o.seed = 7;
        RunResult r;
        ASSERT_NO_THROW(r = run(m, [&](Proc& p) { alg.program(p, args); }, o)) << name << " " << machine << " " << spec;
        if (std::string(name) == "alltoallv/linear-permutation" && m.net.barrier == BarrierKind::hardware) {
          // (hardware barriers send no messages) one message per non-zero off-diagonal entry, carrying exactly the matrix's bytes
          const auto tm = algorithms::generate_traffic(m.nodes(), args.traffic, 7);
          std::uint64_t msgs = 0, bytes = 0;
          for (int i = 0; i < m.nodes(); ++i)
            for (int j = 0; j < m.nodes(); ++j)
              if (i != j && tm.at(i, j) > 0) ++msgs, bytes += static_cast<std::uint64_t>(tm.at(i, j));
          EXPECT_EQ(r.stats.messages, msgs) << machine << " " << spec;
          EXPECT_EQ(r.stats.payload_bytes, bytes) << machine << " " << spec;
        }
      }
}

// Runs one of the algorithms on a given matrix with its own byte pattern, checking every byte.
enum class Variant { two_stage, shuffled, random, random_plus };
RunResult run_on(const Machine& m, const TrafficMatrix& tm, Variant v, const RunOptions& o) {
  const int n = m.nodes();
  return run(m, [&](Proc& p) {
    const int me = p.rank();
    std::vector<std::byte> send(static_cast<std::size_t>(tm.r_i(me))), recv(static_cast<std::size_t>(tm.c_j(me)));
    std::size_t at = 0;
    for (int j = 0; j < n; ++j)
      for (std::int64_t x = 0; x < tm.at(me, j); ++x) send[at++] = static_cast<std::byte>(me * 16 + j + x * 3);
    if (v == Variant::two_stage || v == Variant::shuffled)
      algorithms::alltoallv_two_stage(p, tm, send, recv, v == Variant::shuffled);
    else
      algorithms::alltoallv_random_scheduling(p, tm, send, recv, v == Variant::random_plus);
    at = 0;
    for (int i = 0; i < n; ++i)
      for (std::int64_t x = 0; x < tm.at(i, me); ++x)
        if (recv[at++] != static_cast<std::byte>(i * 16 + me + x * 3)) throw std::runtime_error("wrong byte");
  }, o);
}

TEST(Alltoallv, EveryByteArrivesOnceOnRandomBoundedMatrices) {
  for (const char* machine : {"mesh:2x4", "cm5:32"}) {
    const Machine m = parse_machine(machine);
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const TrafficMatrix tm = random_bounded(m.nodes(), 300, seed);
      for (Variant v : {Variant::two_stage, Variant::shuffled, Variant::random, Variant::random_plus}) {
        RunOptions o;
        o.seed = seed;
        RunResult r;
        ASSERT_NO_THROW(r = run_on(m, tm, v, o)) << machine << " seed " << seed << " variant " << static_cast<int>(v);
        if (v == Variant::random || v == Variant::random_plus) {
          // Exactly one data message per non-zero off-diagonal entry, carrying exactly its bytes,
          // and one 0-byte release after it; everything else is inquiries (request + reply:
          // test_and_set 8 + 8 bytes, the plus inquiry 16 + 8) and the one barrier.
          const int n = m.nodes();
          std::uint64_t msgs = 0, bytes = 0;
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
              if (i != j && tm.at(i, j) > 0) ++msgs, bytes += static_cast<std::uint64_t>(tm.at(i, j));
          int rounds = 0;
          while ((1 << rounds) < n) ++rounds;
          const std::uint64_t barrier = m.net.barrier == BarrierKind::hardware ? 0 : static_cast<std::uint64_t>(n * rounds);
          ASSERT_GE(r.stats.messages, barrier + 2 * msgs);
          const std::uint64_t other = r.stats.messages - barrier - 2 * msgs;
          EXPECT_EQ(other % 2, 0u);
          const std::uint64_t inquiries = other / 2;
          EXPECT_GE(inquiries, msgs);
          EXPECT_EQ(r.stats.payload_bytes, bytes + inquiries * (v == Variant::random ? 16u : 24u));
        }
      }
    }
  }
}

// Section 5's random schedules depend only on the seed: the same trace_hash under any --perturb
// and either execution mode; another seed (same matrix) gives another schedule.
TEST(Alltoallv, RandomSchedulingIsDeterministicPerSeed) {
  const Machine m = parse_machine("cm5:32");
  const TrafficMatrix tm = algorithms::generate_traffic(32, {4, 0.25, 4000, {}}, 5);
  for (Variant v : {Variant::random, Variant::random_plus}) {
    auto result = [&](std::uint64_t seed, std::uint64_t perturb, Execution e) {
      RunOptions o;
      o.seed = seed;
      o.perturb = perturb;
      o.execution = e;
      return run_on(m, tm, v, o);
    };
    const RunResult ref = result(1, 0, Execution::fibers);
    for (auto [perturb, e] : {std::pair{3ULL, Execution::threads}, std::pair{11ULL, Execution::fibers},
                              std::pair{29ULL, Execution::threads}}) {
      const RunResult r = result(1, perturb, e);
      EXPECT_EQ(r.trace_hash, ref.trace_hash);
      EXPECT_EQ(r.finish_time, ref.finish_time);
      EXPECT_EQ(r.stats.messages, ref.stats.messages);
    }
    const RunResult other = result(2, 0, Execution::fibers);
    EXPECT_NE(other.trace_hash, ref.trace_hash);
    EXPECT_NE(other.finish_time, ref.finish_time);
  }
}

// Fig. 7 (Stg1pp) as the paper writes it, a byte at a time: the reference the compact
// algorithms::Stage1Plan (O(p) per source) must agree with entry for entry.
std::vector<std::vector<std::int64_t>> fig7_plan(std::span<const std::int64_t> sendl) {
  const auto n = static_cast<std::int64_t>(sendl.size());
  std::vector<std::vector<std::int64_t>> len(static_cast<std::size_t>(n), std::vector<std::int64_t>(static_cast<std::size_t>(n), 0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < n; ++k) len[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] = sendl[static_cast<std::size_t>(j)] / n;
  std::int64_t k = 0;  // the round robin continues across destinations
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t x = 0; x < sendl[static_cast<std::size_t>(j)] % n; ++x) {
      ++len[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)];
      k = (k + 1) % n;
    }
  return len;
}

// Section 6.1: with the round-robin remainder, the stage-1 message from source i to any
// intermediary holds at most ceil(r_i/p) <= ceil(t/p) bytes; section 6.2: the stage-2 message from
// intermediary k to destination j holds at most c_j/p + p <= t/p + p bytes. With shuffling the
// stage-1 sizes are unchanged.
TEST(Alltoallv, StageBoundsHoldOverRandomMatrices) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const int p = 2 + static_cast<int>(seed % 31);
    const TrafficMatrix tm = seed % 2 ? random_bounded(p, 10 + static_cast<std::int64_t>(seed * 37 % 5000), seed)
                                      : algorithms::generate_traffic(p, {1 + static_cast<int>(seed % static_cast<std::uint64_t>(p)), 0.25, static_cast<std::int64_t>(seed * 101), {}}, seed);
    const std::int64_t t = tm.t();
    std::vector<std::vector<std::int64_t>> stage2(static_cast<std::size_t>(p), std::vector<std::int64_t>(static_cast<std::size_t>(p), 0));
    for (int i = 0; i < p; ++i) {
      const auto plan = fig7_plan(tm.row(i));
      const algorithms::Stage1Plan compact(tm.row(i));
      const auto perm = algorithms::stage1_shuffle(compact, seed + static_cast<std::uint64_t>(i));
      for (int k = 0; k < p; ++k) {
        const auto& part = plan[static_cast<std::size_t>(k)];
        const std::int64_t size = std::accumulate(part.begin(), part.end(), std::int64_t{0});
        ASSERT_LE(size, (t + p - 1) / p) << "seed " << seed;
        ASSERT_EQ(compact.total(k), size) << "seed " << seed;
        for (int j = 0; j < p; ++j) ASSERT_EQ(compact.len(k, j), part[static_cast<std::size_t>(j)]) << "seed " << seed;
        const auto& moved = plan[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])];
        ASSERT_EQ(std::accumulate(moved.begin(), moved.end(), std::int64_t{0}), size) << "shuffle keeps sizes";
        for (int j = 0; j < p; ++j) stage2[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] += part[static_cast<std::size_t>(j)];
      }
      for (int j = 0; j < p; ++j) {  // the parts of message i->j add up to it
        std::int64_t sum = 0;
        for (int k = 0; k < p; ++k) sum += plan[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)];
        ASSERT_EQ(sum, tm.at(i, j));
      }
    }
    for (int k = 0; k < p; ++k)
      for (int j = 0; j < p; ++j) ASSERT_LE(stage2[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] * p, t + p * p) << "seed " << seed;
  }
}

TEST(Alltoallv, NeedsATrafficSpec) {
  const Machine m = parse_machine("mesh:2x2");
  const auto& alg = algorithms::find("alltoallv/two-stage");
  EXPECT_THROW(run(m, [&](Proc& p) { alg.program(p, algorithms::Args{}); }), RunError);
}

}  // namespace

namespace {

// The randomized algorithm (section 6.3's shuffle, and the generated matrix) depends only on the
// seed: the same trace_hash under any --perturb, a different one for another seed.
TEST(Alltoallv, ShuffledIsDeterministicPerSeed) {
  const Machine m = parse_machine("cm5:32");
  const auto& alg = algorithms::find("alltoallv/two-stage-shuffled");
  algorithms::Args args;
  args.traffic = algorithms::parse_traffic("k=4,l=1/4,t=2000");
  auto hash = [&](std::uint64_t seed, std::uint64_t perturb) {
    RunOptions o;
    o.seed = seed;
    o.perturb = perturb;
    return run(m, [&](Proc& p) { alg.program(p, args); }, o).trace_hash;
  };
  const auto h1 = hash(1, 0);
  EXPECT_EQ(hash(1, 3), h1);
  EXPECT_EQ(hash(1, 11), h1);
  EXPECT_NE(hash(2, 0), h1);
}

}  // namespace

// Two-stage's messages carry headers of part lengths; with phantom payloads no byte arrives, so it
// computes the headers from the matrix instead of reading them (docs/algorithms.md). The run must
// be the same run: same makespan and trace hash as with real payloads, on several matrices.
TEST(Alltoallv, TwoStageRunsIdenticallyWithPhantomPayloads) {
  for (const char* name : {"alltoallv/two-stage", "alltoallv/two-stage-shuffled"})
    for (const char* spec : {"k=8,t=4096", "k=4,l=1/4,t=2000", "k=32,t=100"}) {
      const Machine m = parse_machine("cm5:32");
      const auto& alg = algorithms::find(name);
      algorithms::Args real;
      real.traffic = algorithms::parse_traffic(spec);
      algorithms::Args phantom = real;
      phantom.check = false;
      RunOptions o;
      const RunResult a = run(m, [&](Proc& p) { alg.program(p, real); }, o);
      o.phantom_payloads = true;
      const RunResult b = run(m, [&](Proc& p) { alg.program(p, phantom); }, o);
      EXPECT_EQ(a.makespan, b.makespan) << name << " " << spec;
      EXPECT_EQ(a.trace_hash, b.trace_hash) << name << " " << spec;
    }
}
