// A split run's processes (touchstone::Partition, docs/parallel.md "Several processes") as the
// processes of an Open MPI job: the window's swap is an MPI_Allgatherv over MPI_COMM_WORLD. Used by
// touchstone-distributed for the catalog's runs it makes itself and for the runs of the
// `touchstone mpirun` it relays for (relay.cpp).
#pragma once
#define OMPI_SKIP_MPICXX 1  // the C interface only: no C++ bindings to link
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "touchstone/error.hpp"
#include "touchstone/run.hpp"

namespace touchstone {

/// MPI must be initialized while it is used.
class MpiPartition final : public Partition {
 public:
  MpiPartition() {
    MPI_Comm_rank(MPI_COMM_WORLD, &index_);
    MPI_Comm_size(MPI_COMM_WORLD, &count_);
  }
  int index() const override { return index_; }
  int count() const override { return count_; }
  /// One MPI_Allgather of a fixed block from each process, its part's size and its first bytes:
  /// a window's part is mostly its header and a few records, so most swaps are that one
  /// collective, where a gather of the sizes and then of the parts took two meetings of every
  /// process. A part that does not fit sends its rest in an MPI_Allgatherv after it, which every
  /// process knows to make from the sizes. MPI counts in int: more than 2 GiB in all is a
  /// RunError, in every process alike.
  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    return finish_gather(gather_blocks(mine, 0), mine);
  }
  /// Every process's block: its part's size, a word of its own (the relay's "my child has ended")
  /// and the part's first bytes.
  struct Blocks {
    std::vector<std::byte> bytes;
    std::vector<std::int64_t> sizes;
    std::vector<std::uint64_t> words;
  };
  /// The all-gather's first collective.
  Blocks gather_blocks(std::span<const std::byte> mine, std::uint64_t word) {
    const std::size_t count = static_cast<std::size_t>(count_);
    const auto n = static_cast<std::int64_t>(mine.size());
    std::vector<std::byte> block(kBlock);
    std::memcpy(block.data(), &n, sizeof n);
    std::memcpy(block.data() + sizeof n, &word, sizeof word);
    if (const std::size_t head = std::min(mine.size(), kInline); head > 0)
      std::memcpy(block.data() + kLead, mine.data(), head);
    Blocks b{std::vector<std::byte>(count * kBlock), std::vector<std::int64_t>(count),
             std::vector<std::uint64_t>(count)};
    MPI_Allgather(block.data(), static_cast<int>(kBlock), MPI_BYTE, b.bytes.data(), static_cast<int>(kBlock), MPI_BYTE,
                  MPI_COMM_WORLD);
    for (std::size_t k = 0; k < count; ++k) {
      std::memcpy(&b.sizes[k], b.bytes.data() + k * kBlock, sizeof b.sizes[k]);
      std::memcpy(&b.words[k], b.bytes.data() + k * kBlock + sizeof b.sizes[k], sizeof b.words[k]);
    }
    return b;
  }
  /// The rest of the all-gather `blocks` began, every process's part in the order of the processes.
  std::vector<std::byte> finish_gather(const Blocks& blocks, std::span<const std::byte> mine) {
    const std::size_t count = static_cast<std::size_t>(count_);
    const auto rest_of = [](std::int64_t size) {
      return std::max<std::int64_t>(0, size - static_cast<std::int64_t>(kInline));
    };
    std::int64_t total = 0, rests = 0;
    for (const std::int64_t size : blocks.sizes) {
      total += size;
      rests += rest_of(size);
      if (total > INT_MAX) throw RunError("a window's messages exceed 2 GiB in all: use a smaller machine");
    }
    const std::size_t head = std::min(mine.size(), kInline);
    std::vector<std::byte> rest;
    if (rests > 0) {
      std::vector<std::size_t> rest_sizes;
      for (const std::int64_t size : blocks.sizes) rest_sizes.push_back(static_cast<std::size_t>(rest_of(size)));
      std::vector<int> counts, at;
      rest.resize(counts_at(rest_sizes, counts, at, "messages"));
      MPI_Allgatherv(mine.data() + head, static_cast<int>(mine.size() - head), MPI_BYTE, rest.data(), counts.data(),
                     at.data(), MPI_BYTE, MPI_COMM_WORLD);
    }
    std::vector<std::byte> all;
    all.reserve(static_cast<std::size_t>(total));
    const std::byte* next_rest = rest.data();
    for (std::size_t k = 0; k < count; ++k) {
      const auto size = static_cast<std::size_t>(blocks.sizes[k]);
      const std::byte* first = blocks.bytes.data() + k * kBlock + kLead;
      all.insert(all.end(), first, first + std::min(size, kInline));
      if (size > kInline) {
        all.insert(all.end(), next_rest, next_rest + (size - kInline));
        next_rest += size - kInline;
      }
    }
    return all;
  }
  /// Each part to its process alone; every process knows every size, so no sizes are exchanged.
  std::vector<std::byte> all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                    std::span<const std::size_t> from) override {
    std::vector<int> send_counts, send_at, recv_counts, recv_at;
    counts_at(to, send_counts, send_at, "payloads");
    std::vector<std::byte> out(counts_at(from, recv_counts, recv_at, "payloads"));
    MPI_Alltoallv(mine.data(), send_counts.data(), send_at.data(), MPI_BYTE, out.data(), recv_counts.data(),
                  recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
    return out;
  }

 private:
  // MPI's counts and displacements of parts of `sizes` bytes laid end to end; their total. MPI counts
  // in int: more than 2 GiB in all is a RunError (the same in every process, which all know the sizes).
  static std::size_t counts_at(std::span<const std::size_t> sizes, std::vector<int>& counts, std::vector<int>& at,
                               const char* what) {
    long long total = 0;
    for (const std::size_t n : sizes) {
      if (total + static_cast<long long>(n) > INT_MAX)
        throw RunError(std::string("a window's ") + what + " exceed 2 GiB in all: use a smaller machine");
      at.push_back(static_cast<int>(total));
      counts.push_back(static_cast<int>(n));
      total += static_cast<long long>(n);
    }
    return static_cast<std::size_t>(total);
  }
  // A block: the part's size and the word, then up to kInline of its bytes. 1 KiB holds a window's
  // header and about seven records of small messages.
  static constexpr std::size_t kBlock = 1024;
  static constexpr std::size_t kLead = sizeof(std::int64_t) + sizeof(std::uint64_t);
  static constexpr std::size_t kInline = kBlock - kLead;
  int index_ = 0, count_ = 1;
};

}  // namespace touchstone
