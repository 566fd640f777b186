// Paper 002: the standard and xor embeddings (dilation, congestion, conflict-free rounds checked
// with the topology's routes and in the emulator), Figure 1's block positions, and delivery of every
// block by cc-cube and pipelined-cc-cube on 1-, 2- and 3-D meshes and tori, one-port and all-port.
#include <gtest/gtest.h>

#include <ostream>
#include <set>

#include <fmt/format.h>

#include "algorithms/cccube.hpp"
#include "algorithms/embedding.hpp"
#include "algorithms/exchange.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using namespace touchstone::algorithms;

namespace {

std::vector<int> dilations(const std::string& machine, const Embedding& e) {
  const Machine m = parse_machine(machine);
  std::vector<int> out;
  for (int i = 0; i < e.d; ++i) out.push_back(dilation(*m.topology, e, i));
  return out;
}
std::vector<int> congestions(const std::string& machine, const Embedding& e) {
  const Machine m = parse_machine(machine);
  std::vector<int> out;
  for (int i = 0; i < e.d; ++i) out.push_back(congestion(*m.topology, e, i));
  return out;
}

TEST(Embedding, StandardOnMeshesHasDilationTwoToTheBitWithinItsDimension) {
  EXPECT_EQ(dilations("mesh:8", standard_embedding({8})), (std::vector<int>{1, 2, 4}));
  // Bits 0-1 along the rows (last dimension), bits 2-3 along the columns.
  EXPECT_EQ(dilations("mesh:4x4", standard_embedding({4, 4})), (std::vector<int>{1, 2, 1, 2}));
  EXPECT_EQ(dilations("mesh:2x4x2", standard_embedding({2, 4, 2})), (std::vector<int>{1, 1, 2, 1}));
  // On a line the 2^j pairs of a segment of 2^(j+1) nodes all cross its middle link.
  EXPECT_EQ(congestions("mesh:8", standard_embedding({8})), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(congestions("mesh:16", standard_embedding({16})), (std::vector<int>{1, 2, 4, 8}));
}

TEST(Embedding, XorOnToriHalvesTheTopDimensionsCongestion) {
  const Embedding x8 = xor_embedding({8});
  EXPECT_EQ(x8.cube_of, (std::vector<int>{0, 1, 2, 3, 7, 6, 5, 4}));
  EXPECT_EQ(dilations("torus:8", x8), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(congestions("torus:8", x8), (std::vector<int>{1, 2, 2}));
  EXPECT_EQ(congestions("torus:8", standard_embedding({8})), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(congestions("torus:16", xor_embedding({16})), (std::vector<int>{1, 2, 4, 4}));
  EXPECT_EQ(congestions("torus:16", standard_embedding({16})), (std::vector<int>{1, 2, 4, 8}));
  // Rings of 4: both dimensions are conflict-free (0 <-> 3 over the wrap link, 1 <-> 2).
  EXPECT_EQ(congestions("torus:4x4", xor_embedding({4, 4})), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(dilations("torus:4x4", xor_embedding({4, 4})), (std::vector<int>{1, 1, 1, 1}));
}

TEST(Embedding, IsOneToOneAndRefusesOtherExtents) {
  for (const Embedding& e : {standard_embedding({4, 2, 8}), xor_embedding({8, 4, 2})}) {
    ASSERT_EQ(e.node_of.size(), 64u);
    for (int h = 0; h < 64; ++h) EXPECT_EQ(e.cube_of[static_cast<std::size_t>(e.node_of[static_cast<std::size_t>(h)])], h);
  }
  EXPECT_THROW(standard_embedding({3, 4}), UsageError);
  EXPECT_THROW(xor_embedding({6}), UsageError);
  EXPECT_EQ(embedding_for(*parse_machine("torus:8").topology).kind, "xor");
  EXPECT_EQ(embedding_for(*parse_machine("mesh:8").topology).kind, "standard");
}

const char* const kGrids[] = {"mesh:8", "mesh:16", "mesh:4x4", "mesh:2x4x2", "mesh:4x4x4",
                              "torus:8", "torus:16", "torus:4x4", "torus:8x8", "torus:4x2x8"};

// Every round of every dimension's exchange uses each physical link at most once (checked here
// from topo.route directly), every pair is in exactly one round, and the greedy rounds are as few
// as the congestion allows.
TEST(Embedding, ExchangeRoundsAreLinkDisjointAndOptimal) {
  for (const char* spec : kGrids) {
    const Machine m = parse_machine(spec);
    const Topology& t = *m.topology;
    const Embedding e = embedding_for(t);
    for (int i = 0; i < e.d; ++i) {
      const auto rounds = exchange_rounds(t, e, i);
      EXPECT_EQ(static_cast<int>(rounds.size()), congestion(t, e, i)) << spec << " dimension " << i;
      std::set<int> seen;
      for (const auto& round : rounds) {
        std::set<std::string> links;
        for (int h : round) {
          EXPECT_TRUE(seen.insert(h).second);
          for (auto [a, b] : {std::pair{h, h ^ (1 << i)}, std::pair{h ^ (1 << i), h}}) {
            std::vector<LinkId> path;
            t.route(e.node_of[static_cast<std::size_t>(a)], e.node_of[static_cast<std::size_t>(b)], path);
            for (LinkId id : path) {
              std::string name = t.link_name(id);
              name = name.substr(0, name.rfind(" vc") == std::string::npos ? name.size() : name.rfind(" vc"));
              EXPECT_TRUE(links.insert(name).second) << spec << " dimension " << i << " link " << name;
            }
          }
        }
      }
      EXPECT_EQ(static_cast<int>(seen.size()), 1 << (e.d - 1));
    }
  }
}

// Each round alone, run in the emulator with CC-cube's message size (2^(d-1) blocks): no header ever
// waits for a channel.
TEST(Embedding, EachRoundRunsWithZeroBlockedTime) {
  for (const char* spec : kGrids) {
    const Machine m = parse_machine(spec);
    const Embedding e = embedding_for(*m.topology);
    const std::size_t bytes = static_cast<std::size_t>(1 << (e.d - 1)) * 64;
    for (int i = 0; i < e.d; ++i)
      for (const auto& round : exchange_rounds(*m.topology, e, i)) {
        std::set<int> in_round;
        for (int h : round) in_round.insert(h), in_round.insert(h ^ (1 << i));
        const RunResult r = run(m, [&](Proc& p) {
          const int h = e.cube_of[static_cast<std::size_t>(p.rank())];
          if (!in_round.count(h)) return;
          std::vector<std::byte> out(bytes), in(bytes);
          const int partner = e.node_of[static_cast<std::size_t>(h ^ (1 << i))];
          Request reqs[2] = {p.irecv(partner, 0, in), p.isend(partner, 0, out)};
          p.waitall(reqs);
        });
        EXPECT_EQ(r.stats.messages, in_round.size());
        EXPECT_EQ(r.stats.blocked_headers, 0u) << spec << " dimension " << i;
        EXPECT_EQ(r.stats.blocked_time, 0) << spec << " dimension " << i;
      }
  }
}

// Figure 1 (d = 3): block (m, j) is written "mj".
TEST(CcCube, Figure1BlockPositionsAfterEveryIteration) {
  const auto s = cc_cube_states(3);
  ASSERT_EQ(s.size(), 5u);
  using V = std::vector<BlockId>;
  // (a) the initial permutation: node 0 keeps M[j] = 0j; node 1 stores 12 in M[3].
  EXPECT_EQ(s[0][0], (V{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}}));
  EXPECT_EQ(s[0][1][3], (BlockId{1, 2}));
  // x_0 of node 0: blocks 07, 05, 03, 01, in that order.
  V x0;
  for (int pos : cc_cube_message_positions(3, 0)) x0.push_back(s[0][0][static_cast<std::size_t>(pos)]);
  EXPECT_EQ(x0, (V{{0, 7}, {0, 5}, {0, 3}, {0, 1}}));
  EXPECT_EQ(cc_cube_message_positions(3, 1), (std::vector<int>{7, 6, 3, 2}));
  EXPECT_EQ(cc_cube_message_positions(3, 2), (std::vector<int>{7, 6, 5, 4}));
  // (b)-(d): node 0 after iterations 0, 1 and 2 (received blocks in the freed positions).
  EXPECT_EQ(s[1][0], (V{{0, 0}, {1, 0}, {0, 2}, {1, 2}, {0, 4}, {1, 4}, {0, 6}, {1, 6}}));
  EXPECT_EQ(s[2][0], (V{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 4}, {1, 4}, {2, 4}, {3, 4}}));
  EXPECT_EQ(s[3][0], (V{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}}));
  EXPECT_EQ(s[1][1], (V{{1, 1}, {0, 1}, {1, 3}, {0, 3}, {1, 5}, {0, 5}, {1, 7}, {0, 7}}));
  // After the last iteration M[k] of node m holds block (m XOR k, m); the final permutation puts
  // the block from node k in M[k], on every node.
  for (int m = 0; m < 8; ++m)
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(s[3][static_cast<std::size_t>(m)][static_cast<std::size_t>(k)], (BlockId{m ^ k, m}));
      EXPECT_EQ(s[4][static_cast<std::size_t>(m)][static_cast<std::size_t>(k)], (BlockId{k, m}));
    }
}

struct Scenario {
  std::string machine;
  std::string algorithm;
};
// gtest prints a parameter it cannot format as raw bytes (pointers included) in ctest's listing.
void PrintTo(const Scenario& s, std::ostream* os) { *os << s.algorithm << " on " << s.machine; }

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  for (const char* grid : {"mesh:8", "mesh:4x4", "mesh:2x4x2", "torus:8", "torus:4x4", "torus:4x2x4", "torus:2"})
    for (const char* ports : {"", ",ports=all"})
      for (const char* alg : {"alltoall/cc-cube", "alltoall/pipelined-cc-cube(1)", "alltoall/pipelined-cc-cube(2)",
                              "alltoall/pipelined-cc-cube(3)", "alltoall/pipelined-cc-cube(4)"})
        out.push_back({std::string(grid) + ports, alg});
  return out;
}

class CcCubeDelivery : public testing::TestWithParam<Scenario> {};

// The harness checks every byte of every block; cc-cube sends d messages per node, pipelined-cc-
// cube d * degree, each carrying its share of 2^(d-1) blocks.
TEST_P(CcCubeDelivery, DeliversEveryBlockExactlyOnce) {
  const auto& [spec, name] = GetParam();
  const Machine m = parse_machine(spec);
  const int n = m.nodes();
  int d = 0;
  while ((1 << d) < n) ++d;
  int degree = 1;
  if (name.find('(') != std::string::npos) degree = std::stoi(name.substr(name.find('(') + 1));
  const Algorithm& a = find(name);
  const std::size_t L = 40;
  if (degree > std::max(1, n / 2)) {
    EXPECT_THROW(run(m, [&](Proc& p) { a.program(p, Args{L, 0, true}); }), RunError);
    return;
  }
  const RunResult r = run(m, [&](Proc& p) { a.program(p, Args{L, 0, true}); });
  // Degree 1 adds 0-byte tokens: one for every node outside round 0 of each iteration, and at most
  // one for every node of round 0 after an iteration of several rounds.
  const std::uint64_t data = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(d * degree);
  if (degree == 1) {
    const Embedding e = embedding_for(*m.topology);
    std::uint64_t within = 0, between = 0;
    for (int i = 0; i < d; ++i) {
      const auto rounds = exchange_rounds(*m.topology, e, i);
      within += static_cast<std::uint64_t>(n) - 2 * rounds[0].size();
      if (i > 0 && exchange_rounds(*m.topology, e, i - 1).size() > 1) between += 2 * rounds[0].size();
    }
    EXPECT_GE(r.stats.messages, data + within);
    EXPECT_LE(r.stats.messages, data + within + between);
  } else {
    EXPECT_EQ(r.stats.messages, data);
  }
  EXPECT_EQ(r.stats.payload_bytes, static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(d) * (n / 2) * L);
}

INSTANTIATE_TEST_SUITE_P(Paper002, CcCubeDelivery, testing::ValuesIn(scenarios()), [](const auto& info) {
  std::string s = info.param.machine + "_" + info.param.algorithm;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
});

// Section 3's conflict-free routing: every iteration of cc-cube under its embedding, run alone (the
// algorithm's own step code, with its rounds and tokens), never makes a header wait for a channel,
// one-port and all-port, short and multi-packet messages.
TEST(CcCube, EveryIterationIsConflictFree) {
  for (const char* spec : kGrids)
    for (const char* ports : {"", ",ports=all"}) {
      const Machine m = parse_machine(std::string(spec) + ports);
      const int n = m.nodes();
      for (std::size_t L : {std::size_t{8}, std::size_t{1000}}) {
        const Embedding e = embedding_for(*m.topology);
        for (int i = 0; i < e.d; ++i) {
          const RunResult r = run(m, [&](Proc& p) {
            std::vector<std::byte> M(static_cast<std::size_t>(n) * L);
            cc_cube_step(p, p.world(), cc_cube_embedding(p, p.world()), 1, i, M, L, true);
          });
          EXPECT_EQ(r.stats.messages, static_cast<std::uint64_t>(2 * n) -
                                          2 * exchange_rounds(*m.topology, e, i)[0].size());
          EXPECT_EQ(r.stats.blocked_headers, 0u) << spec << ports << " L=" << L << " iteration " << i;
          EXPECT_EQ(r.stats.blocked_time, 0) << spec << ports << " L=" << L << " iteration " << i;
        }
      }
    }
}

// With the tokens between iterations, consecutive iterations do not overlap on a link either: the
// whole algorithm runs with zero blocked time.
TEST(CcCube, WholeRunIsConflictFree) {
  for (const char* spec : kGrids)
    for (const char* ports : {"", ",ports=all"}) {
      const Machine m = parse_machine(std::string(spec) + ports);
      const RunResult r = run(m, [&](Proc& p) { find("alltoall/cc-cube").program(p, Args{1000, 0, true}); });
      EXPECT_EQ(r.stats.blocked_headers, 0u) << spec << ports;
      EXPECT_EQ(r.stats.blocked_time, 0) << spec << ports;
    }
}

TEST(CcCube, RefusesNonPowerOfTwoAndBadDegrees) {
  const Machine m = parse_machine("mesh:3x2");
  try {
    run(m, [&](Proc& p) { find("alltoall/cc-cube").program(p, Args{8, 0, true}); });
    FAIL();
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("power-of-two"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find("alltoall/pipelined-cc-cube(0)"), UsageError);
  EXPECT_THROW(find("alltoall/pipelined-cc-cube(x)"), UsageError);
  EXPECT_EQ(find("alltoall/pipelined-cc-cube(2)").name, "alltoall/pipelined-cc-cube(2)");
}

}  // namespace

#include "algorithms/cost002.hpp"

namespace {

// On these grids every pair of a round starts together and the tokens form the critical path, so
// the model (rounds, tokens within and between iterations) is exact; with one round everywhere it
// is sum_i (t_s + delta_i t_p + 2^(d-1) L t_e). By hand, generic defaults (docs/model.md
// 2.5: C = 10 us, s = r = 10 ns/B, t_hop = 100 ns, b = 40 ns/B, H = 32), mesh:2x2, L = 100: each
// of the 2 iterations sends 200 B one hop: 20 + 0.1 + 1.28 (t_s) + 0.1 (t_p) + 200 * 0.06 = 33.48 us.
TEST(CcCubeCost, ExactOnSmallGrids) {
  const Machine m22 = parse_machine("mesh:2x2");
  EXPECT_EQ(algorithms::cc_cube_cost(m22, 100, 1), microseconds(66) + nanoseconds(960));
  for (const char* spec : {"mesh:2x2", "mesh:4x4", "torus:4x4", "mesh:2x2x2,ports=all"})
    for (std::size_t L : {std::size_t{100}, std::size_t{3000}}) {
      const Machine m = parse_machine(spec);
      const RunResult r = run(m, [&](Proc& p) { find("alltoall/cc-cube").program(p, Args{L, 0, true}); });
      EXPECT_EQ(r.makespan, algorithms::cc_cube_cost(m, L, 1)) << spec << " L=" << L;
    }
}

}  // namespace

namespace {

// Host timing does not matter: the same trace_hash under --perturb, tokens and pipelining included.
TEST(CcCube, SameTraceHashUnderPerturbation) {
  for (const char* alg : {"alltoall/cc-cube", "alltoall/pipelined-cc-cube(4)"}) {
    const Machine m = parse_machine("mesh:8,ports=all");
    const Algorithm& a = find(alg);
    RunOptions quiet, noisy;
    noisy.perturb = 7;
    const RunResult r1 = run(m, [&](Proc& p) { a.program(p, Args{100, 0, true}); }, quiet);
    const RunResult r2 = run(m, [&](Proc& p) { a.program(p, Args{100, 0, true}); }, noisy);
    EXPECT_EQ(r1.trace_hash, r2.trace_hash) << alg;
    EXPECT_EQ(r1.makespan, r2.makespan) << alg;
  }
}

}  // namespace

namespace {

// The other models where they are exact. By hand (generic defaults, 100 B): 1-lev-dir on mesh:4 is
// CPU-bound, 3 x (11 + 11) = 66 us, and on torus:4x4 15 x 22 = 330 us; on mesh:2 every algorithm is
// one message, 27.48 us (docs/model.md 2.5).
TEST(CcCubeCost, OtherModelsWhereExact) {
  const struct {
    const char* machine;
    const char* algorithm;
    Time expected;
  } cases[] = {
      {"mesh:4", "alltoall/1-lev-dir", microseconds(66)},
      {"torus:4x4,ports=all", "alltoall/1-lev-dir", microseconds(330)},
      {"mesh:2", "alltoall/1-lev-dir", nanoseconds(27480)},
      {"mesh:2", "alltoall/1-lev-xor", nanoseconds(27480)},
      {"mesh:2", "alltoall/1-lev-lin", nanoseconds(27480)},
      {"mesh:2", "alltoall/cc-cube", nanoseconds(27480)},
  };
  for (const auto& c : cases) {
    const Machine m = parse_machine(c.machine);
    EXPECT_EQ(algorithms::alltoall_cost(c.algorithm, m, 100), c.expected) << c.machine << " " << c.algorithm;
    const RunResult r = run(m, [&](Proc& p) { find(c.algorithm).program(p, Args{100, 0, true}); });
    EXPECT_EQ(r.makespan, c.expected) << c.machine << " " << c.algorithm;
  }
  // pipelined-cc-cube(2) on torus:4x4, all-port: the step model equals the emulation.
  const Machine t = parse_machine("torus:4x4,ports=all");
  const RunResult r = run(t, [&](Proc& p) { find("alltoall/pipelined-cc-cube(2)").program(p, Args{100, 0, true}); });
  EXPECT_EQ(r.makespan, algorithms::alltoall_cost("alltoall/pipelined-cc-cube(2)", t, 100));
  EXPECT_THROW(algorithms::alltoall_cost("alltoall/2-lev-sq", t, 100), UsageError);
}

// The CC-cube's block moves are host copies of payload bytes: under phantom payloads no byte is
// read for its value, so they move nothing (the buffers are never touched), and with real
// payloads they move exactly the blocks named.
TEST(CcCube, BlockMovesCopyOnlyRealPayloads) {
  for (const bool phantom : {false, true}) {
    std::vector<std::byte> src{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}}, dst(4, std::byte{9});
    std::vector<std::byte> buf{std::byte{10}, std::byte{11}, std::byte{20}, std::byte{21}, std::byte{30}, std::byte{31}};
    RunOptions o;
    o.phantom_payloads = phantom;
    run(parse_machine("mesh:1x1"), [&](Proc& p) {
      move_block(p, src, 1, dst, 0, 2);       // block 1 of src (3, 4) into block 0 of dst
      permute_blocks(p, buf, {2, 0, 1}, 2);  // block t takes the block at from[t]
    }, o);
    using B = std::vector<std::byte>;
    if (phantom) {
      EXPECT_EQ(dst, B(4, std::byte{9}));
      EXPECT_EQ(buf, (B{std::byte{10}, std::byte{11}, std::byte{20}, std::byte{21}, std::byte{30}, std::byte{31}}));
    } else {
      EXPECT_EQ(dst, (B{std::byte{3}, std::byte{4}, std::byte{9}, std::byte{9}}));
      EXPECT_EQ(buf, (B{std::byte{30}, std::byte{31}, std::byte{10}, std::byte{11}, std::byte{20}, std::byte{21}}));
    }
  }
}

}  // namespace
