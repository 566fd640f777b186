// The MPI libraries' collectives (bcast.hpp, reduce.hpp, allgather.hpp, alltoall.hpp): every
// algorithm's results on rank counts that are not powers of two, through the catalog's harness
// and on sub-groups; the operators that need commuting; exact times computed by hand; determinism.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <set>

#include "algorithms/bcast.hpp"
#include "algorithms/library_harness.hpp"
#include "algorithms/reduce.hpp"
#include "algorithms/registry.hpp"
#include "support/model.hpp"
#include "touchstone/touchstone.hpp"

using namespace touchstone;
using namespace touchstone::algorithms;

namespace {

// The families whose catalog entries these tests cover: the MPI libraries' algorithms.
bool from_libraries(const Algorithm& a) {
  for (const char* f :
       {"bcast/binomial", "bcast/scatter-allgather", "bcast/chain", "reduce/", "allreduce/", "reduce_scatter/", "scan/",
        "barrier/", "allgather/recursive-doubling", "allgather/bruck", "allgather/ring", "allgather/neighbor-exchange",
        "alltoall/bruck", "alltoall/pairwise", "alltoall/linear"})
    if (a.name.rfind(f, 0) == 0) return true;
  return false;
}

std::vector<const Algorithm*> library_algorithms() {
  std::vector<const Algorithm*> out;
  for (const auto& a : catalog())
    if (from_libraries(a)) out.push_back(&a);
  out.push_back(&find("bcast/chain(24)"));  // segments much shorter than the message
  return out;
}

TEST(LibraryCollectives, TheCatalogListsThemAll) {
  for (const char* name : {"bcast/binomial",
                           "bcast/scatter-allgather",
                           "bcast/chain",
                           "reduce/binomial",
                           "reduce/rabenseifner",
                           "allreduce/recursive-doubling",
                           "allreduce/rabenseifner",
                           "allreduce/ring",
                           "allreduce/reduce-bcast",
                           "allgather/recursive-doubling",
                           "allgather/bruck",
                           "allgather/ring",
                           "allgather/neighbor-exchange",
                           "alltoall/bruck",
                           "alltoall/pairwise",
                           "alltoall/linear",
                           "reduce_scatter/recursive-halving",
                           "reduce_scatter/pairwise",
                           "reduce_scatter/ring",
                           "barrier/dissemination",
                           "barrier/tree",
                           "scan/recursive-doubling"})
    EXPECT_NO_THROW(find(name)) << name;
  EXPECT_EQ(select("allreduce/all").size(), 4u);
}

// Through the harness (every byte checked; reductions with the non-commutative operator unless the
// algorithm needs a commutative one) on 1, 2, 3, 5, 7, 12 and 13 processors, two roots, sizes
// below and above the group's size in elements.
TEST(LibraryCollectives, HarnessChecksEveryResultOnNonPowerOfTwoCounts) {
  for (const char* spec : {"mesh:1x1", "mesh:1x2", "mesh:1x3", "mesh:1x5", "mesh:1x7", "torus:3x4", "mesh:1x13"}) {
    const Machine m = parse_machine(spec);
    for (const Algorithm* a : library_algorithms())
      for (std::size_t size : {std::size_t{8}, std::size_t{40}, std::size_t{1000}})
        for (int root : {0, m.nodes() - 1}) {
          SCOPED_TRACE(fmt::format("{} on {}, {} bytes, root {}", a->name, spec, size, root));
          EXPECT_NO_THROW(run(m, [&](Proc& p) { a->program(p, Args{size, root, true}); }));
        }
  }
}

// The algorithms that reorder operands are caught by the harness's non-commutative operator: each
// gives a wrong result with it on 5 processors (so needs_commutative is not a blanket), and the
// others never do.
TEST(LibraryCollectives, OnlyTheReorderingAlgorithmsNeedACommutativeOperator) {
  const Machine m = parse_machine("mesh:1x5");
  const std::set<std::string> reorder{"reduce/rabenseifner",     "allreduce/rabenseifner",
                                      "allreduce/ring",          "reduce_scatter/recursive-halving",
                                      "reduce_scatter/pairwise", "reduce_scatter/ring"};
  for (const Algorithm* a : library_algorithms()) {
    const Collective& raw = a->raw;
    if (!raw.reduce && !raw.allreduce && !raw.reduce_scatter) continue;
    EXPECT_EQ(raw.needs_commutative, reorder.count(a->name) == 1) << a->name;
    // Rank r's result of the operator that does not commute, against rank order's.
    constexpr std::size_t kCount = 10;
    // Atomic: on several host cores the ranks' code after their last call may run at once.
    std::atomic<bool> all_right = true;
    run(m, [&](Proc& p) {
      const int n = p.size(), me = p.rank();
      const Reduction r = harness_reduction(false);
      std::vector<std::uint64_t> send(kCount * static_cast<std::size_t>(n)), recv(send.size());
      for (std::size_t j = 0; j < send.size(); ++j) send[j] = harness_operand(me, j);
      const auto sb = std::as_bytes(std::span(send));
      const auto rb = std::as_writable_bytes(std::span(recv));
      std::size_t first = 0, count = kCount;
      if (raw.reduce) raw.reduce(p, p.world(), 0, sb.first(kCount * 8), rb, r);
      if (raw.allreduce) raw.allreduce(p, p.world(), sb.first(kCount * 8), rb, r);
      if (raw.reduce_scatter) {
        const std::vector<std::size_t> counts(static_cast<std::size_t>(n), kCount * 8);
        raw.reduce_scatter(p, p.world(), sb, rb, counts, r);
        first = static_cast<std::size_t>(me) * kCount;
      }
      if (raw.reduce && me != 0) return;
      for (std::size_t j = 0; j < count; ++j) {
        std::uint64_t want = harness_operand(0, first + j);
        for (int k = 1; k < n; ++k) want = harness_combine(false, want, harness_operand(k, first + j));
        if (recv[j] != want) all_right = false;
      }
    });
    EXPECT_EQ(all_right.load(), !raw.needs_commutative) << a->name;
  }
}

// Two sub-groups at once on a 3 x 5 mesh: the odd ranks in decreasing order (7 members) and the
// even ranks in increasing order (8), each running every algorithm on its own; results checked in
// group rank order.
TEST(LibraryCollectives, EveryAlgorithmRunsOnSubGroups) {
  const Machine m = parse_machine("mesh:3x5");
  constexpr std::size_t kCount = 13, L = kCount * 8;
  for (const Algorithm* a : library_algorithms()) {
    SCOPED_TRACE(a->name);
    const Collective& raw = a->raw;
    EXPECT_NO_THROW(run(m, [&](Proc& p) {
      std::vector<int> odd, even;
      for (int r = p.size() - 1; r >= 0; --r)
        if (r % 2) odd.push_back(r);
      for (int r = 0; r < p.size(); r += 2) even.push_back(r);
      const Group g = p.rank() % 2 ? p.group(odd) : p.group(even);
      const int n = g.size(), me = g.local_rank(p.rank()), root = n - 2;
      auto fail = [&](const char* what) {
        throw std::runtime_error(fmt::format("{}: group rank {} of {}: {}", a->name, me, n, what));
      };
      const Reduction r = harness_reduction(raw.needs_commutative);
      auto expect_fold = [&](std::span<const std::byte> got, int last, std::size_t first, std::size_t count) {
        for (std::size_t j = 0; j < count; ++j) {
          std::uint64_t want = harness_operand(0, first + j), v;
          for (int k = 1; k <= last; ++k)
            want = harness_combine(raw.needs_commutative, want, harness_operand(k, first + j));
          std::memcpy(&v, got.data() + j * 8, 8);
          if (v != want) fail("wrong reduction");
        }
      };
      std::vector<std::uint64_t> send(kCount * static_cast<std::size_t>(n));
      for (std::size_t j = 0; j < send.size(); ++j) send[j] = harness_operand(me, j);
      const auto sb = std::as_bytes(std::span(send));
      std::vector<std::byte> recv(L * static_cast<std::size_t>(n));
      if (raw.bcast) {
        std::vector<std::byte> buf(L, std::byte{0});
        if (me == root) std::memcpy(buf.data(), sb.data(), L);
        raw.bcast(p, g, root, buf);
        std::vector<std::uint64_t> want(kCount);
        for (std::size_t j = 0; j < kCount; ++j) want[j] = harness_operand(root, j);
        if (std::memcmp(buf.data(), want.data(), L) != 0) fail("wrong broadcast");
      } else if (raw.allgather) {
        std::memcpy(recv.data() + static_cast<std::size_t>(me) * L, sb.data(), L);
        raw.allgather(p, g, recv, L);
        for (int k = 0; k < n; ++k)
          for (std::size_t j = 0; j < kCount; ++j) {
            std::uint64_t v;
            std::memcpy(&v, recv.data() + static_cast<std::size_t>(k) * L + j * 8, 8);
            if (v != harness_operand(k, j)) fail("wrong all-gather");
          }
      } else if (raw.alltoall) {
        raw.alltoall(p, g, sb.first(L * static_cast<std::size_t>(n)), recv, L);
        for (int k = 0; k < n; ++k)
          for (std::size_t j = 0; j < kCount; ++j) {
            std::uint64_t v;
            std::memcpy(&v, recv.data() + static_cast<std::size_t>(k) * L + j * 8, 8);
            if (v != harness_operand(k, static_cast<std::size_t>(me) * kCount + j)) fail("wrong all-to-all");
          }
      } else if (raw.reduce) {
        raw.reduce(p, g, root, sb.first(L), recv, r);
        if (me == root) expect_fold(recv, n - 1, 0, kCount);
      } else if (raw.allreduce) {
        raw.allreduce(p, g, sb.first(L), recv, r);
        expect_fold(recv, n - 1, 0, kCount);
      } else if (raw.reduce_scatter) {
        // Uneven blocks: rank k gets k + 1 elements (some of the vector is left out).
        std::vector<std::size_t> counts(static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k) counts[static_cast<std::size_t>(k)] = static_cast<std::size_t>(k + 1) * 8;
        raw.reduce_scatter(p, g, sb, recv, counts, r);
        expect_fold(recv, n - 1, static_cast<std::size_t>(me * (me + 1) / 2), static_cast<std::size_t>(me + 1));
      } else if (raw.scan) {
        raw.scan(p, g, sb.first(L), recv, r, false);
        expect_fold(recv, me, 0, kCount);
        std::vector<std::byte> ex(L, std::byte{0x5a});
        raw.scan(p, g, sb.first(L), ex, r, true);
        if (me > 0)
          expect_fold(ex, me - 1, 0, kCount);
        else if (ex[0] != std::byte{0x5a})
          fail("exclusive scan wrote rank 0's buffer");
      } else if (raw.barrier) {
        p.compute(microseconds(me + 1));
        raw.barrier(p, g);
        if (p.now() < microseconds(n)) fail("left the barrier early");
      }
    }));
  }
}

// A 2-processor binomial reduce on a 1 x 2 mesh with gamma set through the machine option: rank 1
// sends its vector to rank 0, which receives it and combines L bytes at 3 ns a byte.
TEST(LibraryCollectives, TwoRankReduceCostsTheMessagePlusGammaTimesTheBytes) {
  const Machine m = parse_machine("mesh:1x2,reduce_int_ns_per_byte=3");
  ASSERT_EQ(m.costs.reduce_int_per_byte, nanoseconds(3));
  constexpr std::size_t L = 1000;
  const ts_test::Model mod{m};
  const Time h = mod.handed(0, L);
  const Time root_done = mod.recv_done(0, mod.arrival_cf(h, 1, L), L) + static_cast<Time>(L) * nanoseconds(3);
  const Time sender_done = mod.send_return_cf(h, 1, L);
  std::vector<Time> done(2);
  const RunResult r = run(m, [&](Proc& p) {
    find("reduce/binomial").program(p, Args{L, 0, true});
    done[static_cast<std::size_t>(p.rank())] = p.now();
  });
  EXPECT_EQ(done[0], root_done);
  EXPECT_EQ(done[1], sender_done);
  EXPECT_EQ(r.makespan, std::max(root_done, sender_done));
  // The floating-point gamma is another parameter: an integer operator does not pay it.
  EXPECT_EQ(run(parse_machine("mesh:1x2,reduce_float_ns_per_byte=3"),
                [&](Proc& p) {
                  find("reduce/binomial").program(p, Args{L, 0, true});
                })
                .makespan,
            std::max(root_done, sender_done) - static_cast<Time>(L) * nanoseconds(3));
}

// Recursive doubling on 2 processors of a prime-cost 1 x 2 mesh: one exchange, each side's
// message handed over after its send's work and received after it arrives, then one combine of L
// bytes at gamma and the result's copy (free on this machine).
TEST(LibraryCollectives, TwoRankRecursiveDoublingAllreduceIsOneExchangeAndOneCombine) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  m.costs.reduce_int_per_byte = 11;
  m.costs.copy_per_byte = 0;
  m.costs.copy_per_piece = 0;
  constexpr std::size_t L = 800;
  const ts_test::Model mod{m};
  const Time done =
      mod.recv_done(mod.handed(0, L), mod.arrival_cf(mod.handed(0, L), 1, L), L) + static_cast<Time>(L) * 11;
  std::vector<Time> at(2);
  run(m, [&](Proc& p) {
    find("allreduce/recursive-doubling").program(p, Args{L, 0, true});
    at[static_cast<std::size_t>(p.rank())] = p.now();
  });
  EXPECT_EQ(at[0], done);
  EXPECT_EQ(at[1], done);
}

// A 3-processor chain broadcast of 2 segments on a prime-cost 1 x 3 mesh: rank 1 forwards each
// segment as soon as it has received it; rank 2 receives both from rank 1.
TEST(LibraryCollectives, ChainBroadcastPipelinesItsSegments) {
  const Machine m = ts_test::prime_machine("mesh:1x3");
  constexpr std::size_t S = 100;
  const ts_test::Model mod{m};
  // Rank 0 sends segment 0 at 0 and segment 1 as soon as its CPU is free (isend: the send's work).
  const Time h0 = mod.handed(0, S), h1 = mod.handed(h0, S);
  // The second segment queues behind the first at rank 0's injection channel.
  const Time a0 = mod.arrival_cf(h0, 1, S), a1 = std::max(mod.arrival_cf(h1, 1, S), a0 + mod.wire_total(S) * mod.b(1));
  const Time r0 = mod.recv_done(0, a0, S);   // rank 1 has segment 0
  const Time g0 = mod.handed(r0, S);         // and hands it to rank 2
  const Time r1 = mod.recv_done(g0, a1, S);  // then completes segment 1's receive
  const Time g1 = mod.handed(r1, S);
  const Time b0 = mod.arrival_cf(g0, 1, S), b1 = std::max(mod.arrival_cf(g1, 1, S), b0 + mod.wire_total(S) * mod.b(1));
  const Time rank2 = mod.recv_done(mod.recv_done(0, b0, S), b1, S);
  std::vector<Time> at(3);
  run(m, [&](Proc& p) {
    std::vector<std::byte> buf(2 * S);
    bcast_chain(p, p.world(), 0, buf, S);
    at[static_cast<std::size_t>(p.rank())] = p.now();
  });
  EXPECT_EQ(at[2], rank2);
}

// The same trace hash under fibers, perturbed host timing and threads.
TEST(LibraryCollectives, TraceHashIsDeterministic) {
  const Machine m = parse_machine("torus:3x4");
  for (const char* name : {"allreduce/rabenseifner", "reduce_scatter/recursive-halving", "bcast/chain(24)",
                           "alltoall/bruck", "scan/recursive-doubling", "allgather/neighbor-exchange"}) {
    const Algorithm& a = find(name);
    auto hash = [&](Execution e, std::uint64_t perturb) {
      RunOptions o;
      o.execution = e;
      o.perturb = perturb;
      return run(
                 m,
                 [&](Proc& p) {
                   a.program(p, Args{1000, 3, true});
                 },
                 o)
          .trace_hash;
    };
    const auto h = hash(Execution::fibers, 0);
    EXPECT_EQ(hash(Execution::fibers, 7), h) << name;
    EXPECT_EQ(hash(Execution::threads, 0), h) << name;
    EXPECT_EQ(hash(Execution::threads, 3), h) << name;
  }
}

// A reduction size that is not whole elements is refused with a clear error, not a wrong check.
TEST(LibraryCollectives, AReductionSizeOfPartElementsIsAUsageError) {
  const Machine m = parse_machine("mesh:1x3");
  EXPECT_THROW(run(m, [&](Proc& p) { find("allreduce/ring").program(p, Args{12, 0, true}); }), Error);
}

}  // namespace
