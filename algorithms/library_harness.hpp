// Harnesses of the MPI libraries' collectives (bcast.hpp, reduce.hpp, allgather.hpp): each wraps
// an algorithm for any group in the catalog's run on the whole machine, fills the inputs, and
// checks every byte of every result. The reductions combine 8-byte elements with a known operator:
// wrapping 64-bit addition for the algorithms that need a commutative one, otherwise the
// composition of affine maps x -> a x + b modulo 2^32, which is associative but not commutative,
// so that any operand out of rank order is caught. The operator is charged as an integer one
// (NodeCosts::reduce_int_per_byte).
#pragma once
#include <functional>
#include <string>

#include "collective.hpp"
#include "registry.hpp"

namespace touchstone::algorithms {

/// The elements the harness's operators combine: a reduction's size must be a multiple of it.
inline constexpr std::size_t kHarnessElement = 8;

/// The harness's operator on packed elements (inout = in op inout), and its result on one pair of
/// elements, `lower` holding the operands of the lower ranks.
Reduction harness_reduction(bool commutative);
std::uint64_t harness_combine(bool commutative, std::uint64_t lower, std::uint64_t higher);
/// Element j of rank r's operand vector.
std::uint64_t harness_operand(int rank, std::size_t j);

/// Broadcast from the root: the root's buffer holds fill_pattern(root, root); every processor checks it.
Algorithm library_bcast_entry(std::string name, std::string summary, std::function<BcastCollective> fn);
/// All-gather: rank r's block holds fill_pattern(r, r); every processor checks every block.
Algorithm library_allgather_entry(std::string name, std::string summary, std::function<AllgatherCollective> fn);
/// Reduce to the root; allreduce; reduce-scatter (rank r's block of `size` bytes of a vector of p
/// blocks); inclusive scan. `commutative_only`: the algorithm needs a commutative operator.
Algorithm reduce_entry(std::string name, std::string summary, std::function<ReduceCollective> fn,
                       bool commutative_only);
Algorithm allreduce_entry(std::string name, std::string summary, std::function<AllreduceCollective> fn,
                          bool commutative_only);
Algorithm reduce_scatter_entry(std::string name, std::string summary, std::function<ReduceScatterCollective> fn,
                               bool commutative_only);
Algorithm scan_entry(std::string name, std::string summary, std::function<ScanCollective> fn);
/// Barrier: rank r computes for r + 1 us before it; no processor may leave before p us.
Algorithm barrier_entry(std::string name, std::string summary, std::function<BarrierCollective> fn);

}  // namespace touchstone::algorithms
