// Harnesses: each collective's catalog entry wraps an algorithm in buffers filled with a known
// pattern and checks every byte that arrives. Algorithm files register their entries with these.
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include "collective.hpp"
#include "registry.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// Fills `out` with the bytes rank `src` sends to rank `dst`: 8-byte word j is a keyed hash of
/// (src, dst, j), with no period in any of the three, so data from another pair, another offset or
/// another block is caught on any machine size (two pairs' words agree with probability 2^-64).
void fill_pattern(int src, int dst, std::span<std::byte> out);

/// Throws a runtime_error naming the algorithm, the rank and the first wrong byte unless `got`
/// holds exactly the pattern from src to dst.
void check_pattern(const std::string& algorithm, int src, int dst, std::span<const std::byte> got);

/// Refuses (UsageError naming `what`) a run whose buffers would need `bytes` of host memory when
/// that is more than 90% of the host's physical memory, instead of letting the kernel kill the
/// process.
void check_host_memory(const std::string& what, std::size_t bytes);

/// All-to-all: send and recv hold one block of `size` bytes per group rank.
Algorithm alltoall_entry(std::string name, std::string summary, AlltoallFn fn);

/// One-to-all (scatter.hpp): on the root, send holds g.size() blocks of `size` bytes; every
/// processor's recv (size bytes) receives its block. All-to-one (gather.hpp) mirrors it: send holds
/// the processor's block, the root's recv holds g.size() blocks.
/// Harness of scatter: the root's block for dst holds fill_pattern(root, dst); every processor
/// checks the block it received. `broadcast`: every processor receives all p blocks (1-lev-*-br),
/// which the host memory estimate must allow for.
Algorithm scatter_entry(std::string name, std::string summary, RootedFn fn, bool broadcast = false);
/// Harness of gather: every processor sends fill_pattern(me, root); the root checks every block.
Algorithm gather_entry(std::string name, std::string summary, RootedFn fn);

/// logp-lev-rec(gamma) entries for any gamma (registry.cpp's find() builds them from names such as
/// "scatter/logp-lev-rec(0.6)"); the catalog holds the paper's defaults (0.75 and 0.60).
Algorithm scatter_logp_lev_rec_entry(double gamma);
Algorithm gather_logp_lev_rec_entry(double gamma);


}  // namespace touchstone::algorithms
