// A split run's process that meets the others through a relay on two pipes (docs/parallel.md,
// "Several processes"): `touchstone-distributed mpirun` is the Open MPI process and starts
// `touchstone mpirun --split-pipe ...` as its child, which cannot call Open MPI itself (its programs'
// MPI_ functions are Touchstone's). Both ends of the protocol are here. Every message is a lead of
// two 8-byte words, its kind and the length of what follows, then that, written at once: the
// child asks with kind 0 (all-gather: its bytes follow) or 1 (all-to-all: the sizes of its parts
// for each process and of each process's part for it, then its bytes); the relay answers with
// kind 1 and what the processes' exchange gave it, or kind 0 and nothing when another process
// ended before reaching this swap.
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
