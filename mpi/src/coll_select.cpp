// The decision rules of MPICH and Open MPI (coll_select.hpp), each mapped onto the catalog's
// algorithms. Where a library runs an algorithm the catalog does not have, the rule names the
// catalog's closest one and the comment says so.
#include "coll_select.hpp"

#include <vector>

#include <fmt/format.h>

namespace touchstone::mpi {

namespace {

bool is_pof2(int n) { return n > 0 && (n & (n - 1)) == 0; }
int pof2_below(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// --- MPICH ---
// The rules of MPICH's "auto" selection with its default CVARs (src/mpi/coll/cvars.txt), as in
// src/mpi/coll/mpir_coll_sched_auto.c and the ch3/ch4 blocking defaults before the JSON tuning
// files; maint/tuning/coll/mpir/generic.json keeps the same thresholds for bcast, allgather,
// alltoall and reduce_scatter.
constexpr std::size_t kBcastShortMsgSize = 12288;          // MPIR_CVAR_BCAST_SHORT_MSG_SIZE
constexpr int kBcastMinProcs = 8;                          // MPIR_CVAR_BCAST_MIN_PROCS
constexpr std::size_t kBcastLongMsgSize = 524288;          // MPIR_CVAR_BCAST_LONG_MSG_SIZE
constexpr std::size_t kAllgatherShortMsgSize = 81920;      // MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE
constexpr std::size_t kAllgatherLongMsgSize = 524288;      // MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE
constexpr std::size_t kAlltoallShortMsgSize = 256;         // MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE
constexpr std::size_t kAlltoallMediumMsgSize = 32768;      // MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE
constexpr std::size_t kReduceShortMsgSize = 2048;          // MPIR_CVAR_REDUCE_SHORT_MSG_SIZE
constexpr std::size_t kAllreduceShortMsgSize = 2048;       // MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
constexpr std::size_t kReduceScatterLongMsgSize = 524288;  // MPIR_CVAR_IREDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE

std::string mpich(const std::string& coll, const CallShape& c) {
  if (coll == "bcast") {
    // Binomial below 12288 bytes or 8 processes; above, scatter + all-gather, by recursive doubling
    // below 524288 bytes on a power of two, else by the ring.
    if (c.bytes < kBcastShortMsgSize || c.size < kBcastMinProcs) return "binomial";
    return c.bytes < kBcastLongMsgSize && is_pof2(c.size) ? "scatter-rd-allgather" : "scatter-allgather";
  }
  if (coll == "allgather") {
    // On the total gathered: recursive doubling below 524288 bytes on a power of two, Bruck below
    // 81920 bytes, else the ring.
    const std::size_t total = c.bytes * static_cast<std::size_t>(c.size);
    if (total < kAllgatherLongMsgSize && is_pof2(c.size)) return "recursive-doubling";
    return total < kAllgatherShortMsgSize ? "bruck" : "ring";
  }
  if (coll == "alltoall") {
    // In place: pairwise (sendrecv_replace). Bruck for blocks up to 256 bytes on 8 or more
    // processes; up to 32768 bytes MPICH's "scattered" isend/irecv, for which the catalog's
    // linear (all posted at once) stands in; pairwise above.
    if (c.in_place) return "pairwise";
    if (c.bytes <= kAlltoallShortMsgSize && c.size >= 8) return "bruck";
    return c.bytes <= kAlltoallMediumMsgSize ? "linear" : "pairwise";
  }
  if (coll == "reduce") {
    // Reduce-scatter + gather above 2048 bytes for predefined operators with at least p' elements.
    const bool split =
        c.bytes > kReduceShortMsgSize && c.builtin_op && c.count >= static_cast<std::size_t>(pof2_below(c.size));
    return split ? "rabenseifner" : "binomial";
  }
  if (coll == "allreduce") {
    // Recursive doubling up to 2048 bytes, for user operators, or with fewer than p' elements;
    // else Rabenseifner's reduce-scatter + all-gather.
    const bool doubling =
        c.bytes <= kAllreduceShortMsgSize || !c.builtin_op || c.count < static_cast<std::size_t>(pof2_below(c.size));
    return doubling ? "recursive-doubling" : "rabenseifner";
  }
  if (coll == "reduce_scatter") {
    // Commutative: recursive halving below 524288 bytes, else pairwise. Non-commutative: MPICH's
    // noncommutative and recursive-doubling algorithms, for which the catalog's reduce + scatterv
    // stands in.
    if (!c.commutative) return "reduce-scatterv";
    return c.bytes < kReduceScatterLongMsgSize ? "recursive-halving" : "pairwise";
  }
  if (coll == "barrier") return "dissemination";  // MPIR_Barrier_intra_k_dissemination, k = 2
  if (coll == "scan" || coll == "exscan") return "recursive-doubling";
  return "";
}

// --- Open MPI ---
// The fixed decision rules of Open MPI's tuned component, ompi/mca/coll/tuned/
// coll_tuned_decision_fixed.c (ompi_coll_tuned_<collective>_intra_dec_fixed), as tables: for
// communicators of `from_procs` processes or more (up to the next row), the algorithm number of
// the first step whose `from_bytes` the size reaches (the last such step). The numbers are Open
// MPI's (coll_tuned_<collective>_decision.c); ompi_algorithm maps them onto the catalog.
struct Step {
  std::size_t from_bytes;
  int alg;
};
struct Row {
  int from_procs;
  std::vector<Step> steps;
};
using Table = std::vector<Row>;

int lookup(const Table& t, int procs, std::size_t bytes) {
  const Row* row = &t.front();
  for (const Row& r : t)
    if (r.from_procs <= procs) row = &r;
  int alg = row->steps.front().alg;
  for (const Step& s : row->steps)
    if (s.from_bytes <= bytes) alg = s.alg;
  return alg;
}

// allreduce, on the vector's bytes: 1 basic_linear, 2 nonoverlapping, 3 recursive_doubling, 4 ring,
// 5 segmented_ring, 6 rabenseifner.
const Table kOmpiAllreduceCommutative = {
    {1, {{0, 4}, {8, 3}, {4096, 4}, {8192, 3}, {16384, 4}, {65536, 5}, {262144, 6}}},
    {4, {{0, 4}, {16, 3}, {8192, 6}}},
    {8, {{0, 3}, {8192, 6}}},
    {16, {{0, 5}, {64, 3}, {4096, 6}}},
    {32, {{0, 5}, {128, 6}}},
    {64, {{0, 3}, {262144, 6}}},
    {128, {{0, 2}, {131072, 3}, {262144, 6}}},
    {256, {{0, 2}, {4096, 6}}},
    {512, {{0, 2}, {2048, 3}, {16384, 6}}},
    {2048, {{0, 2}, {2048, 5}, {4096, 3}, {16384, 6}}},
    {4096, {{0, 2}, {2048, 5}, {16384, 3}, {32768, 6}}},
};
const Table kOmpiAllreduceNoncommutative = {
    {1, {{0, 3}, {131072, 1}}},
    {4, {{0, 3}}},
    {8, {{0, 3}, {1048576, 2}}},
    {16, {{0, 3}}},
    {128, {{0, 2}, {131072, 3}, {524288, 2}}},
    {256, {{0, 2}, {4096, 3}, {524288, 2}}},
    {512, {{0, 2}, {2048, 3}}},
};
// bcast, on the message's bytes: 1 basic_linear, 2 chain, 3 pipeline, 4 split_binary_tree,
// 5 binary_tree, 6 binomial, 7 knomial, 8 scatter_allgather, 9 scatter_allgather_ring.
const Table kOmpiBcast = {
    {1,
     {{0, 3}, {32, 5}, {256, 3}, {512, 7}, {1024, 1}, {32768, 5}, {131072, 2}, {262144, 1}, {524288, 6}, {1048576, 5}}},
    {4, {{0, 5}, {64, 6}, {128, 5}, {2048, 6}, {8192, 1}, {1048576, 2}}},
    {8, {{0, 7}, {8, 5}, {64, 7}, {4096, 5}, {16384, 6}, {32768, 1}}},
    {16, {{0, 7}, {4096, 6}, {1048576, 8}}},
    {32, {{0, 6}, {2048, 7}}},
    {64, {{0, 7}}},
    {128, {{0, 6}, {2, 5}, {16384, 1}, {32768, 5}, {65536, 7}}},
    {256, {{0, 7}, {16384, 4}, {32768, 7}}},
    {1024, {{0, 7}, {524288, 8}}},
    {2048, {{0, 7}, {262144, 8}}},
    {4096, {{0, 7}, {8192, 5}, {16384, 7}, {262144, 8}}},
};
// reduce, on the vector's bytes: 1 linear, 2 chain, 3 pipeline, 4 binary, 5 binomial,
// 6 in-order_binary, 7 rabenseifner, 8 knomial.
const Table kOmpiReduceCommutative = {
    {1, {{0, 7}, {8, 4}, {16, 3}, {32, 1}, {262144, 3}, {524288, 2}, {1048576, 3}}},
    {4, {{0, 4}, {4096, 2}, {65536, 5}, {262144, 1}, {524288, 5}, {1048576, 1}}},
    {8, {{0, 4}, {8192, 5}}},
    {16, {{0, 4}, {4096, 5}}},
    {32, {{0, 5}}},
    {256, {{0, 5}, {8192, 6}, {16384, 5}}},
    {512, {{0, 5}}},
    {2048, {{0, 5}, {512, 6}, {1024, 5}, {8192, 6}, {16384, 5}}},
    {4096, {{0, 5}, {16, 6}, {32, 5}, {1024, 6}, {2048, 5}, {8192, 6}, {16384, 5}}},
};
const Table kOmpiReduceNoncommutative = {
    {1, {{0, 6}, {8, 1}}},
    {4, {{0, 1}}},
    {8, {{0, 6}, {1024, 1}, {8192, 6}, {16384, 1}, {262144, 6}}},
    {16, {{0, 6}}},
    {128, {{0, 6}, {512, 1}, {1024, 6}}},
    {256, {{0, 6}}},
};
// allgather, on one rank's block: 1 linear, 2 bruck-k-fanout, 3 recursive_doubling, 4 ring,
// 5 neighbor, 6 two_proc.
const Table kOmpiAllgather = {
    {1, {{0, 3}}},
    {2, {{0, 6}}},
    {3, {{0, 3}}},
    {32, {{0, 3}, {1024, 5}, {65536, 4}}},
    {64, {{0, 3}, {512, 5}, {65536, 4}}},
    {128, {{0, 3}, {512, 5}, {131072, 4}, {524288, 5}, {1048576, 4}}},
    {256, {{0, 3}, {32, 2}, {128, 3}, {1024, 5}, {131072, 4}, {524288, 5}, {1048576, 4}}},
    {512, {{0, 3}, {64, 2}, {256, 3}, {2048, 5}}},
    {1024, {{0, 3}, {4, 2}, {8, 3}, {16, 2}, {32, 3}, {256, 2}, {512, 3}, {4096, 5}}},
    {2048, {{0, 2}, {32, 3}, {128, 2}, {512, 3}, {4096, 5}}},
    {4096, {{0, 3}, {2, 2}, {8, 3}, {16, 2}, {512, 3}, {4096, 5}}},
};
// alltoall, on one block: 1 linear, 2 pairwise, 3 modified_bruck, 4 linear_sync, 5 two_proc.
const Table kOmpiAlltoall = {
    {1, {{0, 4}, {8192, 1}, {16384, 4}, {65536, 1}, {524288, 2}, {1048576, 1}}},
    {2, {{0, 2}, {2, 5}, {4, 2}, {16, 5}, {64, 2}, {256, 5}, {4096, 2}, {32768, 4}, {262144, 5}, {1048576, 2}}},
    {3, {{0, 4}, {8192, 1}, {16384, 4}, {65536, 1}, {524288, 2}, {1048576, 1}}},
    {8, {{0, 4}, {262144, 1}}},
    {16, {{0, 4}, {4, 3}, {512, 4}, {8192, 1}, {32768, 4}, {262144, 1}, {524288, 4}}},
    {32, {{0, 3}, {512, 1}, {524288, 4}}},
    {64, {{0, 3}, {1024, 1}, {2048, 4}, {4096, 1}, {262144, 2}}},
    {128, {{0, 3}, {1024, 4}, {2048, 1}, {262144, 2}}},
    {256, {{0, 3}, {1024, 4}, {8192, 1}, {32768, 2}}},
    {512, {{0, 3}, {512, 4}, {8192, 1}, {16384, 4}, {131072, 1}, {262144, 2}}},
    {1024, {{0, 3}, {512, 4}, {1024, 1}, {2048, 4}, {16384, 1}, {262144, 4}}},
    {2048, {{0, 3}, {1024, 4}, {4096, 1}, {8192, 4}, {131072, 1}}},
    {4096, {{0, 3}, {2048, 4}, {8192, 1}, {16384, 4}, {32768, 1}, {65536, 4}}},
};
// reduce_scatter, on the whole vector: 1 non-overlapping, 2 recursive_halving, 3 ring, 4 butterfly.
const Table kOmpiReduceScatterCommutative = {
    {1, {{0, 3}, {65536, 4}, {131072, 3}}},
    {4, {{0, 1}, {8, 2}, {262144, 3}}},
    {8, {{0, 2}, {262144, 3}}},
    {32, {{0, 1}, {64, 2}, {2048, 4}, {524288, 3}}},
    {64, {{0, 1}, {256, 2}, {512, 4}, {2048, 2}, {4096, 4}}},
    {128, {{0, 1}, {256, 2}, {512, 4}}},
    {256, {{0, 1}, {256, 2}, {1024, 4}}},
    {512, {{0, 1}, {512, 2}, {2048, 4}, {8192, 2}, {16384, 4}}},
    {1024, {{0, 1}, {512, 2}, {4096, 4}, {16384, 2}, {32768, 4}}},
    {2048, {{0, 1}, {512, 2}, {4096, 4}}},
    {4096, {{0, 1}, {1024, 2}, {8192, 4}}},
};
// barrier, on the processes only: 1 linear, 2 double_ring, 3 recursive_doubling, 4 bruck,
// 5 two_proc, 6 tree.
const Table kOmpiBarrier = {
    {1, {{0, 3}}},   {4, {{0, 1}}},   {8, {{0, 3}}},    {64, {{0, 4}}},
    {256, {{0, 6}}}, {512, {{0, 4}}}, {1024, {{0, 6}}}, {4096, {{0, 4}}},
};

std::string ompi(const std::string& coll, const CallShape& c) {
  if (coll == "allreduce") {
    // basic_linear and nonoverlapping (a reduce, then a broadcast): reduce-bcast; segmented_ring: ring.
    const int a = lookup(c.commutative ? kOmpiAllreduceCommutative : kOmpiAllreduceNoncommutative, c.size, c.bytes);
    return a == 3 ? "recursive-doubling" : a == 4 || a == 5 ? "ring" : a == 6 ? "rabenseifner" : "reduce-bcast";
  }
  if (coll == "bcast") {
    // The fixed rules pass no segment size (0: unsegmented), so chain and pipeline are the catalog's
    // chain with the whole message as one segment; basic_linear, the binary trees and knomial (k = 2
    // here, a binomial tree) map to binomial; scatter_allgather (recursive doubling) to
    // scatter-rd-allgather, scatter_allgather_ring to scatter-allgather.
    const int a = lookup(kOmpiBcast, c.size, c.bytes);
    if (a == 2 || a == 3) return c.bytes ? fmt::format("chain({})", c.bytes) : "chain";
    return a == 8 ? "scatter-rd-allgather" : a == 9 ? "scatter-allgather" : "binomial";
  }
  if (coll == "reduce") {
    // linear, chain, pipeline, the binary trees and knomial have no counterpart in the catalog but
    // the binomial tree (in-order for non-commutative operators).
    const int a = lookup(c.commutative ? kOmpiReduceCommutative : kOmpiReduceNoncommutative, c.size, c.bytes);
    return a == 7 ? "rabenseifner" : "binomial";
  }
  if (coll == "allgather") {
    // Open MPI's recursive doubling runs Bruck when p is not a power of two; linear and two_proc
    // map to the ring (for two processes every all-gather is one exchange).
    const int a = lookup(kOmpiAllgather, c.size, c.bytes);
    if (a == 3) return is_pof2(c.size) ? "recursive-doubling" : "bruck";
    return a == 2 ? "bruck" : a == 5 ? "neighbor-exchange" : "ring";
  }
  if (coll == "alltoall") {
    // linear_sync (a bounded number of requests in flight) maps to linear; two_proc to pairwise.
    const int a = lookup(kOmpiAlltoall, c.size, c.bytes);
    return a == 3 ? "bruck" : a == 2 || a == 5 ? "pairwise" : "linear";
  }
  if (coll == "reduce_scatter") {
    // Non-commutative operators: non-overlapping (reduce + scatterv). butterfly maps to recursive halving.
    if (!c.commutative) return "reduce-scatterv";
    const int a = lookup(kOmpiReduceScatterCommutative, c.size, c.bytes);
    return a == 1 ? "reduce-scatterv" : a == 3 ? "ring" : "recursive-halving";
  }
  if (coll == "barrier") {
    // recursive_doubling, bruck and double_ring exchange signals in log p rounds as the
    // dissemination barrier does; linear and tree map to the tree.
    const int a = lookup(kOmpiBarrier, c.size, 0);
    return a == 1 || a == 6 ? "tree" : "dissemination";
  }
  // The tuned component has no scan: Open MPI's basic component runs a linear one.
  if (coll == "scan" || coll == "exscan") return "linear";
  return "";
}

}  // namespace

std::string select_algorithm(const std::string& selector, const std::string& collective, const CallShape& call) {
  if (selector == "mpich") return mpich(collective, call);
  if (selector == "ompi") return ompi(collective, call);
  return "";
}

}  // namespace touchstone::mpi
