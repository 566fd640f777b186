// The network's reports (docs/debugging.md): the names of channels, the worms blocked in the network,
// the receive buffers they fill and the cycles they form. Kept apart from network.cpp, whose code
// moves worms: nothing here changes the network's state, and none of it runs while a run goes well
// (only deadlock reports and who-blocked-whom read it).
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "network.hpp"

namespace touchstone::detail {

std::string Network::channel_name(std::uint32_t c) const {
  if (c < links_) return "link " + machine_.topology->link_name(c);
  c -= links_;
  const auto inj_total = static_cast<std::uint32_t>(machine_.nodes() * net_.inj_ports);
  if (c < inj_total) return fmt::format("injection port {} of node {}", c % net_.inj_ports, c / net_.inj_ports);
  c -= inj_total;
  return fmt::format("ejection port {} of node {}", c % net_.ej_ports, c / net_.ej_ports);
}

std::size_t Network::blocked_packets() const {
  std::size_t n = 0;
  for (const auto& c : ch_)
    for (Packet* p = c.wait_head; p; p = p->next_wait) ++n;
  for (const auto& node : nodes_) {
    for (Packet* p = node.ej_wait_head; p; p = p->next_wait) ++n;
    for (Packet* p = node.buf_wait_head; p; p = p->next_wait) ++n;
  }
  return n;
}

std::string Network::describe_blocked() const {
  std::string s;
  auto line = [&](const Packet* p, const std::string& what) {
    s += fmt::format("  packet {} of message #{} ({} -> {}, {} bytes) waits for {}\n", p->index, p->m->id, p->m->src,
                     p->m->dst, p->m->size, what);
  };
  for (std::uint32_t c = 0; c < ch_.size(); ++c)
    for (Packet* p = ch_[c].wait_head; p; p = p->next_wait) line(p, channel_name(c));
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    for (Packet* p = nodes_[n].ej_wait_head; p; p = p->next_wait) line(p, fmt::format("an ejection port of node {}", n));
    for (Packet* p = nodes_[n].buf_wait_head; p; p = p->next_wait)
      line(p, fmt::format("receive-buffer space at node {} ({} of {} bytes in use)", n, nodes_[n].buffer_used,
                          net_.recv_buffer));
  }
  return s;
}

Network::BufferHolders Network::describe_buffer_holders(int node) const {
  // What each blocked header waits for: a channel, or (kNoChannel) a node's ejection port or buffer.
  struct Waiting {
    std::uint32_t channel = kNoChannel;
    int buffer_of = -1;
  };
  std::unordered_map<const Packet*, Waiting> waits;
  for (std::uint32_t c = 0; c < ch_.size(); ++c)
    for (const Packet* p = ch_[c].wait_head; p; p = p->next_wait) waits[p].channel = c;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    for (const Packet* p = nodes_[n].ej_wait_head; p; p = p->next_wait) waits[p];
    for (const Packet* p = nodes_[n].buf_wait_head; p; p = p->next_wait) waits[p].buffer_of = static_cast<int>(n);
  }
  auto worm = [](const Packet* p) {
    return fmt::format("packet {} of message #{} ({} -> {})", p->index, p->m->id, p->m->src, p->m->dst);
  };
  // A message in flight with space reserved: its first blocked packet, the one after those that
  // got through (packets of a message follow each other on one path; a later one may wait behind it).
  std::vector<const Packet*> holders;
  for (const auto& [p, w] : waits)
    if (p->m->buffered && p->m->fan == 1 && p->m->dst == node && w.buffer_of != node) holders.push_back(p);
  std::sort(holders.begin(), holders.end(), [](const Packet* a, const Packet* b) {
    return a->m->id != b->m->id ? a->m->id < b->m->id : a->index < b->index;
  });
  holders.erase(std::unique(holders.begin(), holders.end(), [](const Packet* a, const Packet* b) { return a->m == b->m; }),
                holders.end());
  BufferHolders out;
  std::string& s = out.lines;
  for (const Packet* p : holders) {
    out.bytes += static_cast<std::int64_t>(p->m->size);
    s += fmt::format("    message #{} from {} ({} B reserved; {} of its {} packet(s) in): {}", p->m->id, p->m->src,
                     p->m->size, p->index, p->m->packets, worm(p));
    // Follow the chain of holders: each waits for a channel whose holder's header is blocked too.
    const Packet* cur = p;
    for (std::size_t steps = 0; steps <= waits.size(); ++steps) {
      const auto it = waits.find(cur);
      if (it == waits.end()) break;
      if (it->second.buffer_of >= 0) {
        s += fmt::format(" waits for receive-buffer space at node {}", it->second.buffer_of);
        if (it->second.buffer_of == node) {
          s += ": a cycle through this buffer";
          out.cycle = true;
        }
        break;
      }
      const std::uint32_t c = it->second.channel;
      if (c == kNoChannel) {
        s += " waits for an ejection port";
        break;
      }
      s += " waits for " + channel_name(c);
      const Channel& ch = ch_[c];
      if (ch.release != kNever || !ch.holder) break;
      cur = ch.holder;
      s += " held by " + worm(cur) + ", which";
    }
    s += "\n";
  }
  return out;
}

std::string Network::find_deadlock_cycle() const {
  // Wait-for graph: a channel waited on -> its holder (blocked, release unknown) -> the channel
  // that holder's header waits for. Each blocked worm waits for exactly one link channel, so a
  // cycle is found by walking from every waited channel.
  std::vector<std::uint32_t> waits_for;  // per channel: the channel its holder waits for
  waits_for.assign(ch_.size(), kNoChannel);
  std::vector<const Packet*> holder(ch_.size(), nullptr);
  for (std::uint32_t c = 0; c < ch_.size(); ++c)
    for (Packet* p = ch_[c].wait_head; p; p = p->next_wait) {
      // p waits for c; every channel p holds therefore waits for c.
      // (A forked worm also holds the branch channels of position p->hop taken before p->sub.)
      const Msg* m = p->m;
      for (std::uint32_t i = 0; i <= p->hop && i < positions(*m); ++i)
        for (std::uint32_t k = 0; k < (i < p->hop ? width(*m, i) : p->sub); ++k) {
          const std::uint32_t held = chan(*m, i, k);
          if (ch_[held].release == kNever && ch_[held].holder == p) {
            waits_for[held] = c;
            holder[held] = p;
          }
        }
    }
  std::vector<int> state(ch_.size(), 0);  // 0 new, 1 on current walk, 2 done
  for (std::uint32_t start = 0; start < ch_.size(); ++start) {
    if (waits_for[start] == kNoChannel || state[start]) continue;
    std::vector<std::uint32_t> walk;
    std::uint32_t c = start;
    while (c != kNoChannel && state[c] == 0) {
      state[c] = 1;
      walk.push_back(c);
      c = waits_for[c];
    }
    if (c != kNoChannel && state[c] == 1) {
      std::string s = "network deadlock: a cycle of worms, each holding a channel the next one waits for:\n";
      auto it = std::find(walk.begin(), walk.end(), c);
      for (; it != walk.end(); ++it) {
        const Packet* p = holder[*it];
        s += fmt::format("  message #{} ({} -> {}) holds {} and waits for {}\n", p->m->id, p->m->src, p->m->dst,
                         channel_name(*it), channel_name(waits_for[*it]));
      }
      return s;
    }
    for (auto w : walk) state[w] = 2;
  }
  return {};
}

}  // namespace touchstone::detail
