// Message combining and extraction (paper 000, section 1): "Our k-level algorithms are
// characterized by combining the original messages of size L and by performing independent
// routings within submachines." A combined (long) message holds the blocks of a set of group
// ranks, each `size` bytes, concatenated in increasing rank order; every k-level algorithm packs
// and unpacks its long messages with these helpers.
//
// Packing and unpacking is local memory work the node's CPU pays for (docs/model.md 2.11): every
// helper here, and every other block copy of the paper-000 algorithms, goes through copy_charged,
// which charges the processor once per batch with Proc::local_copy.
//
//   BlockView all = BlockView::all(n, send, L);                  // the source's p blocks
//   Blocks row = combine(p, all, members(grid, row_submachine));  // one long message for a row
//   team.isend(leader, row.bytes());
//   ... the leader: Blocks got(members(grid, row), L); team.irecv(src, got.bytes()); got.at(me)
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "scratch.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// Copies blocks in local memory and counts what the copies cost: the bytes, and the pieces, a
/// piece being a run of copies each continuing the previous one in both source and destination
/// (what one memcpy would do). Empty copies are free. Under phantom payloads
/// (Proc::phantom_payloads) no byte is read for its value, so it counts without copying.
class Copier {
 public:
  explicit Copier(bool phantom = false) : phantom_(phantom) {}
  void operator()(std::span<std::byte> to, std::span<const std::byte> from);
  std::size_t bytes() const { return bytes_; }
  std::size_t pieces() const { return pieces_; }

 private:
  bool phantom_;
  std::size_t bytes_ = 0, pieces_ = 0;
  const std::byte* from_end_ = nullptr;
  const std::byte* to_end_ = nullptr;
};

/// Runs body(copy) and charges p once for every copy it made: p.local_copy(bytes, pieces).
template <class Body>
void copy_charged(Proc& p, Body&& body) {
  Copier copy(p.phantom_payloads());
  body(copy);
  p.local_copy(copy.bytes(), copy.pieces());
}

/// Read-only blocks of a set of ranks (increasing order), each `size` bytes, back to back.
class BlockView {
 public:
  BlockView() = default;
  /// `ranks` must be increasing; data holds ranks.size() blocks.
  BlockView(std::vector<int> ranks, std::span<const std::byte> data, std::size_t size);
  /// The blocks of ranks 0 .. n-1 (a buffer of per-rank blocks).
  static BlockView all(int n, std::span<const std::byte> data, std::size_t size);
  /// The block of `rank` (which must be in the set).
  std::span<const std::byte> at(int rank) const;
  /// The block of ranks()[i].
  std::span<const std::byte> block(std::size_t i) const;
  const std::vector<int>& ranks() const { return ranks_; }
  std::span<const std::byte> bytes() const { return data_; }
  std::size_t block_size() const { return size_; }

 private:
  std::vector<int> ranks_;
  std::span<const std::byte> data_;
  std::size_t size_ = 0;
};

/// Owned blocks of a set of ranks, laid out as a combined message.
class Blocks {
 public:
  /// Room for the blocks of `ranks` (any order; kept sorted), uninitialized.
  Blocks(std::vector<int> ranks, std::size_t size);
  std::span<std::byte> bytes() { return data_; }
  std::span<std::byte> at(int rank);
  /// The block of ranks()[i].
  std::span<std::byte> block(std::size_t i);
  const std::vector<int>& ranks() const { return ranks_; }
  BlockView view() const { return BlockView(ranks_, data_, size_); }

 private:
  std::vector<int> ranks_;
  ScratchBytes data_;
  std::size_t size_;
};

/// Message combining: the long message holding the blocks of `ranks`, taken from `from` (charged
/// to p as a local copy).
Blocks combine(Proc& p, const BlockView& from, std::vector<int> ranks);
/// Message extraction: copies every block of `msg` to its place in `into` (charged to p).
void extract(Proc& p, const BlockView& msg, Blocks& into);
/// Message extraction into a buffer of per-rank blocks (block r at offset r * size).
void extract(Proc& p, const BlockView& msg, std::span<std::byte> by_rank);

}  // namespace touchstone::algorithms
