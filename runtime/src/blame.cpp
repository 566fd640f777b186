#include "blame.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace touchstone::detail {

namespace {
std::string exact_us(Time t) { return fmt::format("{}.{:06} us", t / 1'000'000, t % 1'000'000); }
}  // namespace

// "link X held by message #h (a -> b), which waits for link Y held by ..." as far as the chain
// goes (the blocker's own wait at this moment, and so on), cut after kDepth links.
void Blame::on_wait(std::uint32_t c, const Msg& waiter, std::uint32_t packet, const Msg& blocker,
                    std::uint32_t blocker_packet, Time t) {
  Wait w{c, waiter.id, waiter.src, waiter.dst, t, 1, {}};
  auto b = waiting_.find(key(blocker, blocker_packet));
  // A blocker waiting for this same channel is queued ahead (the channel frees at t, its grant
  // comes first); otherwise it holds the channel.
  const bool queued = b != waiting_.end() && b->second.channel == c;
  w.chain = fmt::format("{} {} packet {} of message #{} ({} -> {})", net_.channel_name(c),
                        queued ? "queued behind" : "held by", blocker_packet, blocker.id, blocker.src, blocker.dst);
  if (b != waiting_.end()) {
    w.depth = b->second.depth + 1;
    w.chain += w.depth > kDepth ? ", which waits too (chain cut)" : ", which waits for " + b->second.chain;
  }
  waiting_[key(waiter, packet)] = std::move(w);
}

void Blame::on_grant(std::uint32_t c, const Msg& waiter, std::uint32_t packet, Time t) {
  auto it = waiting_.find(key(waiter, packet));
  if (it == waiting_.end()) return;
  const Wait& w = it->second;
  const Time waited = t - w.since;
  Total& total = per_channel_[c];
  total.blocked += waited;
  ++total.waits;
  const std::string text = fmt::format("packet {} of message #{} ({} -> {}) waited {} from t={} for {}", packet,
                                       w.waiter, w.src, w.dst, exact_us(waited), exact_us(w.since), w.chain);
  if (recorder_) recorder_->network_span(c, net_.channel_name(c), w.since, t, text);
  if (longest_.size() < kKeep || waited > longest_.back().waited) {
    auto pos = std::upper_bound(longest_.begin(), longest_.end(), waited,
                                [](Time x, const Long& l) { return x > l.waited; });
    longest_.insert(pos, Long{waited, w.since, text});
    if (longest_.size() > kKeep) longest_.pop_back();
  }
  waiting_.erase(it);
}

std::string Blame::explain(std::size_t top) const {
  std::vector<std::pair<std::uint32_t, Total>> channels(per_channel_.begin(), per_channel_.end());
  std::stable_sort(channels.begin(), channels.end(),
                   [](const auto& a, const auto& b) { return a.second.blocked > b.second.blocked; });
  if (channels.empty()) return "explain: no header ever waited for a channel\n";
  std::string s = fmt::format("explain: the {} channel(s) with the most blocked time (of {} that blocked a header):\n",
                              std::min(top, channels.size()), channels.size());
  for (std::size_t i = 0; i < channels.size() && i < top; ++i)
    s += fmt::format("  {}: {} blocked over {} wait(s)\n", net_.channel_name(channels[i].first),
                     exact_us(channels[i].second.blocked), channels[i].second.waits);
  s += fmt::format("the {} longest waits, each with what held the channel and what that worm waited for:\n",
                   longest_.size());
  for (const auto& l : longest_) s += "  " + l.text + "\n";
  return s;
}

}  // namespace touchstone::detail
