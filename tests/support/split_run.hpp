// One emulation split over several "processes" (RunOptions::partition) played by threads of this
// process, each with an engine of its own, meeting through a shared buffer: what
// `touchstone-distributed` does over MPI, without MPI.
#pragma once
#include <atomic>
#include <barrier>
#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "touchstone/touchstone.hpp"

namespace ts_test {

class ThreadPartition final : public touchstone::Partition {
 public:
  struct Shared {
    explicit Shared(int parts)
        : slots(static_cast<std::size_t>(parts)),
          sizes(static_cast<std::size_t>(parts)),
          sent_apart(static_cast<std::size_t>(parts)),
          meet(parts) {}
    std::vector<std::vector<std::byte>> slots;
    std::vector<std::vector<std::size_t>> sizes;       // all_to_all: each process's part sizes
    std::vector<std::atomic<std::size_t>> sent_apart;  // all_to_all: bytes each process sent to the others
    std::optional<std::size_t> inline_up_to;           // Partition::payloads_inline_up_to, if not its default
    std::barrier<> meet;
  };
  ThreadPartition(Shared& shared, int index) : shared_(shared), index_(index) {}
  int index() const override { return index_; }
  int count() const override { return static_cast<int>(shared_.slots.size()); }
  std::size_t payloads_inline_up_to() const override {
    return shared_.inline_up_to.value_or(Partition::payloads_inline_up_to());
  }
  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    shared_.slots[static_cast<std::size_t>(index_)].assign(mine.begin(), mine.end());
    shared_.meet.arrive_and_wait();
    std::vector<std::byte> all;
    for (const auto& s : shared_.slots) all.insert(all.end(), s.begin(), s.end());
    shared_.meet.arrive_and_wait();  // nobody writes its next bytes before everyone has read these
    return all;
  }
  /// Each part to its process alone, counted (Shared::sent_apart) so that tests see where bytes go.
  std::vector<std::byte> all_to_all(std::span<const std::byte> mine, std::span<const std::size_t> to,
                                    std::span<const std::size_t> from) override {
    const auto me = static_cast<std::size_t>(index_);
    shared_.slots[me].assign(mine.begin(), mine.end());
    shared_.sizes[me].assign(to.begin(), to.end());
    shared_.meet.arrive_and_wait();
    std::vector<std::byte> out;
    for (std::size_t k = 0; k < shared_.slots.size(); ++k) {
      std::size_t at = 0;
      for (std::size_t j = 0; j < me; ++j) at += shared_.sizes[k][j];
      const std::size_t n = shared_.sizes[k][me];
      if (n != from[k]) throw touchstone::RunError("all_to_all: the sizes disagree");
      out.insert(out.end(), shared_.slots[k].begin() + static_cast<std::ptrdiff_t>(at),
                 shared_.slots[k].begin() + static_cast<std::ptrdiff_t>(at + n));
      if (k != me) shared_.sent_apart[k] += n;
    }
    shared_.meet.arrive_and_wait();
    return out;
  }

 private:
  Shared& shared_;
  int index_;
};

/// Every process's result, or the exception each one's run ended with (one per process).
struct SplitRun {
  std::vector<touchstone::RunResult> results;
  std::vector<std::exception_ptr> failures;
  std::vector<std::size_t> sent_apart;  // payload bytes each process sent to others apart (all_to_all)
};

/// `each`, when given, sets process k's own options (hooks that know which process they serve);
/// `inline_up_to`, the processes' Partition::payloads_inline_up_to.
inline SplitRun run_split(const touchstone::Machine& m, const touchstone::Program& program, touchstone::RunOptions opts,
                          int parts, const std::function<void(touchstone::RunOptions&, int k)>& each = {},
                          std::optional<std::size_t> inline_up_to = {}) {
  ThreadPartition::Shared shared(parts);
  shared.inline_up_to = inline_up_to;
  SplitRun out;
  out.results.resize(static_cast<std::size_t>(parts));
  out.failures.resize(static_cast<std::size_t>(parts));
  std::vector<std::thread> threads;
  for (int k = 0; k < parts; ++k)
    threads.emplace_back([&, k, opts]() mutable {
      opts.partition = std::make_shared<ThreadPartition>(shared, k);
      if (each) each(opts, k);
      try {
        out.results[static_cast<std::size_t>(k)] = touchstone::run(m, program, opts);
      } catch (...) {
        out.failures[static_cast<std::size_t>(k)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& n : shared.sent_apart) out.sent_apart.push_back(n.load());
  return out;
}

}  // namespace ts_test
