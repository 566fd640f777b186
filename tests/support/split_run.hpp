// One emulation split over several "processes" (RunOptions::partition) played by threads of this
// process, each with an engine of its own, meeting through a shared buffer: what
// `touchstone-distributed` does over MPI, without MPI.
#pragma once
#include <barrier>
#include <exception>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "touchstone/touchstone.hpp"

namespace ts_test {

class ThreadPartition final : public touchstone::Partition {
 public:
  struct Shared {
    explicit Shared(int parts) : slots(static_cast<std::size_t>(parts)), meet(parts) {}
    std::vector<std::vector<std::byte>> slots;
    std::barrier<> meet;
  };
  ThreadPartition(Shared& shared, int index) : shared_(shared), index_(index) {}
  int index() const override { return index_; }
  int count() const override { return static_cast<int>(shared_.slots.size()); }
  std::vector<std::byte> all_gather(std::span<const std::byte> mine) override {
    shared_.slots[static_cast<std::size_t>(index_)].assign(mine.begin(), mine.end());
    shared_.meet.arrive_and_wait();
    std::vector<std::byte> all;
    for (const auto& s : shared_.slots) all.insert(all.end(), s.begin(), s.end());
    shared_.meet.arrive_and_wait();  // nobody writes its next bytes before everyone has read these
    return all;
  }

 private:
  Shared& shared_;
  int index_;
};

/// Every process's result, or the exception each one's run ended with (one per process).
struct SplitRun {
  std::vector<touchstone::RunResult> results;
  std::vector<std::exception_ptr> failures;
};

/// `each`, when given, sets process k's own options (hooks that know which process they serve).
inline SplitRun run_split(const touchstone::Machine& m, const touchstone::Program& program, touchstone::RunOptions opts,
                          int parts, const std::function<void(touchstone::RunOptions&, int k)>& each = {}) {
  ThreadPartition::Shared shared(parts);
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
  return out;
}

}  // namespace ts_test
