#include "blame.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace touchstone::detail {

namespace {
std::string in_us(Time t) { return exact_us(t) + " us"; }

// Trace tracks of process "network" (trace.hpp): per channel its holds, then the waits for it
// (and for the node's ports: a node's ejection and injection waits follow its port 0), then a
// node's receive-buffer waits.
enum Lane : std::uint64_t { holds = 0, waits = 1, buffer_waits = 2 };
std::uint64_t track(std::uint32_t channel, Lane lane) { return std::uint64_t{channel} << 2 | lane; }
}  // namespace

// The undoing of a change of map[k]: erased again if it was not there, else set back.
template <class Map>
void Blame::note_entry(Map& map, const typename Map::key_type& k) {
  if (!place_) return;
  if (const auto it = map.find(k); it == map.end())
    note([&map, k] { map.erase(k); });
  else
    note([&map, k, old = it->second] { map[k] = old; });
}

Blame::Blame(const Network& net, Recorder* recorder)
    : net_(net), recorder_(recorder), tenure_(recorder ? net.channel_count() : 0) {}

std::string Blame::worm(std::uint64_t id, std::uint32_t packet, int src, int dst) {
  return fmt::format("packet {} of message #{} ({} -> {})", packet, id, src, dst);
}

std::string Blame::resource_name(Resource r) const {
  const int node = static_cast<int>(r.second);
  switch (r.first) {
    case Wait::For::channel: return net_.channel_name(r.second);
    case Wait::For::ejection_port:
      return net_.ejection_ports() == 1 ? net_.channel_name(net_.ej_channel(node, 0))
                                        : fmt::format("an ejection port of node {}", node);
    case Wait::For::injection_port:
      return net_.injection_ports() == 1 ? net_.channel_name(net_.inj_channel(node, 0))
                                         : fmt::format("an injection port of node {}", node);
    case Wait::For::buffer: return fmt::format("receive buffer of node {}", node);
  }
  return {};
}

// What w waits for and what is in its way, e.g. "link X held by packet 1 of message #4 (0 -> 2)",
// "an ejection port of node 3 (ejection port 1 of node 3 frees first) queued behind ...".
std::string Blame::waits_for(const Wait& w) const {
  const Resource r{w.kind, w.resource};
  std::string s = w.kind == Wait::For::buffer
                      ? fmt::format("receive-buffer space at node {} ({} of {} bytes in use)", w.resource,
                                    net_.buffer_used(static_cast<int>(w.resource)), net_.recv_buffer())
                      : resource_name(r);
  const bool one_port = (w.kind == Wait::For::ejection_port && net_.ejection_ports() == 1) ||
                        (w.kind == Wait::For::injection_port && net_.injection_ports() == 1);
  if (w.blocker && w.blocker_holds && w.kind != Wait::For::channel && !one_port)
    s += fmt::format(" ({} frees first)", net_.channel_name(w.blocker_channel));
  if (w.blocker)
    s += fmt::format(" {} {}", w.blocker_holds ? "held by" : "queued behind",
                     worm(w.blocker->id, w.blocker_packet, w.blocker->src, w.blocker->dst));
  return s;
}

std::size_t Blame::open_tenure_span(std::uint32_t c) {
  Tenure& h = tenure_[c];
  if (h.span == kNoSpan)
    h.span = recorder_->network_span(track(c, holds), net_.channel_name(c), fmt::format("#{} ({} -> {})", h.id, h.src, h.dst),
                                     h.since);
  ++h.blocked;
  return h.span;
}

void Blame::end_tenure(std::uint32_t c, Time end) {
  Tenure& h = tenure_[c];
  if (h.span != kNoSpan)
    recorder_->end_network_span(
        h.span, end,
        fmt::format("{} holds {} from t={} to t={}; blocked {} wait(s)", worm(h.id, h.packet, h.src, h.dst),
                    net_.channel_name(c), in_us(h.since), in_us(end), h.blocked));
  h = Tenure{};
}

void Blame::on_take(std::uint32_t c, const Msg& m, std::uint32_t packet, Time t) {
  if (!recorder_) return;
  note_tenure(c);
  if (tenure_[c].held) end_tenure(c, net_.release_of(c));
  tenure_[c] = Tenure{m.id, packet, m.src, m.dst, t, true};
  // Waits queued behind this worm: it gets going now, from this hold.
  auto p = pending_arrows_.find(key(m.id, packet));
  if (p == pending_arrows_.end()) return;
  for (const auto& [waiter, span] : p->second) {
    auto w = waiting_.find(waiter);
    if (w != waiting_.end() && w->second.span == span) recorder_->arrow(open_tenure_span(c), span);
  }
  note_entry(pending_arrows_, p->first);
  pending_arrows_.erase(p);
}

// The chain: "link X held by packet p of message #h (a -> b), which waits for link Y held by ..."
// as far as it goes (the blocker's own wait at this moment, and so on), cut after kDepth links.
void Blame::on_wait(const Wait& w) {
  const Msg& m = *w.waiter;
  Waiting x{{w.kind, w.resource}, m.id, w.packet, m.src, m.dst, w.t, 1, {waits_for(w)}};
  if (w.blocker) {
    auto b = waiting_.find(key(w.blocker->id, w.blocker_packet));
    if (b != waiting_.end()) {
      const Waiting& y = b->second;
      x.depth = y.depth + 1;
      x.chain.insert(x.chain.end(), y.chain.begin(), y.chain.begin() + std::min<std::ptrdiff_t>(kDepth - 1, static_cast<std::ptrdiff_t>(y.chain.size())));
    }
  }
  if (recorder_) {
    const std::uint32_t c = w.kind == Wait::For::channel        ? w.resource
                            : w.kind == Wait::For::injection_port ? net_.inj_channel(static_cast<int>(w.resource), 0)
                                                                  : net_.ej_channel(static_cast<int>(w.resource), 0);
    const bool buffer = w.kind == Wait::For::buffer;
    x.span = recorder_->network_span(track(c, buffer ? buffer_waits : waits),
                                     "waits for " + (buffer ? fmt::format("receive-buffer space at node {}", w.resource)
                                                            : resource_name(x.what)),
                                     w.kind == Wait::For::injection_port ? "waiting to inject" : "blocked header", w.t);
    // The arrow from the blocker: from its hold of the channel now, or (queued ahead of this one)
    // from where it gets going.
    if (w.blocker && w.blocker_holds && tenure_[w.blocker_channel].held &&
        tenure_[w.blocker_channel].id == w.blocker->id) {
      note_tenure(w.blocker_channel);
      recorder_->arrow(open_tenure_span(w.blocker_channel), x.span);
    } else if (w.blocker && !w.blocker_holds) {
      const std::uint64_t k = key(w.blocker->id, w.blocker_packet);
      note_entry(pending_arrows_, k);
      pending_arrows_[k].emplace_back(key(m.id, w.packet), x.span);
    }
  }
  note_entry(waiting_, key(m.id, w.packet));
  waiting_[key(m.id, w.packet)] = std::move(x);
}

void Blame::on_grant(const Msg& waiter, std::uint32_t packet, Time t) {
  auto it = waiting_.find(key(waiter.id, packet));
  if (it == waiting_.end()) return;
  close_wait(it->first, t, false);
}

void Blame::close_wait(std::uint64_t k, Time t, bool failed) {
  auto it = waiting_.find(k);
  const Waiting& w = it->second;
  const Time waited = t - w.since;
  note_entry(per_resource_, w.what);
  Total& total = per_resource_[w.what];
  total.blocked += waited;
  ++total.waits;
  const std::string who = w.what.first == Wait::For::injection_port
                              ? fmt::format("message #{} ({} -> {})", w.waiter, w.src, w.dst)
                              : worm(w.waiter, w.packet, w.src, w.dst);
  std::string chain = w.chain.front();
  for (std::size_t i = 1; i < w.chain.size(); ++i) chain += ", which waits for " + w.chain[i];
  if (static_cast<std::size_t>(w.depth) > w.chain.size()) chain += fmt::format(", ... ({} more)", static_cast<std::size_t>(w.depth) - w.chain.size());
  const std::string text = fmt::format("{} {} {} from t={} for {}", who, failed ? "had waited" : "waited",
                                       in_us(waited), in_us(w.since), chain) +
                           (failed ? " (when the run failed)" : "");
  if (recorder_) recorder_->end_network_span(w.span, t, text);
  auto keep = [&](std::vector<Long>& list, std::size_t n, auto before) {
    const Long l{waited, w.depth, text};
    if (list.size() >= n && !before(l, list.back())) return;
    note([&list, old = list] { list = old; });
    list.insert(std::upper_bound(list.begin(), list.end(), l, before), l);
    if (list.size() > n) list.pop_back();
  };
  // Messages queued at their source (an all-to-all queues all but one) would crowd out the waits
  // of headers in the network.
  if (w.what.first != Wait::For::injection_port)
    keep(longest_, kKeep, [](const Long& a, const Long& b) { return a.waited > b.waited; });
  if (w.depth > 1)
    keep(deepest_, kKeepChains, [](const Long& a, const Long& b) {
      return a.depth != b.depth ? a.depth > b.depth : a.waited > b.waited;
    });
  note_entry(waiting_, k);
  waiting_.erase(it);
}

void Blame::cut(Stamp failure) {
  for (; !journal_.empty() && failure < journal_.back().at; journal_.pop_back()) journal_.back().undo();
  journal_.clear();
  place_ = nullptr;  // nothing is taken back after this
}

void Blame::finish(Time now) {
  if (finished_) return;
  finished_ = true;
  std::vector<std::uint64_t> open;
  for (const auto& [k, w] : waiting_) open.push_back(k);
  std::sort(open.begin(), open.end());  // deterministic order of the reports
  for (std::uint64_t k : open) close_wait(k, std::max(now, waiting_.at(k).since), true);
  for (std::uint32_t c = 0; c < tenure_.size(); ++c)
    if (tenure_[c].held) {
      const Time r = net_.release_of(c);
      end_tenure(c, r == kNever ? std::max(now, tenure_[c].since) : r);
    }
}

std::string Blame::explain(std::size_t top) const {
  if (per_resource_.empty()) return "explain: nothing ever waited in the network\n";
  std::string s = "explain: where worms waited, by kind of wait, each with its resources of most blocked time:\n";
  const std::pair<Wait::For, const char*> kinds[] = {{Wait::For::channel, "links"},
                                                     {Wait::For::ejection_port, "ejection ports"},
                                                     {Wait::For::buffer, "receive buffers"},
                                                     {Wait::For::injection_port, "injection ports (messages queued to start)"}};
  for (const auto& [kind, name] : kinds) {
    std::vector<std::pair<Resource, Total>> list;
    Total sum;
    for (const auto& [r, t] : per_resource_)
      if (r.first == kind) {
        list.emplace_back(r, t);
        sum.blocked += t.blocked;
        sum.waits += t.waits;
      }
    if (list.empty()) continue;
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.second.blocked > b.second.blocked; });
    s +=
        fmt::format("{}: {} blocked over {} wait(s) at {} of them\n", name, in_us(sum.blocked), sum.waits, list.size());
    for (std::size_t i = 0; i < list.size() && i < top; ++i)
      s += fmt::format("  {}: {} blocked over {} wait(s)\n", resource_name(list[i].first),
                       in_us(list[i].second.blocked), list[i].second.waits);
  }
  s += fmt::format("the {} longest waits of headers in the network, each with what was in its way and what that "
                   "worm waited for:\n", longest_.size());
  for (const auto& l : longest_) s += "  " + l.text + "\n";
  if (deepest_.empty()) return s + "no chain: no worm waited for a worm that was waiting itself\n";
  s += fmt::format("the {} longest chains (worms each waiting for the next), longest wait first among equals:\n",
                   deepest_.size());
  for (const auto& l : deepest_) s += fmt::format("  {} worms waiting in a row: {}\n", l.depth, l.text);
  return s;
}

}  // namespace touchstone::detail
