#include "races.hpp"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

RaceDetector::RaceDetector(int vps)
    : vc_(static_cast<std::size_t>(vps), std::vector<std::uint32_t>(static_cast<std::size_t>(vps), 0)),
      records_(static_cast<std::size_t>(vps)) {}

void RaceDetector::merge(std::vector<std::uint32_t>& into, const std::vector<std::uint32_t>& from) {
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

void RaceDetector::on_send(int src, Msg& m) {
  auto& mine = vc_[static_cast<std::size_t>(src)];
  ++mine[static_cast<std::size_t>(src)];
  m.vc.assign(mine.begin(), mine.end());
}

// A rendezvous send is matched by its request to send (docs/model.md 2.16): the race is about
// the data message the user sent, and the request's arrival is when its envelope could match.
std::uint64_t RaceDetector::user_id(const Msg& m) { return m.proto == Msg::Proto::rts && m.rdv ? m.rdv->id : m.id; }

RaceDetector::Seen RaceDetector::seen(const Msg& m) {
  return Seen{m.id, user_id(m), m.src, m.tag, m.ctx, m.arrival, m.arrival_order, std::span(m.vc.data(), m.vc.size())};
}

void RaceDetector::add_alternative(int dst, const Seen& m, std::uint64_t before_call) {
  auto& recs = records_[static_cast<std::size_t>(dst)];
  const std::uint32_t known = m.vc.empty() ? 0 : m.vc[static_cast<std::size_t>(dst)];
  for (Record& r : recs) {
    if (r.call >= before_call || r.ctx != m.ctx) continue;  // only receives posted after the wildcard
    if (known >= r.done) continue;                          // sent after hearing that r was complete
    if ((r.src != any_source && r.src != m.src) || (r.tag != any_tag && r.tag != m.tag)) continue;
    if (m.src == r.race.source) continue;  // a pair's later message cannot overtake the taken one
    auto& alts = r.race.alternatives;
    if (std::any_of(alts.begin(), alts.end(), [&](const RaceAlternative& a) { return a.source == m.src; })) continue;
    alts.push_back(RaceAlternative{m.message, m.src, m.tag, m.arrival, m.arrival - r.race.arrival});
    if (stamping_) r.found_at.push_back(now_);
  }
}

void RaceDetector::on_match(int dst, Op& op, const Msg& m, const std::string& label) {
  add_alternative(dst, seen(m), op.call);
  if (op.src != any_source && op.tag != any_tag && !op.forced) return;
  Record r;
  r.call = op.call;
  r.src = op.forced ? any_source : op.src;  // the program's pattern, not the schedule's choice
  r.tag = op.tag;
  r.ctx = op.ctx;
  r.race.rank = dst;
  r.race.call = op.call;
  r.race.posted = op.posted;
  r.race.label = label;
  r.race.forced = op.forced;
  r.race.want_source = r.src;
  r.race.want_tag = op.tag;
  r.race.context = op.ctx;
  r.race.message = user_id(m);
  r.race.source = m.src;
  r.race.tag = m.tag;
  r.race.arrival = m.arrival;
  r.opened = now_;
  auto& recs = records_[static_cast<std::size_t>(dst)];
  recs.push_back(std::move(r));
  op.wild = static_cast<std::uint32_t>(recs.size());
}

void RaceDetector::on_complete(int dst, const Op& op, const Msg& m) {
  auto& mine = vc_[static_cast<std::size_t>(dst)];
  if (!m.vc.empty()) merge(mine, m.vc);
  ++mine[static_cast<std::size_t>(dst)];
  if (op.wild) records_[static_cast<std::size_t>(dst)][op.wild - 1].done = mine[static_cast<std::size_t>(dst)];
}

void RaceDetector::on_probe(int dst, Op& probe, const Msg& m, const std::string& label) {
  on_match(dst, probe, m, label);
  if (!probe.wild) return;
  Record& r = records_[static_cast<std::size_t>(dst)][probe.wild - 1];
  r.race.probe = true;
  // A probe learns nothing of m's past (it does not receive it); it is an event of dst's own.
  r.done = ++vc_[static_cast<std::size_t>(dst)][static_cast<std::size_t>(dst)];
}

void RaceDetector::on_handler(int dst, const Msg& m) {
  if (!m.vc.empty()) merge(vc_[static_cast<std::size_t>(dst)], m.vc);
}

void RaceDetector::on_barrier(std::span<const int> members, const std::vector<std::uint32_t>& heard) {
  for (int r : members) merge(vc_[static_cast<std::size_t>(r)], heard);
}

void RaceDetector::heard_by(int rank, std::vector<std::uint32_t>& into) const {
  into.resize(vc_.size(), 0);
  merge(into, vc_[static_cast<std::size_t>(rank)]);
}

void RaceDetector::on_run_end(const std::vector<VpPtr>& vps) {
  for (const auto& v : vps)
    if (v)  // a split run's ranks of other processes have no VP here
      for (const Msg* m = v->mailbox.unexpected(); m; m = m->next)
        add_alternative(v->rank, seen(*m), ~std::uint64_t{0});
}

void RaceDetector::took_waiting(int dst, const Msg& m) {
  if (!stamping_) return;
  taken_.push_back(Taken{now_, dst, seen(m), m.vc});
  taken_.back().m.vc = taken_.back().vc;
}

void RaceDetector::cut(Stamp failure, const std::vector<VpPtr>& vps) {
  const auto past = [failure](Stamp s) { return failure < s; };
  for (auto& recs : records_) {
    std::erase_if(recs, [&](const Record& r) { return past(r.opened); });
    // A completion past the failure stays: only a message sent after it, past the failure too,
    // could tell it.
    for (Record& r : recs) {
      std::size_t kept = 0;
      for (std::size_t i = 0; i < r.found_at.size(); ++i)
        if (!past(r.found_at[i]))
          r.race.alternatives[kept] = r.race.alternatives[i], r.found_at[kept++] = r.found_at[i];
      r.race.alternatives.resize(kept);
      r.found_at.resize(kept);
    }
  }
  // What waited at each VP at the failure, in the order it had arrived in (message events of an
  // instant go by message id, model.md 1.3), as on_run_end finds it in one process.
  std::vector<std::pair<int, Seen>> waiting;
  for (const auto& v : vps)
    if (v)
      for (const Msg* m = v->mailbox.unexpected(); m; m = m->next)
        if (!past(arrived_at(*m))) waiting.emplace_back(v->rank, seen(*m));
  for (const Taken& t : taken_)
    if (past(t.at) && !past(t.m.arrived_at())) waiting.emplace_back(t.dst, t.m);
  std::stable_sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.arrival, a.second.id) < std::tie(b.first, b.second.arrival, b.second.id);
  });
  for (const auto& [dst, m] : waiting) add_alternative(dst, m, ~std::uint64_t{0});
  taken_.clear();
}

std::vector<Race> RaceDetector::races(bool with_forced) const {
  std::vector<Race> out;
  if (gathered_) {
    for (const Race& r : *gathered_)
      if (!r.alternatives.empty() || (with_forced && r.forced)) out.push_back(r);
    return out;
  }
  for (const auto& recs : records_)
    for (const Record& r : recs)
      if (!r.race.alternatives.empty() || (with_forced && r.race.forced)) {
        out.push_back(r.race);
        std::stable_sort(out.back().alternatives.begin(), out.back().alternatives.end(),
                         [](const RaceAlternative& a, const RaceAlternative& b) { return a.arrival < b.arrival; });
      }
  return out;
}

void RaceDetector::put(Packed& out, const Race& r) {
  for (const std::int64_t x :
       {std::int64_t{r.rank}, std::int64_t{r.probe}, std::int64_t{r.forced}, std::int64_t{r.want_source},
        std::int64_t{r.want_tag}, std::int64_t{r.source}, std::int64_t{r.tag}})
    out.put(x);
  for (const std::uint64_t x : {r.call, r.context, r.message}) out.put(x);
  out.put(r.posted), out.put(r.arrival);
  out.put_text(r.label);
  out.put_text(r.described);
  out.put(r.alternatives.size());
  for (const RaceAlternative& a : r.alternatives) out.put(a);
}

Race RaceDetector::take(Unpacker& in) {
  Race r;
  const auto small = [&in] { return static_cast<int>(in.take<std::int64_t>()); };
  r.rank = small();
  r.probe = small() != 0;
  r.forced = small() != 0;
  r.want_source = small(), r.want_tag = small(), r.source = small(), r.tag = small();
  r.call = in.take<std::uint64_t>(), r.context = in.take<std::uint64_t>(), r.message = in.take<std::uint64_t>();
  r.posted = in.take<Time>(), r.arrival = in.take<Time>();
  r.label = in.take_text();
  r.described = in.take_text();
  const auto n = in.take<std::size_t>();
  if (n > (std::size_t{1} << 32)) throw_corrupt_swap();
  r.alternatives.resize(n);
  for (RaceAlternative& a : r.alternatives) a = in.take<RaceAlternative>();
  return r;
}

}  // namespace touchstone::detail

namespace touchstone {

std::string describe_races(const std::vector<Race>& races, const std::function<std::string(const Race&)>& describe) {
  auto who = [](int x) { return x < 0 ? std::string("any") : std::to_string(x); };
  std::string s;
  std::size_t alternatives = 0, listed = 0;
  for (const Race& r : races) {
    if (r.alternatives.empty()) continue;  // a forced match that nothing else could have made
    ++listed;
    alternatives += r.alternatives.size();
    if (std::string own = !r.described.empty() ? r.described : describe ? describe(r) : std::string(); !own.empty()) {
      s += own;
      continue;
    }
    s += fmt::format("race: rank {} {} #{} ({}(source={}, tag={}), posted t={} us{}) {} message #{} from {} "
                     "(tag {}, arrived t={} us); it could also have matched:\n",
                     r.rank, r.probe ? "probe" : "receive", r.call, r.probe ? "probe" : "recv", who(r.want_source),
                     who(r.want_tag), exact_us(r.posted), r.label.empty() ? "" : " at " + r.label,
                     r.forced ? "was forced by the schedule to take" : "took", r.message, r.source, r.tag,
                     exact_us(r.arrival));
    for (const auto& a : r.alternatives)
      s += fmt::format("  message #{} from {} (tag {}, arrived t={} us), which lost by {} us\n", a.message, a.source,
                       a.tag, exact_us(a.arrival), exact_us(a.margin));
  }
  s += fmt::format("{} race(s): {} wildcard receive(s) or probe(s) could have matched {} other message(s)\n",
                   listed, listed, alternatives);
  return s;
}

}  // namespace touchstone
