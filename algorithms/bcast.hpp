// The broadcasts and barriers of the MPI libraries (MPICH, Open MPI), on any group of any size
// (docs/algorithms.md, "MPI libraries"). alpha is a message's start-up, beta its time per byte,
// n the message's bytes, p the group's size.
#pragma once
#include <cstddef>
#include <span>

#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

// bcast_binomial (generic.hpp) is the binomial tree: ceil(log p) (alpha + n beta) (Thakur,
// Rabenseifner, Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA
// 2005, sec. 4.1).

/// Scatter + all-gather (van de Geijn; Barnett et al., "Interprocessor collective communication
/// library (InterCom)", SHPCC 1994; Thakur et al. 2005, sec. 4.1, MPICH's long-message
/// broadcast): a binomial scatter of p pieces, then a ring all-gather of them:
/// (ceil(log p) + p - 1) alpha + 2 (p-1)/p n beta.
BcastCollective bcast_scatter_allgather;

/// Scatter + recursive-doubling all-gather (Thakur et al. 2005, sec. 4.1, MPICH's medium-message
/// broadcast on a power of two; Open MPI's scatter_allgather): the binomial scatter, then log p
/// exchanges of doubling windows of pieces: 2 log p alpha + 2 (p-1)/p n beta. When p is not a
/// power of two the all-gather is the ring's (MPICH runs this algorithm on powers of two only).
BcastCollective bcast_scatter_rd_allgather;

/// A pipelined chain (Open MPI's chain/pipeline broadcast, coll_tuned_bcast.c): the message in
/// pieces of `segment` bytes flows down the chain root, root+1, ..., each rank passing a piece on as
/// soon as it has it: (p - 2 + ceil(n / segment)) (alpha + segment beta).
void bcast_chain(Proc& p, const Group& g, int root, std::span<std::byte> buf, std::size_t segment);

/// Dissemination barrier (Hensgen, Finkel and Manber, "Two algorithms for barrier
/// synchronization", IJPP 1988; MPICH's barrier): in round k rank i signals rank i + 2^k and
/// waits for rank i - 2^k: ceil(log p) alpha.
BarrierCollective barrier_dissemination;

/// Tree barrier: a binomial fan-in of empty messages to rank 0, then a binomial fan-out
/// (Open MPI's tree barrier): 2 ceil(log p) alpha.
BarrierCollective barrier_tree;

}  // namespace touchstone::algorithms
