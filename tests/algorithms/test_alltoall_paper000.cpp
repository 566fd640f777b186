// Paper 000, section 5: the eight all-to-all algorithms deliver every byte (the harness throws on
// wrong data) or refuse a machine with an error naming their constraint; the linear, exclusive-or
// and balanced schedules partition all-to-all into permutations; their max_load and sum_load on
// square meshes are the paper's figures (section 5.1), with the exact values pinned where the
// paper gives a leading term or a bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "algorithms/alltoall.hpp"
#include "algorithms/harness.hpp"
#include "algorithms/permutations.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using algorithms::Schedule;

namespace {

const char* const kAll[] = {"alltoall/1-lev-dir", "alltoall/1-lev-lin",    "alltoall/1-lev-xor",     "alltoall/1-lev-bal",
                            "alltoall/2-lev-sq",  "alltoall/2-lev-c,r",    "alltoall/2-lev-c,r-int", "alltoall/logp-lev-bfly"};

struct Case {
  std::string algorithm;
  int rows, cols;
  std::size_t size;
  friend void PrintTo(const Case& c, std::ostream* os) {
    *os << c.algorithm << " on mesh:" << c.rows << "x" << c.cols << ", " << c.size << " B";
  }
};

bool perfect_square(int n) {
  int s = 0;
  while ((s + 1) * (s + 1) <= n) ++s;
  return s * s == n;
}
int isqrt(int n) { return static_cast<int>(std::lround(std::sqrt(n))); }
int log2i(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

// The constraint an algorithm states when it refuses an R x C mesh; empty when it runs there.
std::string refusal(const std::string& alg, int rows, int cols) {
  const int p = rows * cols;
  if (alg == "alltoall/2-lev-sq" && !perfect_square(p)) return "2-lev-sq needs p to be a perfect square";
  if (alg == "alltoall/logp-lev-bfly" && (p & (p - 1))) return "logp-lev-bfly needs a power-of-two number of processors";
  return {};
}

// Data messages each algorithm sends in all, from its description in sections 5.1-5.3.
std::uint64_t data_messages(const std::string& alg, int rows, int cols) {
  const std::uint64_t p = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols), R = static_cast<std::uint64_t>(rows),
                      C = static_cast<std::uint64_t>(cols);
  if (alg == "alltoall/2-lev-sq") {  // two all-to-alls within sqrt(p)-processor sub-meshes, one transpose
    const std::uint64_t s = static_cast<std::uint64_t>(isqrt(static_cast<int>(p)));
    return 2 * p * (s - 1) + (p - s);
  }
  if (alg == "alltoall/2-lev-c,r") return p * (R - 1) + p * (C - 1);
  if (alg == "alltoall/2-lev-c,r-int") return p * (R - 1) + p * R * (C - 1);  // rows get L-byte pieces
  if (alg == "alltoall/logp-lev-bfly") return p * static_cast<std::uint64_t>(log2i(static_cast<int>(p)));
  return p * (p - 1);  // the 1-level algorithms
}

// Barriers between supersteps (section 2): 2-lev-sq has three supersteps, 2-lev-c,r two,
// logp-lev-bfly log p; 2-lev-c,r-int interleaves its steps and the 1-level algorithms are one.
std::uint64_t superstep_barriers(const std::string& alg, int p) {
  if (alg == "alltoall/2-lev-sq") return 2;
  if (alg == "alltoall/2-lev-c,r") return 1;
  if (alg == "alltoall/logp-lev-bfly") return static_cast<std::uint64_t>(std::max(0, log2i(p) - 1));
  return 0;
}

// Messages each algorithm sends in all, from its description in sections 5.1-5.3, plus the
// software barriers of the mesh preset: a dissemination barrier sends p * ceil(log2 p) messages.
std::uint64_t expected_messages(const std::string& alg, int rows, int cols) {
  const std::uint64_t p = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
  return data_messages(alg, rows, cols) +
         superstep_barriers(alg, rows * cols) * p * static_cast<std::uint64_t>(log2i(rows * cols));
}

class AlltoallPaper000 : public testing::TestWithParam<Case> {};

TEST_P(AlltoallPaper000, DeliversEveryByteOrNamesItsConstraint) {
  const Case c = GetParam();
  const Machine m = parse_machine(fmt::format("mesh:{}x{}", c.rows, c.cols));
  const auto& alg = algorithms::find(c.algorithm);
  const algorithms::Args args{c.size, 0, true};
  const std::string constraint = refusal(c.algorithm, c.rows, c.cols);
  if (!constraint.empty()) {
    try {
      run(m, [&](Proc& p) { alg.program(p, args); });
      FAIL() << "expected a refusal: " << constraint;
    } catch (const RunError& e) {
      EXPECT_NE(std::string(e.what()).find(constraint), std::string::npos) << e.what();
    }
    return;
  }
  RunResult r;
  ASSERT_NO_THROW(r = run(m, [&](Proc& p) { alg.program(p, args); }));
  EXPECT_EQ(r.stats.messages, expected_messages(c.algorithm, c.rows, c.cols));
  EXPECT_EQ(r.stats.payload_bytes > 0, c.rows * c.cols > 1);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::pair<int, int> shapes[] = {{1, 1}, {1, 5}, {2, 2}, {3, 5}, {4, 4}, {4, 8}, {7, 3}, {8, 8}};
  for (const char* alg : kAll) {
    for (auto [r, c] : shapes)
      for (std::size_t size : {std::size_t{1}, std::size_t{1500}})  // one packet; two packets
        out.push_back({alg, r, c, size});
    out.push_back({alg, 16, 16, 16});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Meshes, AlltoallPaper000, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string s = fmt::format("{}_{}x{}_{}", info.param.algorithm, info.param.rows,
                                                       info.param.cols, info.param.size);
                           for (auto& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(AlltoallPaper000Catalog, TheEightAlgorithmsInThePapersOrder) {
  const auto algs = algorithms::select("alltoall/all");
  ASSERT_GE(algs.size(), std::size(kAll));  // later papers' entries come after these
  for (std::size_t i = 0; i < std::size(kAll); ++i) EXPECT_EQ(algs[i]->name, kAll[i]);
}

// The 1-level algorithms run on any group; the mesh algorithms refuse one that is not the whole
// machine, naming the constraint.
TEST(AlltoallPaper000Groups, OneLevelAlgorithmsRunOnAColumnAndMeshAlgorithmsRefuseIt) {
  const Machine m = parse_machine("mesh:4x3");
  using Fn = void (*)(Proc&, const Group&, std::span<const std::byte>, std::span<std::byte>, std::size_t);
  const std::pair<const char*, Fn> ok[] = {{"1-lev-dir", algorithms::alltoall_1lev_dir},
                                           {"1-lev-lin", algorithms::alltoall_1lev_lin},
                                           {"1-lev-xor", algorithms::alltoall_1lev_xor},
                                           {"1-lev-bal", algorithms::alltoall_1lev_bal},
                                           {"logp-lev-bfly", algorithms::alltoall_logp_lev_bfly}};
  for (auto [name, fn] : ok) {
    EXPECT_NO_THROW(run(m, [&](Proc& p) {
      const Group col = p.group({p.rank() % 3, p.rank() % 3 + 3, p.rank() % 3 + 6, p.rank() % 3 + 9});
      const int n = col.size(), me = col.local_rank(p.rank());
      const std::size_t L = 100;
      std::vector<std::byte> send(static_cast<std::size_t>(n) * L), recv(send.size());
      for (int d = 0; d < n; ++d) algorithms::fill_pattern(me, d, std::span(send).subspan(static_cast<std::size_t>(d) * L, L));
      fn(p, col, send, recv, L);
      for (int s = 0; s < n; ++s) algorithms::check_pattern(name, s, me, std::span(recv).subspan(static_cast<std::size_t>(s) * L, L));
    })) << name;
  }
  const std::pair<const char*, Fn> refuse[] = {{"2-lev-sq", algorithms::alltoall_2lev_sq},
                                               {"2-lev-c,r", algorithms::alltoall_2lev_cr},
                                               {"2-lev-c,r-int", algorithms::alltoall_2lev_cr_int}};
  for (auto [name, fn] : refuse) {
    try {
      run(m, [&](Proc& p) {
        const Group col = p.group({p.rank() % 3, p.rank() % 3 + 3, p.rank() % 3 + 6, p.rank() % 3 + 9});
        std::vector<std::byte> send(4), recv(4);
        fn(p, col, send, recv, 1);
      });
      ADD_FAILURE() << name << " ran on a column group";
    } catch (const RunError& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("{} needs a 1-D or 2-D mesh or torus and the whole machine", name)),
                std::string::npos)
          << e.what();
    }
  }
}

// ---------------------------------------------------------------- schedules (section 5.1)

TEST(PermutationSchedules, LinearAndXorPartitionAllToAllForEveryP) {
  for (int p = 1; p <= 33; ++p) {
    const Schedule lin = algorithms::linear_schedule(p), x = algorithms::xor_schedule(p);
    EXPECT_EQ(algorithms::check_partition(lin), "") << "linear, p = " << p;
    EXPECT_EQ(algorithms::check_partition(x), "") << "xor, p = " << p;
    EXPECT_EQ(lin.size(), static_cast<std::size_t>(std::max(0, p - 1)));
    for (std::size_t i = 0; i < lin.size(); ++i)
      EXPECT_EQ(lin.to[i][0], static_cast<int>(i + 1) % p);  // P_j -> P_((i+j) mod p), here j = 0
    for (const auto& perm : x.to)  // exclusive-or permutations are exchanges
      for (int j = 0; j < p; ++j)
        if (perm[static_cast<std::size_t>(j)] >= 0) {
          EXPECT_EQ(perm[static_cast<std::size_t>(perm[static_cast<std::size_t>(j)])], j);
        }
  }
}

// Every ordered pair (i, j) exactly once, i == j included (the stays that make the 1-D schedules
// factors of the cross product), in partial permutations; k permutations, k + 1 when k = 4i + 1.
TEST(PermutationSchedules, BalancedLinearArrayIsAPartitionForKUpTo33) {
  for (int k = 1; k <= 33; ++k) {
    const Schedule s = algorithms::balanced_schedule(k);
    EXPECT_EQ(algorithms::check_partition(s, true), "") << "k = " << k;
    EXPECT_EQ(s.size(), static_cast<std::size_t>(k % 4 == 1 && k > 1 ? k + 1 : k)) << "k = " << k;
  }
}

TEST(PermutationSchedules, BalancedCrossProductIsAPartitionOnMeshes) {
  const std::vector<std::vector<int>> shapes{{1, 1}, {1, 5}, {2, 2}, {3, 5},  {4, 4}, {4, 8},    {7, 3},
                                             {8, 8}, {5, 9}, {6, 6}, {7, 7}, {2, 13}, {16, 16}, {2, 3, 4}};
  for (const auto& d : shapes) {
    const Schedule s = algorithms::balanced_schedule(d);
    EXPECT_EQ(algorithms::check_partition(s), "") << fmt::format("{}", fmt::join(d, "x"));
  }
  // p permutations when no side is 4i + 1 ("Pi_i x Pi'_j gives the p balanced permutations"); the
  // identity, the product of two stays-only permutations, is dropped for 7 x 7.
  EXPECT_EQ(algorithms::balanced_schedule({16, 16}).size(), 256u);
  EXPECT_EQ(algorithms::balanced_schedule({6, 6}).size(), 36u);
  EXPECT_EQ(algorithms::balanced_schedule({7, 7}).size(), 48u);
  EXPECT_EQ(algorithms::balanced_schedule({5, 9}).size(), 60u);  // (5 + 1) x (9 + 1)
}

algorithms::Loads loads_on(const std::string& machine, const Schedule& s) {
  return algorithms::schedule_loads(s, *parse_machine(machine).topology);
}

// Section 5.1 on a k-processor linear array: load k/4 for k = 4i; for k = 4i + 2 half the
// permutations ceil(k/4), half floor(k/4); for k = 4i + 3 every permutation that moves data
// ceil(k/4). For k = 4i + 1 the paper says half at ceil(k/4) and half at floor(k/4); here all
// k + 1 permutations have load floor(k/4) (the 3-cycles through the middle processor cross each
// link at most once per direction; pinned). Sum over a linear array: k^2/4 for k = 4i.
TEST(PermutationLoads, BalancedLinearArrayLoadsFollowTheCasesOfSection51) {
  for (int k = 2; k <= 33; ++k) {
    const auto l = loads_on(fmt::format("mesh:1x{}", k), algorithms::balanced_schedule(k));
    const int lo = k / 4, hi = (k + 3) / 4;
    int at_hi = 0, at_lo = 0;
    for (int x : l.per_permutation) at_hi += x == hi, at_lo += x == lo && x != hi;
    EXPECT_EQ(l.max_load, k % 4 == 1 ? lo : hi) << "k = " << k;
    switch (k % 4) {
      case 0:
        EXPECT_EQ(at_hi, k) << "k = " << k;
        EXPECT_EQ(l.sum_load, k * k / 4) << "k = " << k;
        break;
      case 2:
        EXPECT_EQ(at_hi, k / 2) << "k = " << k;
        EXPECT_EQ(at_lo, k / 2) << "k = " << k;
        break;
      case 3:
        EXPECT_EQ(at_hi, k - 1) << "k = " << k;  // the k-th permutation is the stays only
        EXPECT_EQ(l.per_permutation.back(), 0) << "k = " << k;
        break;
      case 1:
        EXPECT_EQ(at_lo, k + 1) << "k = " << k;
        break;
    }
  }
}

// Section 5.1, square meshes with sqrt(p) a multiple of 4: linear and exclusive-or permutations
// have max_load = sqrt(p)/2, balanced ones sqrt(p)/4, the lower bound. sum_load: the paper's
// 3/7 p^(3/2) for xor is the leading term, the exact value is 3/7 (p^(3/2) - 1); balanced meets the
// bound p^(3/2)/4 (k^3/4 for a k x k mesh); linear (no figure in the paper) is pinned.
TEST(PermutationLoads, SquareMeshesHaveThePapersMaxLoadAndSumLoad) {
  const std::pair<int, long long> linear_sum[] = {{4, 24}, {8, 184}, {16, 1424}};
  for (auto [side, lin_sum] : linear_sum) {
    const int p = side * side;
    const long long p32 = static_cast<long long>(side) * side * side;
    const std::string m = fmt::format("mesh:{}x{}", side, side);
    const auto lin = loads_on(m, algorithms::linear_schedule(p));
    const auto x = loads_on(m, algorithms::xor_schedule(p));
    const auto bal = loads_on(m, algorithms::balanced_schedule({side, side}));
    EXPECT_EQ(lin.max_load, side / 2) << m;
    EXPECT_EQ(x.max_load, side / 2) << m;
    EXPECT_EQ(bal.max_load, side / 4) << m;
    EXPECT_EQ(x.sum_load * 7, 3 * (p32 - 1)) << m;
    EXPECT_EQ(bal.sum_load * 4, p32) << m;
    EXPECT_EQ(lin.sum_load, lin_sum) << m;
  }
}

// Section 5.1 gives max_load = max{ceil(r/4), floor(c/4)} for an r x c mesh. Under XY routing the
// row links carry the row factor and the column links the column factor, so what holds is the
// larger of the two linear arrays' max_load: ceil(k/4), or floor(k/4) when k = 4i + 1 (9 x 5: 2
// where the paper's formula gives 3).
TEST(PermutationLoads, BalancedMaxLoadOnRectangularMeshesIsTheLargerOfTheLinearArrays) {
  auto linear = [](int k) { return k % 4 == 1 ? k / 4 : (k + 3) / 4; };
  const std::pair<int, int> shapes[] = {{4, 8}, {8, 4}, {5, 9}, {9, 5}, {6, 10}, {3, 12}, {12, 3}, {7, 7}, {13, 13}, {9, 9}};
  for (auto [r, c] : shapes) {
    const auto l = loads_on(fmt::format("mesh:{}x{}", r, c), algorithms::balanced_schedule({r, c}));
    EXPECT_EQ(l.max_load, std::max(linear(r), linear(c))) << r << "x" << c;
  }
}

}  // namespace
