// Switch networks and up*/down* routing (paper 004, sections 2.1-2.3; docs/machines.md).
//
// Routing: a BFS spanning tree from switch 0 (the lowest UID), neighbours taken in UID order so
// that the tree is unique. The "up" end of a link is the end closer to the root, or the lower UID
// when both ends are on one level. A legal route goes up zero or more links, then down zero or
// more: never up after down. The forwarding table of switch `at`, indexed by the incoming channel
// (which tells whether the worm has gone down already) and the destination, lists every output
// channel that starts a minimal legal route; the network picks a free one when the header arrives.
#include "touchstone/topologies/switch_network.hpp"

#include <algorithm>
#include <deque>
#include <fstream>
#include <sstream>
#include <tuple>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "touchstone/error.hpp"

namespace touchstone {
namespace {

constexpr int kFar = 1 << 28;

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// Uniform in lo..hi (inclusive).
int uniform(std::uint64_t& s, int lo, int hi) {
  return lo + static_cast<int>(splitmix(s) % static_cast<std::uint64_t>(hi - lo + 1));
}

}  // namespace

SwitchNetwork::SwitchNetwork(SwitchLayout layout) : layout_(std::move(layout)) {
  const int S = switches();
  if (S < 1) throw UsageError("a switch network needs at least one switch");
  // Sizes are capped so that no count overflows an int and no file asks for gigabytes.
  if (layout_.ports < 1 || layout_.ports > kMaxSwitchPorts)
    throw UsageError(fmt::format("switch ports must be in 1..{} (got {})", kMaxSwitchPorts, layout_.ports));
  if (S > kMaxSwitches) throw UsageError(fmt::format("a switch network has at most {} switches (got {})", kMaxSwitches, S));
  std::vector<int> degree(static_cast<std::size_t>(S), 0);
  for (const auto& [a, b] : layout_.links) {
    if (a < 0 || a >= S || b < 0 || b >= S)
      throw UsageError(fmt::format("switch link {}-{}: switches are numbered 0..{}", a, b, S - 1));
    // Section 2.3: "Links looped back to the same switch are omitted from the configuration."
    if (a == b) throw UsageError(fmt::format("switch link {}-{} loops back to the same switch", a, b));
    ++degree[static_cast<std::size_t>(a)];
    ++degree[static_cast<std::size_t>(b)];
  }
  int total = 0;
  for (int s = 0; s < S; ++s) {
    const int n = layout_.nodes_per_switch[static_cast<std::size_t>(s)];
    if (n < 0) throw UsageError(fmt::format("switch {} has a negative number of nodes", s));
    if (n + degree[static_cast<std::size_t>(s)] > layout_.ports)
      throw UsageError(fmt::format("switch {} needs {} ports ({} nodes + {} links) but has {}", s,
                                   n + degree[static_cast<std::size_t>(s)], n, degree[static_cast<std::size_t>(s)],
                                   layout_.ports));
    total += n;  // at most kMaxSwitches x kMaxSwitchPorts = 2^28: no overflow
  }
  if (total < 1) throw UsageError("a switch network needs at least one node");
  if (total > kMaxSwitchNodes)
    throw UsageError(fmt::format("a switch network has at most {} nodes (got {})", kMaxSwitchNodes, total));
  // Ranks: position p of the switch-major order is on the switch whose range holds p.
  std::vector<int> position_switch;
  for (int s = 0; s < S; ++s) position_switch.insert(position_switch.end(), static_cast<std::size_t>(layout_.nodes_per_switch[static_cast<std::size_t>(s)]), s);
  if (layout_.placement.empty()) {
    layout_.placement.resize(static_cast<std::size_t>(total));
    std::iota(layout_.placement.begin(), layout_.placement.end(), 0);
  }
  {
    std::vector<int> sorted = layout_.placement;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> want(static_cast<std::size_t>(total));
    std::iota(want.begin(), want.end(), 0);
    if (sorted != want) throw UsageError(fmt::format("switch placement must be a permutation of 0..{}", total - 1));
  }
  on_switch_.resize(static_cast<std::size_t>(S));
  for (int r = 0; r < total; ++r) {
    const int s = position_switch[static_cast<std::size_t>(layout_.placement[static_cast<std::size_t>(r)])];
    node_switch_.push_back(s);
    on_switch_[static_cast<std::size_t>(s)].push_back(r);
  }
  out_channels_.resize(static_cast<std::size_t>(S));
  for (LinkId c = 0; c < link_channels(); ++c) out_channels_[static_cast<std::size_t>(channel_from(c))].push_back(c);

  // BFS spanning tree from the root, neighbours in UID order (section 2.3).
  level_.assign(static_cast<std::size_t>(S), -1);
  parent_.assign(static_cast<std::size_t>(S), -1);
  children_.resize(static_cast<std::size_t>(S));
  std::deque<int> queue{0};
  level_[0] = 0;
  while (!queue.empty()) {
    const int s = queue.front();
    queue.pop_front();
    std::vector<int> next;
    for (LinkId c : out_channels_[static_cast<std::size_t>(s)]) next.push_back(channel_to(c));
    std::sort(next.begin(), next.end());
    for (int t : next) {
      if (level_[static_cast<std::size_t>(t)] >= 0) continue;
      level_[static_cast<std::size_t>(t)] = level_[static_cast<std::size_t>(s)] + 1;
      parent_[static_cast<std::size_t>(t)] = s;
      children_[static_cast<std::size_t>(s)].push_back(t);
      queue.push_back(t);
    }
  }
  for (int s = 0; s < S; ++s)
    if (level_[static_cast<std::size_t>(s)] < 0)
      throw UsageError(fmt::format("switch network is not connected: switch {} cannot be reached from switch 0", s));

  // Remaining legal hops from every (switch, phase) to every switch: a breadth-first search
  // backwards from the destination over (switch, phase) states, where channel c leads from (a, ph)
  // to (b, up(c) ? 0 : 1) unless it goes up after down (ph == 1 and up(c)). It finds the same
  // shortest hop counts as relaxing every channel until nothing changes, which took
  // channels x diameter steps per destination (53 s for 4096 generated switches, now well under
  // a second).
  std::vector<char> up(link_channels());
  std::vector<std::vector<LinkId>> in_channels(static_cast<std::size_t>(S));
  for (LinkId c = 0; c < link_channels(); ++c) {
    up[c] = is_up(c);
    in_channels[static_cast<std::size_t>(channel_to(c))].push_back(c);
  }
  dist_.assign(static_cast<std::size_t>(S) * static_cast<std::size_t>(S) * 2, kFar);
  std::vector<std::pair<int, int>> frontier;  // (switch, phase) states in order of distance
  for (int to = 0; to < S; ++to) {
    auto d = [&](int at, int ph) -> int& {
      return dist_[(static_cast<std::size_t>(to) * static_cast<std::size_t>(S) + static_cast<std::size_t>(at)) * 2 + static_cast<std::size_t>(ph)];
    };
    d(to, 0) = d(to, 1) = 0;
    frontier = {{to, 0}, {to, 1}};
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      const auto [b, nph] = frontier[i];
      for (const LinkId c : in_channels[static_cast<std::size_t>(b)]) {
        if ((up[c] ? 0 : 1) != nph) continue;
        const int a = channel_from(c);
        for (int ph = 0; ph < 2; ++ph) {
          if (ph == 1 && up[c]) continue;  // never up after down
          if (d(a, ph) == kFar) {
            d(a, ph) = d(b, nph) + 1;
            frontier.emplace_back(a, ph);
          }
        }
      }
    }
  }
}

int SwitchNetwork::channel_from(LinkId c) const {
  const auto& l = layout_.links[c / 2];
  return c % 2 ? l.second : l.first;
}
int SwitchNetwork::channel_to(LinkId c) const {
  const auto& l = layout_.links[c / 2];
  return c % 2 ? l.first : l.second;
}

bool SwitchNetwork::is_up(LinkId c) const {
  const int a = channel_from(c), b = channel_to(c);
  const int la = level(a), lb = level(b);
  return lb < la || (lb == la && b < a);
}

int SwitchNetwork::legal_distance(int from, int to) const { return remaining(from, 0, to); }

std::vector<LinkId> SwitchNetwork::forwarding(int at, LinkId came_in, int to) const {
  const int phase = came_in != kNoLink && !is_up(came_in) ? 1 : 0;
  std::vector<LinkId> out;
  const int here = remaining(at, phase, to);
  for (LinkId c : out_channels_[static_cast<std::size_t>(at)]) {
    if (phase == 1 && is_up(c)) continue;
    const int nph = is_up(c) ? 0 : 1;
    if (remaining(channel_to(c), nph, to) + 1 == here) out.push_back(c);
  }
  return out;
}

void SwitchNetwork::next_channels(int src, int dst, LinkId came_in, std::vector<LinkId>& out) const {
  const int at = came_in == kNoLink ? switch_of(src) : channel_to(came_in);
  for (LinkId c : forwarding(at, came_in, switch_of(dst))) out.push_back(c);
}

void SwitchNetwork::route(int src, int dst, std::vector<LinkId>& out) const {
  const int to = switch_of(dst);
  int at = switch_of(src);
  LinkId came = kNoLink;
  while (at != to) {
    came = forwarding(at, came, to).front();  // the lowest channel id: the deterministic choice
    out.push_back(came);
    at = channel_to(came);
  }
}

int SwitchNetwork::distance(int src, int dst) const { return legal_distance(switch_of(src), switch_of(dst)); }

std::string SwitchNetwork::link_name(LinkId id) const {
  return fmt::format("switch {} -> switch {} (link {}, {})", channel_from(id), channel_to(id), id / 2,
                     is_up(id) ? "up" : "down");
}

void SwitchNetwork::inorder(int s, std::vector<int>& out) const {
  const auto& ch = children(s);
  if (!ch.empty()) inorder(ch.front(), out);
  out.push_back(s);
  for (std::size_t i = 1; i < ch.size(); ++i) inorder(ch[i], out);
}

std::vector<int> SwitchNetwork::inorder_switches() const {
  std::vector<int> out;
  inorder(0, out);
  return out;
}

std::vector<int> SwitchNetwork::switch_ordered_ranks() const {
  std::vector<int> out;
  for (int s : inorder_switches()) out.insert(out.end(), nodes_on(s).begin(), nodes_on(s).end());
  return out;
}

std::shared_ptr<const SwitchNetwork> make_switch_network(SwitchLayout layout) {
  return std::make_shared<const SwitchNetwork>(std::move(layout));
}

SwitchLayout generate_irregular(const IrregularSpec& g) {
  const int S = g.switches;
  if (S < 1 || S > 4096) throw UsageError(fmt::format("irregular: switches must be in 1..4096 (got {})", S));
  if (g.nodes_lo < 0 || g.nodes_hi < g.nodes_lo) throw UsageError("irregular: nodes=A-B needs 0 <= A <= B");
  if (g.links_lo < 0 || g.links_hi < g.links_lo) throw UsageError("irregular: links=C-D needs 0 <= C <= D");
  if (g.parallel < 1) throw UsageError("irregular: parallel must be at least 1");
  if (S > 1 && g.links_hi < 1) throw UsageError("irregular: several switches need at least one link each (links=C-D with D >= 1)");
  // In 64 bits: 4096 switches of up to 2^20 nodes each overflow an int.
  const long long least = static_cast<long long>(S) * g.nodes_lo, most = static_cast<long long>(S) * g.nodes_hi;
  if (g.total > 0 && (g.total < least || g.total > most))
    throw UsageError(fmt::format("irregular: {} nodes cannot be spread over {} switches with {}..{} each", g.total, S,
                                 g.nodes_lo, g.nodes_hi));
  if (g.nodes_hi + g.links_hi > g.ports)
    throw UsageError(fmt::format("irregular: {} nodes + {} links do not fit in {} ports", g.nodes_hi, g.links_hi, g.ports));
  // Constraints no attempt can meet are refused at once rather than after every attempt failed
  // (the fuzz harness found specs such as links=22 on 10 switches taking seconds to be refused).
  if (S > 2 && g.links_hi < 2)
    throw UsageError(fmt::format("irregular: {} switches cannot be connected with at most 1 link each (links=C-D needs D >= 2)", S));
  if (S > 1 && static_cast<long long>(g.links_lo) > static_cast<long long>(g.parallel) * (S - 1))
    throw UsageError(fmt::format("irregular: a switch has at most {} links (parallel={} to each of the {} others), "
                                 "fewer than links={}-{} asks", g.parallel * (S - 1), g.parallel, S - 1, g.links_lo, g.links_hi));
  if (S > 1 && g.links_lo == g.links_hi && S % 2 == 1 && g.links_lo % 2 == 1)
    throw UsageError(fmt::format("irregular: {} switches cannot all have exactly {} links (the link ends would be odd)", S, g.links_lo));
  std::uint64_t rng = g.seed * 0x2545f4914f6cdd1dULL + 0x1234567ULL;
  // Attempts cost about 50 x S steps each: the budget is 10000 attempts of the paper's 10-switch
  // network (section 5.3), so a large network whose constraints are rarely met fails in well under
  // a second instead of hanging.
  const int attempts = std::max(20, 10000 * 10 / S);
  for (int attempt = 0; attempt < attempts; ++attempt) {
    SwitchLayout l;
    l.ports = g.ports;
    l.nodes_per_switch.assign(static_cast<std::size_t>(S), g.nodes_lo);
    if (g.total > 0) {
      for (int left = g.total - S * g.nodes_lo; left > 0;) {
        const int s = uniform(rng, 0, S - 1);
        if (l.nodes_per_switch[static_cast<std::size_t>(s)] < g.nodes_hi) {
          ++l.nodes_per_switch[static_cast<std::size_t>(s)];
          --left;
        }
      }
    } else {
      for (auto& n : l.nodes_per_switch) n = uniform(rng, g.nodes_lo, g.nodes_hi);
    }
    // One switch has no links to draw (links=0-0 is then valid; drawing its wanted count from
    // 1..0 divided by zero).
    if (S == 1) return l;
    std::vector<int> deg(static_cast<std::size_t>(S), 0), want(static_cast<std::size_t>(S));
    for (auto& w : want) w = uniform(rng, std::max(1, g.links_lo), g.links_hi);
    // Links per switch pair, so that a candidate link is checked in constant time (a scan of all
    // links made each attempt quadratic).
    std::unordered_map<std::uint64_t, int> between;
    auto key = [](int a, int b) {
      return (static_cast<std::uint64_t>(std::min(a, b)) << 32) | static_cast<std::uint32_t>(std::max(a, b));
    };
    auto links_between = [&](int a, int b) {
      const auto it = between.find(key(a, b));
      return it == between.end() ? 0 : it->second;
    };
    auto add = [&](int a, int b) {
      l.links.emplace_back(std::min(a, b), std::max(a, b));
      ++between[key(a, b)];
      ++deg[static_cast<std::size_t>(a)];
      ++deg[static_cast<std::size_t>(b)];
    };
    // A random spanning tree keeps the network connected: switch order[i] joins one of order[0..i)
    // that still has a free link; `can` lists those in that order, kept as links are added.
    std::vector<int> order(static_cast<std::size_t>(S));
    std::iota(order.begin(), order.end(), 0);
    for (int i = S - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(uniform(rng, 0, i))]);
    bool ok = true;
    std::vector<int> can = {order[0]};
    for (int i = 1; i < S && ok; ++i) {
      if (can.empty()) {
        ok = false;
        break;
      }
      const std::size_t k = static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(can.size()) - 1));
      const int to = can[k], joining = order[static_cast<std::size_t>(i)];
      add(joining, to);
      if (deg[static_cast<std::size_t>(to)] >= g.links_hi) can.erase(can.begin() + static_cast<std::ptrdiff_t>(k));
      if (deg[static_cast<std::size_t>(joining)] < g.links_hi) can.push_back(joining);
    }
    if (!ok) continue;
    // Extra links until every switch has its wanted number of external links, where possible.
    for (int tries = 0; tries < 50 * S; ++tries) {
      const int a = uniform(rng, 0, S - 1), b = uniform(rng, 0, S - 1);
      if (a == b || deg[static_cast<std::size_t>(a)] >= want[static_cast<std::size_t>(a)] ||
          deg[static_cast<std::size_t>(b)] >= want[static_cast<std::size_t>(b)] || links_between(a, b) >= g.parallel)
        continue;
      add(a, b);
    }
    for (int s = 0; s < S && ok; ++s) {
      const int d = deg[static_cast<std::size_t>(s)];
      if (d < g.links_lo || d > g.links_hi) ok = false;
      if (l.nodes_per_switch[static_cast<std::size_t>(s)] + d > g.ports) ok = false;
    }
    for (const auto& [k, n] : between) ok = ok && n <= g.parallel;
    if (!ok) continue;
    std::sort(l.links.begin(), l.links.end());
    return l;
  }
  throw UsageError(fmt::format("irregular: no network satisfies these constraints ({} attempts)", attempts));
}

std::vector<int> switch_placement(const std::vector<int>& nodes_per_switch, const std::string& kind, std::uint64_t seed) {
  const int total = std::accumulate(nodes_per_switch.begin(), nodes_per_switch.end(), 0);
  std::vector<int> p(static_cast<std::size_t>(total));
  std::iota(p.begin(), p.end(), 0);
  if (kind == "block") return p;
  if (kind == "random") {
    std::uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + 77;
    for (int i = total - 1; i > 0; --i) std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(uniform(rng, 0, i))]);
    return p;
  }
  if (kind == "cyclic") {
    // Rank r goes to the next switch (round-robin) that still has a free node position.
    std::vector<int> first(nodes_per_switch.size(), 0), used(nodes_per_switch.size(), 0);
    for (std::size_t s = 1; s < nodes_per_switch.size(); ++s) first[s] = first[s - 1] + nodes_per_switch[s - 1];
    std::size_t s = 0;
    for (int r = 0; r < total; ++r) {
      while (used[s] == nodes_per_switch[s]) s = (s + 1) % nodes_per_switch.size();
      p[static_cast<std::size_t>(r)] = first[s] + used[s]++;
      s = (s + 1) % nodes_per_switch.size();
    }
    return p;
  }
  throw UsageError(fmt::format("switch placement must be block, cyclic or random (got '{}')", kind));
}

namespace {
// An integer field of a switch network file in lo..hi: nlohmann's get<int> used to wrap
// ("ports": 4294967297 became 1).
int json_int(const nlohmann::json& v, const std::string& where, const char* field, long long lo, long long hi) {
  std::optional<long long> x;
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)) x = static_cast<long long>(v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    x = v.get<std::int64_t>();
  }
  if (!x || *x < lo || *x > hi)
    throw UsageError(fmt::format("switch network '{}': field '{}' holds {}, outside {}..{}", where, field, v.dump(), lo, hi));
  return static_cast<int>(*x);
}
}  // namespace

SwitchLayout switch_layout_from_json(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number such as 1e400 (found by fuzz_switchnet)
    throw UsageError(fmt::format("switch network '{}' is not valid JSON: {}", where, e.what()));
  }
  if (!j.is_object()) throw UsageError(fmt::format("switch network '{}': expected a JSON object", where));
  SwitchLayout l;
  for (const auto& [key, v] : j.items()) {
    if (key == "ports") {
      if (!v.is_number_integer()) throw UsageError(fmt::format("switch network '{}': field 'ports' must be an integer", where));
      l.ports = json_int(v, where, "ports", 1, kMaxSwitchPorts);
    } else if (key == "nodes") {
      if (!v.is_array()) throw UsageError(fmt::format("switch network '{}': field 'nodes' must be an array of node counts per switch", where));
      for (const auto& n : v) {
        if (!n.is_number_integer()) throw UsageError(fmt::format("switch network '{}': field 'nodes' must hold integers", where));
        if (l.nodes_per_switch.size() == static_cast<std::size_t>(kMaxSwitches))
          throw UsageError(fmt::format("switch network '{}': more than {} switches", where, kMaxSwitches));
        l.nodes_per_switch.push_back(json_int(n, where, "nodes", 0, kMaxSwitchPorts));
      }
    } else if (key == "links") {
      if (!v.is_array()) throw UsageError(fmt::format("switch network '{}': field 'links' must be an array of [a, b] pairs", where));
      for (const auto& e : v) {
        if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer())
          throw UsageError(fmt::format("switch network '{}': field 'links' must hold [a, b] pairs of switch numbers", where));
        l.links.emplace_back(json_int(e[0], where, "links", 0, kMaxSwitches - 1),
                             json_int(e[1], where, "links", 0, kMaxSwitches - 1));
      }
    } else if (key == "placement") {
      if (!v.is_array()) throw UsageError(fmt::format("switch network '{}': field 'placement' must be an array (rank -> position)", where));
      for (const auto& n : v) {
        if (!n.is_number_integer()) throw UsageError(fmt::format("switch network '{}': field 'placement' must hold integers", where));
        l.placement.push_back(json_int(n, where, "placement", 0, kMaxSwitchNodes - 1));
      }
    } else {
      throw UsageError(fmt::format("switch network '{}': unknown field '{}' (expected ports, nodes, links, placement)", where, key));
    }
  }
  if (l.nodes_per_switch.empty()) throw UsageError(fmt::format("switch network '{}': missing field 'nodes'", where));
  return l;
}

}  // namespace touchstone
