// The host time of a program between two calls into the runtime, as the engine estimates it to
// decide whether the programs of an instant are worth running at once (docs/parallel.md, "The
// programs of an instant"). Host time decides only which host threads run what, never what happens.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>

namespace touchstone::detail {

/// A running mean per return to the program (a call that may have waited returning to it). Each
/// sample stands for the returns it was drawn from and weighs as many: a sequential turn timed
/// once in kSampleEvery returns stands for kSampleEvery of them, an instant whose n programs ran
/// at once (timed as a whole) for n. Weighed alike, the instants, each of them timed, outweighed
/// the sequentially run turns 64 to 1: in an MPI program whose long computations follow its
/// collectives, the short programs of the instants inside them pulled the mean under the threshold
/// and the instants that release the computations stopped opening.
class ProgramTimeMean {
 public:
  static constexpr std::int64_t kSampleEvery = 64;  // sequential returns per timed one
  static constexpr std::int64_t kReturns = 512;     // the returns the mean is over, about

  ProgramTimeMean() = default;
  /// Until the first sample the mean is `start`: the engine starts it at the threshold, so that a
  /// program's first instants open and the first sample under the threshold closes them.
  explicit ProgramTimeMean(std::chrono::nanoseconds start) : mean_(start) {}
  void add(std::chrono::nanoseconds t, std::int64_t returns) {
    mean_ += (t - mean_) * std::clamp<std::int64_t>(returns, 1, kReturns) / kReturns;
  }
  std::chrono::nanoseconds value() const { return mean_; }

 private:
  std::chrono::nanoseconds mean_{0};
};

}  // namespace touchstone::detail
