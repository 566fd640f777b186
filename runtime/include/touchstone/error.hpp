// Errors a run can end with. Every one carries a message meant for the user.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "touchstone/time.hpp"

namespace touchstone {

/// Base of every Touchstone error.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Bad input or misuse of the API: bad machine spec, rank out of range, request waited twice.
struct UsageError : Error {
  using Error::Error;
};

/// The run could not finish: application deadlock, network deadlock, an exception in VP code,
/// the virtual time limit. what() is the full report.
struct RunError : Error {
  using Error::Error;
  RunError(const std::string& report, std::uint64_t hash) : Error(report), trace_hash(hash) {}
  /// The trace hash of what the run did up to the failure (RunResult::trace_hash of a run that
  /// completes): the same on every replay (RunOptions::schedule), under perturbation and with
  /// threads. The report's line "trace_hash HEX" says it too. 0: not known.
  std::uint64_t trace_hash = 0;
  /// Where in the sequential order (docs/model.md 1.3) the run failed, for a layer that holds what
  /// the VPs did until it knows whether the run got there (`touchstone-distributed mpirun` holds
  /// the ranks' output): the virtual time of the failing event, and its place among that instant's
  /// events, as RunOptions::on_vp_resume gives a turn's: a turn at failed_at whose place is at most
  /// failed_place came before the failure or was its turn (an event before the instant's turns has
  /// a place below every turn's). kNever: after everything (a deadlock) or not known.
  Time failed_at = kNever;
  std::uint64_t failed_place = 0;
  /// A run split over processes that failed where the processes could not take back what they ran
  /// past the failure (a failure a layer finds in a call, or of the event loop's own, or with a
  /// send's protocol undecided): trace_hash sums each process's share up to where it stopped, and
  /// is not the single process's.
  bool hash_of_shares = false;
};

/// A run that failed because VP code raised a UsageError: bad input found inside the program (an
/// algorithm given a machine it cannot run on, a traffic matrix out of range) or misuse of the API.
/// A RunError with the full report, which the command line treats as a usage error (exit 1).
struct RunUsageError : RunError {
  using RunError::RunError;
};

}  // namespace touchstone
