// A split run's processes (touchstone::Partition, docs/parallel.md "Several processes") as the
// processes of an Open MPI job: the window's swap is an MPI_Allgatherv over MPI_COMM_WORLD. Used by
// touchstone-distributed for the catalog's runs it makes itself and for the runs of the
// `touchstone mpirun` it relays for (relay.cpp).
#pragma once
#define OMPI_SKIP_MPICXX 1  // the C interface only: no C++ bindings to link
#include <mpi.h>

#include <climits>
#include <span>
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
  /// MPI counts in int: more than 2 GiB in all is a RunError, in every process alike.
  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    const auto n = static_cast<long long>(mine.size());
    std::vector<long long> sizes(static_cast<std::size_t>(count_));
    MPI_Allgather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
    std::vector<int> counts(static_cast<std::size_t>(count_)), at(static_cast<std::size_t>(count_));
    long long total = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      if (total + sizes[k] > INT_MAX) throw RunError("a window's messages exceed 2 GiB in all: use a smaller machine");
      at[k] = static_cast<int>(total);
      counts[k] = static_cast<int>(sizes[k]);
      total += sizes[k];
    }
    std::vector<std::byte> all(static_cast<std::size_t>(total));
    MPI_Allgatherv(mine.data(), static_cast<int>(n), MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE,
                   MPI_COMM_WORLD);
    return all;
  }
  /// Each part to its process alone; every process knows every size, so no sizes are exchanged.
  std::vector<std::byte> all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                    std::span<const std::size_t> from) override {
    const auto offsets = [](std::span<const std::size_t> sizes, std::vector<int>& counts, std::vector<int>& at) {
      long long total = 0;
      for (const std::size_t n : sizes) {
        if (total + static_cast<long long>(n) > INT_MAX)
          throw RunError("a window's payloads exceed 2 GiB in all: use a smaller machine");
        at.push_back(static_cast<int>(total));
        counts.push_back(static_cast<int>(n));
        total += static_cast<long long>(n);
      }
      return static_cast<std::size_t>(total);
    };
    std::vector<int> send_counts, send_at, recv_counts, recv_at;
    offsets(to, send_counts, send_at);
    std::vector<std::byte> out(offsets(from, recv_counts, recv_at));
    MPI_Alltoallv(mine.data(), send_counts.data(), send_at.data(), MPI_BYTE, out.data(), recv_counts.data(),
                  recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
    return out;
  }

 private:
  int index_ = 0, count_ = 1;
};

}  // namespace touchstone
