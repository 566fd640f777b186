// Exploration of race outcomes (touchstone/explore.hpp) and the schedule text of --schedule.
#include "touchstone/explore.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone {

std::vector<ForcedMatch> parse_schedule(const std::string& text) {
  std::vector<ForcedMatch> out;
  std::size_t at = 0;
  auto bad = [&] {
    return UsageError(fmt::format("--schedule '{}': expected RANK:CALL=SOURCE[,RANK:CALL=SOURCE...], e.g. 0:1=2",
                                  text));
  };
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    const auto colon = item.find(':'), eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon) throw bad();
    ForcedMatch f;
    auto num = [&](std::string_view s, auto& v) {
      const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) throw bad();
    };
    const std::string_view sv(item);
    num(sv.substr(0, colon), f.rank);
    num(sv.substr(colon + 1, eq - colon - 1), f.call);
    num(sv.substr(eq + 1), f.source);
    out.push_back(f);
    at = end + 1;
  }
  if (out.empty()) throw bad();
  return out;
}

std::string format_schedule(const std::vector<ForcedMatch>& schedule) {
  std::string s;
  for (const auto& f : schedule) s += fmt::format("{}{}:{}={}", s.empty() ? "" : ",", f.rank, f.call, f.source);
  return s;
}

Exploration explore(const Machine& machine, const Program& program, const RunOptions& options, int max_runs) {
  RunOptions o = options;
  o.trace_file.clear();
  o.order_log_file.clear();
  o.races = RaceCheck::report;
  o.explain = false;
  auto attempt = [&](const std::vector<ForcedMatch>& schedule) {
    RunOutcome out;
    o.schedule = schedule;
    try {
      RunResult r = run(machine, program, o);
      out.outcome = "completed";
      out.received = std::move(r.received);
      out.races = std::move(r.races);
      out.trace_hash = r.trace_hash;
    } catch (const Error& e) {
      const std::string what = e.what();
      out.failed = true;
      out.outcome = what.substr(0, what.find('\n'));
      if (const auto* failed = dynamic_cast<const RunError*>(&e)) out.trace_hash = failed->trace_hash;
    }
    return out;
  };
  return explore(attempt, options.schedule, max_runs);
}

Exploration explore(const std::function<RunOutcome(const std::vector<ForcedMatch>&)>& attempt,
                    const std::vector<ForcedMatch>& first_schedule, int max_runs) {
  if (max_runs < 1) throw UsageError(fmt::format("--explore {}: need at least 1 run", max_runs));
  struct Outcome {
    ExploredRun run;
    RunOutcome got;
  };
  auto make = [&](std::vector<ForcedMatch> schedule) {
    Outcome out{ExploredRun{}, attempt(schedule)};
    out.run.schedule = std::move(schedule);
    out.run.failed = out.got.failed;
    out.run.outcome = out.got.outcome;
    out.run.trace_hash = out.got.trace_hash;
    return out;
  };
  Exploration ex;
  const Outcome first = make(first_schedule);
  ex.original = first.run;
  ex.runs = 1;
  // Depth-first: the children of a run force, in turn, each alternative of each of its races
  // (races by rank and call, alternatives by arrival) on top of the run's own choices. A set of
  // choices is explored once whatever order it was reached in.
  std::set<std::vector<ForcedMatch>> seen{first.run.schedule};
  std::vector<std::vector<ForcedMatch>> stack;
  auto push_children = [&](const Outcome& parent) {
    std::vector<std::vector<ForcedMatch>> kids;
    for (const Race& r : parent.got.races)
      for (const auto& alt : r.alternatives) {
        auto s = parent.run.schedule;
        s.push_back(ForcedMatch{r.rank, r.call, alt.source});
        std::sort(s.begin(), s.end());
        if (seen.insert(s).second) kids.push_back(std::move(s));
      }
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  };
  push_children(first);
  while (!stack.empty() && ex.runs < max_runs) {
    auto s = std::move(stack.back());
    stack.pop_back();
    Outcome now = make(std::move(s));
    ++ex.runs;
    bool differs = now.run.failed != first.run.failed || now.run.outcome != first.run.outcome;
    if (!now.run.failed && !first.run.failed)
      for (std::size_t r = 0; r < now.got.received.size() && r < first.got.received.size(); ++r)
        if (now.got.received[r] != first.got.received[r]) now.run.different_data.push_back(static_cast<int>(r));
    differs |= !now.run.different_data.empty();
    if (differs) ex.different.push_back(now.run);
    if (!now.run.failed) push_children(now);
  }
  ex.exhausted = stack.empty();
  return ex;
}

std::string describe_exploration(const Exploration& e, int max_runs) {
  std::string s = fmt::format("explored {} run(s) (at most {}){}; the original run {}\n", e.runs, max_runs,
                              e.exhausted ? ", every choice" : ", choices left unexplored",
                              e.original.failed ? "failed: " + e.original.outcome : "completed");
  if (e.different.empty()) return s + "every explored run had the original's outcome\n";
  s += fmt::format("{} run(s) with another outcome:\n", e.different.size());
  for (const auto& r : e.different) {
    s += fmt::format("  --schedule {}: {}", format_schedule(r.schedule), r.outcome);
    if (!r.different_data.empty()) s += fmt::format(", other data received at rank(s) {}", fmt::join(r.different_data, ", "));
    if (r.trace_hash) s += fmt::format(" (trace_hash {:016x})", r.trace_hash);
    s += "\n";
  }
  return s;
}

}  // namespace touchstone
