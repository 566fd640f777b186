// Generic collectives for any group size and any per-rank sizes: what MPI needs where the papers'
// algorithms cannot serve (broadcast of one buffer, the v-variants, reductions, scans). Every one
// is real SPMD code over the public Proc API, with textbook algorithms (docs/mpi.md, "Collectives",
// gives the mapping from MPI calls). Counts and displacements are in bytes. Messages use tag
// kGenericTag in g, so g must be a group reserved for collectives (the MPI interface gives each
// communicator one).
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

inline constexpr int kGenericTag = 7;

/// Binomial-tree broadcast from `root` (ceil(log2 p) rounds): the root's buf reaches every rank.
void bcast_binomial(Proc& p, const Group& g, int root, std::span<std::byte> buf);

/// Binomial-tree reduction to `root`; recv (the root's) gets send_0 op send_1 op ... op send_(p-1)
/// in rank order (the order MPI prescribes). When `commutative`, the tree is rooted at `root`;
/// otherwise at rank 0 (so partial results combine in rank order), which forwards to `root`.
void reduce_binomial(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     const Reducer& op, bool commutative);

/// Reduction to rank 0, then binomial broadcast of the result.
void allreduce_reduce_bcast(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                            const Reducer& op, bool commutative);

/// Prefix reduction along a chain (p - 1 steps): recv of rank i gets send_0 op ... op send_i, or,
/// `exclusive`, send_0 op ... op send_(i-1) (rank 0's recv is left untouched).
void scan_linear(Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                 const Reducer& op, bool exclusive);

/// Direct gather: every rank sends its block to the root, which receives block i (counts[i] bytes)
/// at displs[i] of recv. The root's own block is copied locally.
void gatherv_direct(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                    std::span<const std::size_t> counts, std::span<const std::size_t> displs);

/// Direct scatter: the root sends counts[i] bytes at displs[i] of send to rank i.
void scatterv_direct(Proc& p, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::span<const std::size_t> counts, std::span<const std::size_t> displs);

/// Ring all-gather (p - 1 steps, paper 004's LR on any group and any block sizes): block i has
/// counts[i] bytes at displs[i] of buf; each rank's own block is in place.
void allgatherv_ring(Proc& p, const Group& g, std::span<std::byte> buf, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs);

/// Pairwise exchange all-to-all with any block sizes: in step i = 1 .. p-1 rank j sends to
/// (j + i) mod p and receives from (j - i) mod p (paper 000's 1-lev-lin schedule); the own
/// block is copied locally.
void alltoallv_pairwise(Proc& p, const Group& g, std::span<const std::byte> send, std::span<const std::size_t> scounts,
                        std::span<const std::size_t> sdispls, std::span<std::byte> recv,
                        std::span<const std::size_t> rcounts, std::span<const std::size_t> rdispls);

}  // namespace touchstone::algorithms
