// The reduction collectives of the MPI libraries (MPICH, Open MPI): reduce, allreduce,
// reduce-scatter and scan, on any group of any size (docs/algorithms.md, "MPI libraries").
// Each combines with the Reduction's operator; the caller charges the operator's time per byte
// (gamma) by wrapping it in charged(). alpha is a message's start-up, beta its time per byte,
// gamma the operator's time per byte, n the vector's bytes, p the group's size.
#pragma once
#include <cstddef>
#include <span>

#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// The operator `op` charging p's node, for every byte it combines, the machine's gamma of the
/// operand class (NodeCosts::reduce_per_byte), as local computation.
Reducer charged(Proc& p, Reducer op, OperandClass c);

// --- reduce (reduce.cpp) ---

/// Binomial tree (MPICH's MPIR_Reduce_intra_binomial; Thakur, Rabenseifner, Gropp, "Optimization
/// of Collective Communication Operations in MPICH", IJHPCA 2005, sec. 4.3): ceil(log p) rounds,
/// ceil(log p) (alpha + n beta + n gamma). Non-commutative operators: rooted at rank 0, which
/// forwards the result to the root.
ReduceCollective reduce_binomial_tree;

/// Rabenseifner's reduce-scatter + gather (Thakur et al. 2005, sec. 4.3; Rabenseifner 2004): the
/// ranks fold onto the largest power of two p' <= p, reduce-scatter by recursive halving, then
/// gather the pieces by a binomial tree: 2 log p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma
/// (plus alpha + n (beta + gamma) for the fold when p is not a power of two, and alpha + n beta
/// when the root sat the fold out). Commutative operators only.
ReduceCollective reduce_rabenseifner;

// --- allreduce (allreduce.cpp) ---

/// Recursive doubling (Thakur et al. 2005, sec. 4.4): log p' rounds of full-vector exchanges,
/// log p' (alpha + n beta + n gamma), plus 2 alpha + 2 n beta + n gamma to fold and unfold when p
/// is not a power of two. Keeps rank order: correct for non-commutative operators.
AllreduceCollective allreduce_recursive_doubling;

/// Rabenseifner (Thakur et al. 2005, sec. 4.4): reduce-scatter by recursive halving, then
/// all-gather by recursive doubling: 2 log p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma
/// (plus the fold's 2 alpha + 2 n beta + n gamma). Commutative operators only.
AllreduceCollective allreduce_rabenseifner;

/// Ring (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
/// workstations", JPDC 2009; Open MPI's ring): a ring reduce-scatter of p pieces, then a ring
/// all-gather: 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma. Commutative operators only.
AllreduceCollective allreduce_ring;

/// Binomial reduce to rank 0, then binomial broadcast (MPICH's fallback for non-commutative
/// operators): 2 ceil(log p) alpha + 2 ceil(log p) n beta + ceil(log p) n gamma.
AllreduceCollective allreduce_reduce_then_bcast;

// --- reduce-scatter (reduce_scatter.cpp) ---

/// Recursive halving (Thakur et al. 2005, sec. 4.5): fold to p', then log p' halving rounds:
/// log p' alpha + (p'-1)/p' n beta + (p'-1)/p' n gamma (plus the fold). Commutative only.
ReduceScatterCollective reduce_scatter_recursive_halving;

/// Pairwise exchange (Thakur et al. 2005, sec. 4.5, MPICH's long-message algorithm): in step i
/// rank j sends its contribution to rank j+i's block and receives rank j-i's to its own:
/// (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma. Commutative only.
ReduceScatterCollective reduce_scatter_pairwise;

/// Ring (Open MPI's reduce_scatter ring; Patarasuk and Yuan 2009): p-1 steps passing partial
/// blocks around the ring: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma. Commutative only.
ReduceScatterCollective reduce_scatter_ring;

/// Binomial reduce of the whole vector to rank 0, then a direct scatter of the blocks (any
/// operator): ceil(log p)(alpha + n beta + n gamma) + (p-1) alpha + (p-1)/p n beta.
ReduceScatterCollective reduce_scatter_reduce_scatterv;

// --- scan (scan.cpp) ---

/// Recursive doubling (MPICH's MPIR_Scan_intra_recursive_doubling; Thakur et al. 2005): ceil(log
/// p) rounds, ceil(log p) (alpha + n beta + 2 n gamma). Correct for non-commutative operators.
ScanCollective scan_recursive_doubling;

/// A chain (p-1 steps, (p-1)(alpha + n beta + n gamma)); any operator.
ScanCollective scan_chain;

}  // namespace touchstone::algorithms
