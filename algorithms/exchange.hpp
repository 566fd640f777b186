// Helpers of the all-to-all family (paper 000, section 5): combined messages are runs of L-byte
// blocks; these move blocks between buffers, exchange with a partner and read the mesh shape.
// Block moves of the paper-000 algorithms are local copies the processor pays for (copy_charged,
// combine.hpp); move_block alone is free (paper 002's cc-cube, on machines without a copy cost).
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "combine.hpp"
#include "common.hpp"
#include "touchstone/error.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// The tag of every all-to-all message; groups keep the steps of multi-level algorithms apart.
inline constexpr int kExchangeTag = 0;

/// A scratch buffer of n bytes, left uninitialized (every algorithm fills what it reads).
class Scratch {
 public:
  explicit Scratch(std::size_t n) : mem_(n) {}
  std::span<std::byte> span() { return mem_; }
  operator std::span<std::byte>() { return span(); }
  operator std::span<const std::byte>() const { return mem_; }

 private:
  ScratchBytes mem_;
};

/// A processor's own block never crosses the network; it is copied locally (charged to p).
inline void copy_own_block(Proc& p, int me, std::span<const std::byte> send, std::span<std::byte> recv,
                           std::size_t size) {
  copy_charged(p, [&](Copier& copy) { copy(block(recv, me, size), block(send, me, size)); });
}

/// Copies block `from` of src (blocks of `size` bytes) to block `to` of dst. Under phantom
/// payloads (Proc::phantom_payloads) no byte is read for its value, so nothing is copied.
inline void move_block(const Proc& p, std::span<const std::byte> src, int from, std::span<std::byte> dst, int to,
                       std::size_t size) {
  if (size && !p.phantom_payloads()) std::memcpy(block(dst, to, size).data(), block(src, from, size).data(), size);
}

/// Rearranges the blocks of `buf` (blocks of `size` bytes) in place: block t receives the block
/// that was at from[t] (`from` is a permutation of 0 .. from.size()-1). Follows each cycle with one
/// block of scratch, so a permutation of a buffer costs no second buffer. Free like move_block, and
/// like it moves nothing under phantom payloads.
inline void permute_blocks(const Proc& p, std::span<std::byte> buf, const std::vector<int>& from, std::size_t size) {
  if (size == 0 || p.phantom_payloads()) return;
  std::vector<bool> done(from.size());
  std::unique_ptr<std::byte[]> held(new std::byte[size]);
  for (std::size_t start = 0; start < from.size(); ++start) {
    if (done[start] || from[start] == static_cast<int>(start)) continue;
    std::memcpy(held.get(), block(buf, static_cast<int>(start), size).data(), size);
    std::size_t t = start;
    for (auto src = static_cast<std::size_t>(from[t]); src != start; t = src, src = static_cast<std::size_t>(from[t])) {
      std::memcpy(block(buf, static_cast<int>(t), size).data(), block(buf, static_cast<int>(src), size).data(), size);
      done[t] = true;
    }
    std::memcpy(block(buf, static_cast<int>(t), size).data(), held.get(), size);
    done[t] = true;
  }
}

/// dst[c][r] = src[r][c] for a rows x cols matrix of blocks stored row-major (charged to p).
inline void transpose_blocks(Proc& p, std::span<const std::byte> src, std::span<std::byte> dst, int rows, int cols,
                             std::size_t size) {
  copy_charged(p, [&](Copier& copy) {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) copy(block(dst, c * rows + r, size), block(src, r * cols + c, size));
  });
}

/// Sends `out` to `partner` and receives `in` from it (paper 000's exchange step), or copies when
/// the partner is this processor.
inline void exchange(Proc& p, const Group& g, int partner, std::span<const std::byte> out, std::span<std::byte> in) {
  if (partner == g.local_rank(p.rank())) {
    copy_charged(p, [&](Copier& copy) { copy(in, out); });
    return;
  }
  Request reqs[2] = {p.irecv(partner, kExchangeTag, in, g), p.isend(partner, kExchangeTag, out, g)};
  p.waitall(reqs);
}

/// Paper 000, section 2: "computation is synchronized by a barrier-style synchronization mechanism
/// [...] Synchronization occurs between supersteps", and a superstep may "operate on different
/// submachines": the boundary between two supersteps of a k-level algorithm is a barrier over
/// every processor the algorithm runs on, whatever submachines the supersteps use. The 1-level
/// algorithms are one superstep (their permutations are not synchronized: on the Delta, 255
/// barriers would cost more than Figure 9's whole 1-lev-xor time at 16 bytes).
inline void end_superstep(Proc& p, const Group& g) { p.barrier(g); }

/// Rows and columns of the mesh the whole machine forms (a 1-D array of n is 1 x n). The
/// two-level mesh algorithms need g to be the whole machine on a 1-D or 2-D grid; otherwise a
/// UsageError names `algorithm` and the constraint.
struct MeshShape {
  int rows = 1, cols = 1;
};
inline MeshShape mesh_shape_of(const Proc& p, const Group& g, const std::string& algorithm) {
  const auto dims = p.machine().topology->dims();
  if (!is_whole_machine(p, g) || dims.empty() || dims.size() > 2)
    throw UsageError(fmt::format("{} needs a 1-D or 2-D mesh or torus and the whole machine as its group", algorithm));
  return dims.size() == 1 ? MeshShape{1, dims[0]} : MeshShape{dims[0], dims[1]};
}

}  // namespace touchstone::algorithms
