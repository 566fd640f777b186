// Exploration of race outcomes (touchstone/explore.hpp) and the schedule text of --schedule.
#include "touchstone/explore.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"

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
      if (read_number(s, v) != NumberText::fits) throw bad();
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
    o.on_races = [&out](const std::vector<Race>& races) { out.races = races; };
    try {
      RunResult r = run(machine, program, o);
      out.outcome = "completed";
      out.received = std::move(r.received);
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

namespace {

// The failure's text without what differs between runs that fail the same way: virtual times
// ("t=12.5 us", "by 3 us") and message numbers ("#17").
std::string behaviour(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    const bool numbered = text[i] == '#' || (text[i] == '=' && i > 0 && text[i - 1] == 't');
    if (!numbered) continue;
    std::size_t j = i + 1;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    if (j > i + 1) out += '*';
    i = j - 1;
  }
  return out;
}

// How `o` ended, against the run it is compared with: what differs besides the error's text.
std::string ending(const RunOutcome& o, const RunOutcome& against) {
  std::string s = o.outcome;
  if (s.ends_with('.')) s.pop_back();
  if (o.exit_status != against.exit_status) s += fmt::format(", exit status {}", o.exit_status);
  if (o.output != against.output) s += ", other output";
  return s;
}

bool infeasible(const RunOutcome& o) { return o.failed && o.outcome.starts_with("infeasible schedule"); }

// When a race's match was decided: its receive was posted and the message it took had arrived.
Time decided(const Race& r) { return std::max(r.posted, r.arrival); }

using Key = std::pair<int, std::uint64_t>;

}  // namespace

bool same_outcome(const RunOutcome& a, const RunOutcome& b) {
  return a.failed == b.failed && a.exit_status == b.exit_status && a.output == b.output &&
         (!a.failed || behaviour(a.outcome) == behaviour(b.outcome));
}

int Exploration::harmful() const {
  return static_cast<int>(std::count_if(races.begin(), races.end(), [](const RaceVerdict& v) {
    return v.effect == RaceVerdict::Effect::harmful;
  }));
}

Exploration explore(const std::function<RunOutcome(const std::vector<ForcedMatch>&)>& attempt,
                    const std::vector<ForcedMatch>& first_schedule, int max_runs) {
  if (max_runs < 1) throw UsageError(fmt::format("--explore {}: need at least 1 run", max_runs));
  struct Made {
    ExploredRun run;
    RunOutcome got;
  };
  std::vector<Made> made;  // every run, in run order: children name their parent by index
  auto make = [&](std::vector<ForcedMatch> schedule) {
    Made out{ExploredRun{}, attempt(schedule)};
    out.run.schedule = std::move(schedule);
    out.run.failed = out.got.failed;
    out.run.infeasible = infeasible(out.got);
    out.run.outcome = out.got.outcome;
    out.run.exit_status = out.got.exit_status;
    out.run.trace_hash = out.got.trace_hash;
    made.push_back(std::move(out));
    return made.size() - 1;
  };
  Exploration ex;
  make(first_schedule);
  ex.original = made[0].run;
  ex.runs = 1;
  std::map<Key, RaceVerdict> verdicts;
  std::map<Key, int> pending;  // children forcing the race, made but not yet run
  for (const Race& r : made[0].got.races)
    if (!r.forced) verdicts[{r.rank, r.call}].in_original = true;
  // Depth-first: the children of a run force, in turn, each alternative of each of its races
  // (races by rank and call, alternatives by arrival). A child keeps the parent's choices decided
  // before the race and drops the later ones, which need not make sense once the race goes the
  // other way. A set of choices is explored once whatever order it was reached in.
  struct Child {
    std::vector<ForcedMatch> schedule;
    Key race;
    std::size_t parent;
  };
  std::set<std::vector<ForcedMatch>> seen{made[0].run.schedule};
  std::vector<Child> stack;
  auto push_children = [&](std::size_t parent) {
    const Made& p = made[parent];
    if (p.run.infeasible) return;
    std::map<Key, Time> when;  // when each of the parent's forced choices was decided
    for (const Race& r : p.got.races)
      if (r.forced) when[{r.rank, r.call}] = decided(r);
    std::vector<Child> kids;
    for (const Race& r : p.got.races) {
      if (r.forced) continue;  // its alternatives are its siblings, made with the parent's parent
      const Key key{r.rank, r.call};
      auto& v = verdicts[key];
      v.rank = r.rank;
      v.call = r.call;
      v.probe = r.probe;
      for (const auto& alt : r.alternatives) {
        std::vector<ForcedMatch> s;
        for (const ForcedMatch& f : p.run.schedule) {
          const auto w = when.find({f.rank, f.call});
          if (w != when.end() && w->second < decided(r)) s.push_back(f);
        }
        s.push_back(ForcedMatch{r.rank, r.call, alt.source});
        std::sort(s.begin(), s.end());
        if (!seen.insert(s).second) continue;
        ++pending[key];
        kids.push_back(Child{std::move(s), key, parent});
      }
    }
    stack.insert(stack.end(), std::make_move_iterator(kids.rbegin()), std::make_move_iterator(kids.rend()));
  };
  push_children(0);
  while (!stack.empty() && ex.runs < max_runs) {
    Child c = std::move(stack.back());
    stack.pop_back();
    --pending[c.race];
    const std::size_t now = make(std::move(c.schedule));
    ++ex.runs;
    ExploredRun& run = made[now].run;
    const RunOutcome& got = made[now].got;
    if (run.infeasible) {
      ++ex.infeasible;
      continue;
    }
    RaceVerdict& v = verdicts[c.race];
    ++v.explored;
    if (!same_outcome(got, made[c.parent].got) && v.effect != RaceVerdict::Effect::harmful) {
      v.effect = RaceVerdict::Effect::harmful;
      v.example = run.schedule;
      v.outcome = ending(got, made[c.parent].got);
    }
    const RunOutcome& first = made[0].got;
    run.ending = ending(got, first);
    if (!got.failed && !first.failed)
      for (std::size_t r = 0; r < got.received.size() && r < first.received.size(); ++r)
        if (got.received[r] != first.received[r]) run.different_data.push_back(static_cast<int>(r));
    if (!same_outcome(got, first)) ex.different.push_back(run);
    else if (!run.different_data.empty()) ex.other_data.push_back(run);
    push_children(now);
  }
  ex.exhausted = stack.empty();
  for (auto& [key, v] : verdicts) {
    v.unexplored = pending[key];
    if (v.effect != RaceVerdict::Effect::harmful && v.explored > 0 && v.unexplored == 0)
      v.effect = RaceVerdict::Effect::harmless;
    ex.races.push_back(v);
  }
  return ex;
}

std::string describe_exploration(const Exploration& e, int max_runs) {
  std::string s = fmt::format("explored {} run(s) (at most {}){}; the original run {}\n", e.runs, max_runs,
                              e.exhausted ? ", every choice" : ", choices left unexplored",
                              e.original.failed ? "failed: " + e.original.outcome : "completed");
  if (e.infeasible)
    s += fmt::format("{} run(s) had a schedule that could not be followed (infeasible, not an outcome)\n",
                     e.infeasible);
  if (e.different.empty()) {
    s += "every explored run had the original's outcome\n";
  } else {
    s += fmt::format("{} run(s) with another outcome:\n", e.different.size());
    for (const auto& r : e.different) {
      s += fmt::format("  --schedule {}: {}", format_schedule(r.schedule), r.ending);
      if (!r.different_data.empty())
        s += fmt::format(", other data received at rank(s) {}", fmt::join(r.different_data, ", "));
      if (r.trace_hash) s += fmt::format(" (trace_hash {:016x})", r.trace_hash);
      s += "\n";
    }
  }
  int harmless = 0, open = 0;
  std::string verdicts;
  for (const RaceVerdict& v : e.races) {
    verdicts += fmt::format("  rank {} {} #{}{}: ", v.rank, v.probe ? "probe" : "receive", v.call,
                            v.in_original ? "" : " (a race of an explored run)");
    if (v.effect == RaceVerdict::Effect::harmful) {
      verdicts += fmt::format("harmful: --schedule {} ends otherwise: {}\n", format_schedule(v.example), v.outcome);
    } else if (v.effect == RaceVerdict::Effect::harmless) {
      ++harmless;
      verdicts += fmt::format("harmless: {} run(s) forcing another match, each ending as the run it changed\n",
                              v.explored);
    } else {
      ++open;
      verdicts += v.unexplored ? fmt::format("not classified: {} other match(es) left unexplored within {} run(s)\n",
                                             v.unexplored, max_runs)
                               : std::string("not classified: its other matches were explored only together with "
                                             "other choices\n");
    }
  }
  s += fmt::format("{} harmful race(s), {} harmless, {} not classified:\n{}", e.harmful(), harmless, open, verdicts);
  // Information only: other bytes received with the same outcome (uninitialized memory sent, a
  // sum taken in another order) do not make a race harmful.
  for (const auto& r : e.other_data)
    s += fmt::format("same outcome, other data received (information only): --schedule {}: rank(s) {}\n",
                     format_schedule(r.schedule), fmt::join(r.different_data, ", "));
  return s;
}

}  // namespace touchstone
