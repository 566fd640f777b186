// Running an SPMD program on an emulated machine.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "touchstone/machine.hpp"
#include "touchstone/proc.hpp"
#include "touchstone/time.hpp"

namespace touchstone {

using Program = std::function<void(Proc&)>;

/// How VPs get the host CPU. Either way exactly one VP runs at a time and results are identical.
enum class Execution {
  fibers,   ///< user-level threads (Boost.Context): a VP switch costs about 100 ns
  threads,  ///< one OS thread per VP, handing a baton through semaphores: tens of microseconds
};

struct RunOptions {
  Execution execution = Execution::fibers;
  std::uint64_t seed = 1;         ///< seed of every random choice the model or algorithm makes
  std::uint64_t perturb = 0;      ///< nonzero: seeded random host delays in VP threads
  bool phantom_payloads = false;  ///< sizes only: no payload bytes are stored or copied
  std::string trace_file;         ///< Chrome Trace Event JSON (Perfetto)
  std::string order_log_file;     ///< plain-text per-VP message order
  Time time_limit = milliseconds(3'600'000);  ///< virtual time after which the run is an error
  std::size_t stack_bytes = std::size_t{1} << 20;  ///< host stack of each VP thread
  int host_cores = 0;             ///< threads: pin VP threads to host cores 0..n-1 (0: no pinning)
  /// Overrides the machine's NetworkParams::eager_limit for this run (docs/model.md 2.16; CLI
  /// --eager-limit): bytes, NetworkParams::kNoFlowControl (off) or INT64_MAX (only the buffer decides).
  std::optional<std::int64_t> eager_limit;
  /// Called on a VP's own thread (or fiber) each time it gives up the host CPU: when it blocks and
  /// when its program ends. For tools that attribute process-wide state to VPs (`touchstone mpirun
  /// --tag-output` flushes stdout there and prefixes what it finds with the rank). It must not
  /// call the Proc, and it cannot change the run's results.
  std::function<void(int rank)> on_vp_pause;
};

struct RunStats {
  std::uint64_t messages = 0;
  std::uint64_t packets = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t blocked_headers = 0;  ///< times a header found a channel busy
  Time blocked_time = 0;              ///< sum over headers of the time spent waiting for channels
  std::uint64_t events = 0;           ///< engine events processed
};

struct RunResult {
  Time makespan = 0;              ///< largest final VP clock
  std::vector<Time> finish_time;  ///< final clock of each VP
  std::vector<std::uint64_t> sent;  ///< messages each VP sent (its message set-ups), barriers included
  std::uint64_t trace_hash = 0;   ///< hash of the canonical event log
  RunStats stats;
  double host_seconds = 0;
};

/// Runs `program` on every VP of `machine`. Throws RunError (deadlock, exception in VP code,
/// unreceived messages, time limit) or UsageError (API misuse) with a full report.
RunResult run(const Machine& machine, const Program& program, const RunOptions& options = {});

}  // namespace touchstone
