// The reports of runs that do not end well, besides deadlocks (deadlock.cpp): interrupted by a
// signal, messages never received, requests held past their program, and the evidence (trace,
// order log) written up to a failure. Livelocks are found and worded in livelock.hpp; these only
// read the engine's state, once the run is over or stopping.
#include <signal.h>

#include <algorithm>
#include <tuple>

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

// What a run that otherwise ended well left behind: the messages never received (the first kShown
// described), the misuse found on the way (receive requests destroyed before completion) and the
// Requests still holding an operation. Misuse in the run's order, held Requests in rank order: the
// order in which a split run's processes can pool them too.
Engine::Leftovers Engine::leftovers() {
  Leftovers found;
  for (auto& v : vps_)
    for (const Msg* m = v ? v->mailbox.unexpected() : nullptr; m; m = m->next)
      if (++found.unreceived_count <= Leftovers::kShown)
        found.unreceived.push_back(describe_unreceived(opts_, *m, v->mailbox.unexpected()));
  found.misuse = misuse_;
  ops_.for_each([&](Op& op) {
    if (op.holder) found.held.push_back({0, op.owner, fmt::format("\n  rank {}: {}", op.owner, describe_op(op))});
  });
  if (partition_) pool_leftovers(found);
  std::stable_sort(found.misuse.begin(), found.misuse.end(), [](const RankedLine& x, const RankedLine& y) {
    return std::tie(x.t, x.rank) < std::tie(y.t, y.rank);
  });
  std::stable_sort(found.held.begin(), found.held.end(),
                   [](const RankedLine& x, const RankedLine& y) { return x.rank < y.rank; });
  return found;
}

std::string Engine::leftovers_report(const Leftovers& found) {
  std::string report, unreceived;
  for (const std::string& line : found.unreceived)
    if (!line.empty()) unreceived += line + "\n";
  if (found.unreceived_count)
    report = fmt::format("the run finished with {} message(s) never received:\n{}{}", found.unreceived_count,
                         unreceived, found.unreceived_count > Leftovers::kShown ? "  ...\n" : "");
  for (const RankedLine& s : found.misuse) report += s.text + "\n";
  return report;
}

// A Request that outlives its VP's program would be completed or destroyed after run()
// returned. A run that otherwise succeeded fails with a usage error naming each such request.
std::string Engine::held_requests(const Leftovers& found) {
  std::string held;
  for (const RankedLine& line : found.held) held += line.text;
  if (held.empty()) return held;
  return "a Request outlives the program of the VP that started it (stored outside the program?); complete it "
         "with wait or test, or let it go out of scope, before the program returns:" + held;
}

// A failure every process of a split run found alike (what the run left behind, pooled): the first
// process's report speaks for the job, the others say whose it is, as for a failure of one process.
std::string Engine::first_process_says(std::string report) const {
  if (report.empty() || !partition_ || partition_->index() == 0) return report;
  return "process 0 of the split run failed (its report says why)";
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
