// Checked virtual-time arithmetic: no run of a valid machine silently wraps its 64-bit
// count of picoseconds.
//
// The argument, in three parts:
//  1. run() refuses a machine whose costs exceed the caps of touchstone/time.hpp (per-message and
//     per-hop times at most kMaxOverheadTime, per-byte, per-packet and per-entry times at most
//     kMaxPerUnitTime, packets at most 2^30 + 2^20 bytes) and a time limit above kMaxTimeLimit
//     (check_run_inputs). One packet's body then costs at most about 1.1e18 ps on any channel.
//  2. What a VP's own call adds to its clock is computed saturating (a product or sum that would
//     not fit is kNever) and compared with the time limit before it is added: compute(dt),
//     local_copy, and the CPU costs of a message (check_message_cost). So a VP's clock never
//     exceeds the limit by more than one bounded cost, and the engine's time-limit check at the
//     VP's next call (or at its end) stops the run.
//  3. Every network event is a popped event time (at most the limit, else the run stops) plus a
//     few bounded costs: at most 1e18 + a few x 1.1e18 ps, below 2^63 = 9.2e18.
#pragma once
#include <cstdint>
#include <string>

#include "touchstone/machine.hpp"
#include "touchstone/run.hpp"
#include "touchstone/time.hpp"

namespace touchstone::detail {

/// a + b for non-negative times, or kNever if the sum does not fit.
constexpr Time add_sat(Time a, Time b) {
  Time r = 0;
  return __builtin_add_overflow(a, b, &r) ? kNever : r;
}

/// count x per_unit (per_unit >= 0), or kNever if the product does not fit.
constexpr Time mul_sat(std::uint64_t count, Time per_unit) {
  Time r = 0;
  if (count > static_cast<std::uint64_t>(kNever) || __builtin_mul_overflow(static_cast<Time>(count), per_unit, &r))
    return kNever;
  return r;
}

/// The CPU time of sending or receiving `bytes` on `node`, saturating (kNever if it does not fit).
Time send_cost_sat(const Machine& m, int node, std::uint64_t bytes);
Time recv_cost_sat(const Machine& m, int node, std::uint64_t bytes);

/// UsageError naming the parameter when the machine or the options could overflow virtual time
/// (part 1 above). Called by run() before the engine is built.
void check_run_inputs(const Machine& machine, const RunOptions& options);

/// The report of a run stopped by its time limit; `detail` says what took it there (may be empty).
std::string time_limit_report(Time limit, const std::string& detail);

/// Empty if a message of `bytes` from `src` to `dst` costs both CPUs no more than `limit`, else why
/// not (for time_limit_report). Called before the message is made, so no cost of it can overflow.
std::string check_message_cost(const Machine& m, int src, int dst, std::uint64_t bytes, Time limit);

}  // namespace touchstone::detail
