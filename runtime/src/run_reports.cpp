// The reports of runs that do not end well, besides deadlocks (deadlock.cpp): interrupted by a
// signal, messages never received, requests held past their program, and the evidence (trace,
// order log) written up to a failure. Livelocks are found and worded in livelock.hpp; these only
// read the engine's state, once the run is over or stopping.
#include <signal.h>

#include <fmt/format.h>

#include "engine.hpp"

namespace touchstone::detail {

// SIGINT or SIGTERM (RunOptions::stop_on_signals): the run ends as a failure, with where every VP
// was; `v` is the VP that noticed, at its call.
std::string Engine::interrupted_report(const Vp* v) const {
  const int sig = Watchdog::pending_signal();
  std::string where = v ? fmt::format("rank {} was calling the runtime at t={} us", v->rank, to_us(v->clock))
                        : fmt::format("the event loop was at t={} us", to_us(now_));
  const std::string blocked = blocked_vps();
  return fmt::format("interrupted by {}: {}.\n{}", sig == SIGINT ? "SIGINT" : "SIGTERM", where,
                     blocked.empty() ? "" : "The blocked VPs:\n" + blocked);
}

// One line per blocked rank's VP, for the reports of interrupted and livelocked runs.
std::string Engine::blocked_vps() const {
  std::string blocked;
  for (const auto& w : vps_)
    if (w && w->state == Vp::State::blocked)
      blocked += fmt::format("  rank {} blocked since t={} us in {}{}\n", w->rank, to_us(w->blocked_since),
                             describe_wait(*w), w->label.empty() ? "" : " at " + w->label);
  return blocked;
}

// What a run that otherwise ended well left behind: messages never received (the first 20), and
// the misuse found on the way (receive requests destroyed before completion).
std::string Engine::leftovers_report() const {
  std::string report, unreceived;
  std::size_t count = 0;
  for (auto& v : vps_)
    for (const Msg* m = v ? v->mailbox.unexpected() : nullptr; m; m = m->next)
      if (++count <= 20) {
        const std::string line = describe_unreceived(opts_, *m, v->mailbox.unexpected());
        if (!line.empty()) unreceived += line + "\n";
      }
  if (count)
    report = fmt::format("the run finished with {} message(s) never received:\n{}{}", count, unreceived,
                         count > 20 ? "  ...\n" : "");
  for (const auto& s : misuse_) report += s + "\n";
  return report;
}

// A Request that outlives its VP's program would be completed or destroyed after run()
// returned. A run that otherwise succeeded fails with a usage error naming each such request.
std::string Engine::held_requests() {
  std::string held;
  ops_.for_each([&](Op& op) {
    if (op.holder)
      held += fmt::format("\n  rank {}: {}", op.owner, describe_op(op));
  });
  if (held.empty()) return held;
  return "a Request outlives the program of the VP that started it (stored outside the program?); complete it "
         "with wait or test, or let it go out of scope, before the program returns:" + held;
}

// The evidence of a failed run: the messages that arrived and were never received. The latest
// clock, since a VP may have run ahead of the event loop before it failed.
void Engine::record_unreceived() {
  for (const auto& v : vps_) {
    if (!v) continue;
    for (const Msg* m = v->mailbox.unexpected(); m; m = m->next) instruments_.unreceived(*m);
    evidence_upto_ = std::max(evidence_upto_, v->clock);
  }
}

// Writes the trace and order log a run asked for. After a failure they hold everything up to it,
// and the returned note tells the user so. A split run's process 0 writes what every process
// recorded (gather_evidence), once all have ended.
std::string Engine::write_evidence(bool failed) {
  if (!instruments_.recording()) return {};
  if (partition_) {
    if (!evidence_gathered_)  // the watchdog, while the processes still run
      return "\nNo trace or order log written: a split run's processes write them together when they end.\n";
    if (partition_->index() != 0) return {};
    return instruments_.write_evidence(failed, machine_.name, evidence_upto_, !records_cut_at_, hash_of_shares());
  }
  evidence_upto_ = now_;
  if (failed && records_cut_at_) instruments_.cut_records(*records_cut_at_);
  if (failed) record_unreceived();
  return instruments_.write_evidence(failed, machine_.name, evidence_upto_);
}

}  // namespace touchstone::detail
