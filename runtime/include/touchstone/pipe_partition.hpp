// A split run's process that meets the others through a relay on two pipes (docs/parallel.md,
// "Several processes"): `touchstone-distributed mpirun` is the Open MPI process and starts
// `touchstone mpirun --split-pipe ...` as its child, which cannot call Open MPI itself (its programs'
// MPI_ functions are Touchstone's). Both ends of the protocol are here: the child writes what it
// asks (one byte: 0 all-gather, 1 all-to-all, then for an all-to-all the 8-byte sizes of its parts
// for each process and of each process's part for it) and its bytes (8-byte length, bytes); the
// relay answers one byte, 1 and then what the processes' exchange gave it (8-byte length, bytes),
// or 0 when another process ended before reaching this swap.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "touchstone/run.hpp"

namespace touchstone {

/// The child's end: process `index` of `count`, reading answers from `in` and writing to `out` (it
/// closes both).
class PipePartition final : public Partition {
 public:
  PipePartition(int in, int out, int index, int count);
  ~PipePartition() override;
  PipePartition(const PipePartition&) = delete;
  PipePartition& operator=(const PipePartition&) = delete;
  int index() const override { return index_; }
  int count() const override { return count_; }
  /// RunError when another process has ended first, or the relay has gone.
  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  std::vector<std::byte> all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                    std::span<const std::size_t> from) override;

 private:
  std::vector<std::byte> answer();
  int in_, out_, index_, count_;
};

/// What a child asks its relay for: an all-gather of `bytes`, or an all-to-all of them (`to`,
/// `from`: Partition::all_to_all's sizes).
struct RelayPart {
  bool all_to_all = false;
  std::vector<std::size_t> to, from;
  std::vector<std::byte> bytes;
};
/// The relay's end: the child's next part, or nothing once the child has ended (closed its pipe).
std::optional<RelayPart> relay_take_part(int from_child, int count);
/// Answers the child's swap with every part (`all`), or with "another process ended" (nullptr).
/// false when the child has gone.
bool relay_answer(int to_child, const std::vector<std::byte>* all);

}  // namespace touchstone
