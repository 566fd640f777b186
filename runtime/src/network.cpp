// The wormhole network (docs/model.md 2.3-2.13 give the formulas).
//
// A worm's path has n = d + 2 positions: injection channel (0), the route's d links (1..d), an
// ejection channel of the destination (d+1). The header takes position i at time s + i*t_hop when
// nothing is in its way; a header that finds its next channel busy waits in that channel's FIFO
// while holding every channel it still occupies. The worm is rigid: its tail trails the header by
// B*b of moving time (B wire bytes, b the bottleneck byte time of the path) and stops while the
// header waits. When the header holds the ejection channel the body streams out: the tail arrives
// at T = t_eject + B*b. So a worm longer than its path frees position i at T - (d+1-i)*t_hop, and
// a short worm (B*b < remaining hops * t_hop) frees positions behind it while its header still
// moves. Contention-free, a message of n_p packets handed to the network at h arrives at
//   h + (d+1)*t_hop + (payload + n_p*header) * b,
// and its packets leave the injection channel B_k*b apart.
#include "network.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "contexts.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

Network::Network(const Machine& machine, EventQueue& q, NetworkListener& l, TraceHash& h, RunStats& s)
    : machine_(machine), net_(machine.net), q_(q), listener_(l), hash_(h), stats_(s) {
  links_ = static_cast<std::uint32_t>(machine.topology->link_channels());
  const auto n = static_cast<std::size_t>(machine.nodes());
  ch_.resize(links_ + n * static_cast<std::size_t>(net_.inj_ports + net_.ej_ports));
  nodes_.resize(n);
  for (auto& node : nodes_) node.inj.resize(static_cast<std::size_t>(net_.inj_ports));
  adaptive_ = machine.topology->adaptive();
  own_link_times_ = false;
  for (std::uint32_t c = 0; c < links_ && !own_link_times_; ++c) own_link_times_ = machine.topology->link_byte_time(c) > 0;
  run_ahead_ = can_run_ahead();
}

Network::~Network() = default;

std::uint32_t Network::inj_channel(int node, int port) const {
  return links_ + static_cast<std::uint32_t>(node * net_.inj_ports + port);
}
std::uint32_t Network::ej_channel(int node, int port) const {
  return links_ + static_cast<std::uint32_t>(machine_.nodes() * net_.inj_ports + node * net_.ej_ports + port);
}

void Network::enqueue(Packet*& head, Packet*& tail, Packet* p) {
  p->next_wait = nullptr;
  if (tail) tail->next_wait = p; else head = p;
  tail = p;
}

Packet* Network::dequeue(Packet*& head, Packet*& tail) {
  Packet* p = head;
  head = p->next_wait;
  if (!head) tail = nullptr;
  p->next_wait = nullptr;
  return p;
}

namespace {

// With several injection channels, a message waits while an earlier one to the same destination
// is still being injected, so a pair's messages arrive in order (non-overtaking). Active messages
// (requests and replies, one packet) and the other messages keep that order each among themselves,
// not with each other: nothing matches an active message against the pair's other messages, and a
// node writes its packets between those of a long message it is streaming (docs/model.md 2.6).
// Among themselves they must: MPI orders a pair's accumulates, and they are active messages.
// The injecting message is given by what the rule reads of it: a leaving port keeps only that.
bool is_am(const Msg& m) { return detail::is_am_request(m.ctx) || detail::is_am_reply(m.ctx); }
bool keeps_order_behind(int injecting_dst, bool injecting_am, const Msg& waiting) {
  return injecting_dst == waiting.dst && injecting_am == is_am(waiting);
}

}  // namespace

std::uint64_t Network::draw(std::uint64_t x) const {
  std::uint64_t z = seed_ * 0x9e3779b97f4a7c15ULL + x;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Arbitration (docs/model.md 2.13): a switch's output port picks one of the headers that wait for
// it. fifo keeps arrival order; random is a seeded draw of (seed, output, time); round-robin takes
// the waiting header whose input channel (the one it holds, where it waits) follows, in channel
// order, the input granted last, so no input can be passed over more than once per round.
Packet* Network::arbitrate(Packet*& head, Packet*& tail, std::uint32_t& last_in, std::uint64_t out, Time t) {
  if (net_.arbitration == Arbitration::fifo || head == tail) {
    if (net_.arbitration == Arbitration::round_robin) last_in = input_channel(head);
    return dequeue(head, tail);
  }
  Packet* pick = head;
  if (net_.arbitration == Arbitration::random) {
    // A seeded random input: headers that came in over the same input channel keep their order.
    // (Worms no longer than a hop free their input channel while they wait, so one input can have
    // several headers here, among them later packets of the same message, which must not overtake.)
    auto first_of_input = [&](const Packet* p) {
      for (const Packet* q = head; q != p; q = q->next_wait)
        if (input_channel(q) == input_channel(p)) return false;
      return true;
    };
    std::uint64_t n = 0;
    for (Packet* p = head; p; p = p->next_wait) n += first_of_input(p);
    std::uint64_t k = draw(out * 0x100000001b3ULL ^ static_cast<std::uint64_t>(t)) % n;
    for (;; pick = pick->next_wait)
      if (first_of_input(pick) && k-- == 0) break;
  } else {
    // The smallest distance (in - last_in - 1) mod 2^32 is the next input after last_in.
    for (Packet* p = head->next_wait; p; p = p->next_wait)
      if (input_channel(p) - last_in - 1 < input_channel(pick) - last_in - 1) pick = p;
    last_in = input_channel(pick);
  }
  Packet* prev = nullptr;
  for (Packet* p = head; p != pick; p = p->next_wait) prev = p;
  if (!prev) return dequeue(head, tail);
  prev->next_wait = pick->next_wait;
  if (tail == pick) tail = prev;
  pick->next_wait = nullptr;
  return pick;
}

void Network::post(Msg* m, Time t) {
  if (m->branch.empty()) {
    // The route is laid out when the message takes its injection port (lay_out): a root that posts
    // a message to each of 262,144 nodes at once held a route of up to a thousand links for each of
    // them meanwhile, most of a scatter's memory, and in every process of a split run.
    m->path.clear();
  } else {
    lay_out(m);  // a forked worm's tree was planned at the send (plan_multicast)
  }
  m->packets = static_cast<std::uint32_t>(net_.packets(m->size));
  m->handed = t;
  if (adaptive_) {
    PairRoute& pr = pair_routes_[static_cast<std::uint64_t>(m->src) << 32 | static_cast<std::uint32_t>(m->dst)];
    if (!pr.links) pr.links = std::make_shared<std::vector<std::uint32_t>>();  // the first in flight
    ++pr.inflight;
    m->route = pr.links;
  }
  q_.push(t, m->id, Ev::inject, m);
}

void Network::lay_out(Msg* m) {
  const auto& topo = *machine_.topology;
  if (m->branch.empty()) {
    // A pooled message keeps its path's capacity (Engine::new_msg); a fresh one gets room for a
    // typical route at once rather than growing one link at a time.
    m->path.reserve(16);
    m->path.push_back(kNoChannel);  // the injection port: try_start_messages names it
    topo.route(m->src, m->dst, m->path);
  }
  m->byte_time = std::max(net_.inject_byte_time, net_.eject_byte_time);
  // The body streams at the slowest channel of the path (docs/model.md 2.3), of the whole tree for a forked worm.
  if (!own_link_times_) {
    if (m->path.size() > 1) m->byte_time = std::max(m->byte_time, net_.link_byte_time);
  } else {
    for (std::size_t i = 1; i < m->path.size(); ++i) {
      const Time own = topo.link_byte_time(m->path[i]);
      m->byte_time = std::max(m->byte_time, own > 0 ? own : net_.link_byte_time);
    }
  }
  m->positions = m->trunk + (static_cast<std::uint32_t>(m->path.size()) - m->trunk) / m->fan;
}

void Network::post_sent_at(Msg* m, Time t, Time sent) {
  if (adaptive_) {
    const auto key = static_cast<std::uint64_t>(m->src) << 32 | static_cast<std::uint32_t>(m->dst);
    // The pair's route ended after the turn that sent m (its last message arrived later than that):
    // m, handed over at its turn, would have kept it in flight.
    if (auto ended = ended_routes_.find(key);
        ended != ended_routes_.end() && ended->second.at > sent && !pair_routes_.contains(key))
      pair_routes_[key] = PairRoute{ended->second.links, 0};
  }
  post(m, t);
}

bool Network::in_order_way(const InjPort& p, const Msg& waiting) const {
  if (p.cur) return keeps_order_behind(p.cur->dst, is_am(*p.cur), waiting);
  return p.leaves != kNever && keeps_order_behind(p.leaving_dst, p.leaving_am, waiting);
}

// The port_next events of the ports whose release is known come before (t, order): the ports
// those events would have freed are idle.
void Network::idle_ports(int node_id, Time t, std::uint64_t order) {
  for (InjPort& p : nodes_[static_cast<std::size_t>(node_id)].inj) {
    if (p.leaves == kNever || p.leaves > t || (p.leaves == t && p.leaving_id > order)) continue;
    p.freed = p.leaves;
    p.leaves = kNever;
    p.next_queued = false;
  }
}

void Network::queue_port_next(int node_id, std::size_t port) {
  InjPort& p = nodes_[static_cast<std::size_t>(node_id)].inj[port];
  if (p.leaves == kNever || p.next_queued) return;
  p.next_queued = true;
  q_.push(p.leaves, p.leaving_id, Ev::port_next, nullptr, static_cast<std::uint64_t>(node_id) << 8 | port);
}

void Network::try_start_messages(int node_id, Time t) {
  Node& node = nodes_[static_cast<std::size_t>(node_id)];
  for (std::size_t port = 0; port < node.inj.size() && node.queue_head; ++port) {
    if (node.inj[port].cur || node.inj[port].leaves != kNever) continue;
    // Messages to one destination leave in order (keeps_order_behind).
    Msg* prev = nullptr;
    Msg* m = node.queue_head;
    for (; m; prev = m, m = m->next) {
      bool busy = false;
      for (const auto& p : node.inj) busy |= in_order_way(p, *m);
      if (!busy) break;
    }
    if (!m) return;
    (prev ? prev->next : node.queue_head) = m->next;
    if (node.queue_tail == m) node.queue_tail = prev;
    m->next = nullptr;
    node.inj[port].cur = m;
    if (m->branch.empty()) lay_out(m);
    m->path[0] = inj_channel(node_id, static_cast<int>(port));
    if (observer_) observer_->on_grant(*m, 0, t);
    start_packet(m, interface_ready(node.inj[port], node_id, t));
  }
}

// A message handed to the network at t found no injection port it may take (all busy, or one
// is injecting an earlier message to the same destination, which it may not overtake).
void Network::injection_wait(const Msg& m, Time t) {
  const Node& node = nodes_[static_cast<std::size_t>(m.src)];
  std::size_t in_way = 0;
  for (std::size_t p = 0; p < node.inj.size(); ++p) {
    const std::uint32_t c = inj_channel(m.src, static_cast<int>(p)), best = inj_channel(m.src, static_cast<int>(in_way));
    if (in_order_way(node.inj[p], m)) {
      in_way = p;
      break;
    }
    if (ch_[c].release < ch_[best].release) in_way = p;
  }
  Wait w{Wait::For::injection_port, static_cast<std::uint32_t>(m.src), &m, 0};
  w.t = t;
  w.blocker_channel = inj_channel(m.src, static_cast<int>(in_way));
  if (const HeldBy& held = held_[w.blocker_channel]; held.msg) {
    w.blocker = held.msg;
    // The message's next packet may have taken the port ahead, from when the one on it now leaves.
    w.blocker_packet = held.packet - (held.since > t && held.packet > 0 ? 1 : 0);
  }
  observer_->on_wait(w);
}

// Network-interface set-up (docs/model.md 2.17): the interface holds one outgoing message per port,
// so the part of the send set-up that writes a message into it (ni_setup) starts only when the
// port's previous message has left. A message taking a port at t therefore starts no earlier than
// ni_setup after that; on a port idle for at least ni_setup it starts at t, as without the rule.
Time Network::interface_ready(const InjPort& port, int node, Time t) const {
  const Time setup = machine_.costs_of(node).ni_setup;
  if (setup == 0 || port.freed == kNever) return t;
  return std::max(t, port.freed + setup);
}

void Network::start_packet(Msg* m, Time t) {
  Packet* pk = packets_.get();
  std::vector<Packet::Covered> covered = std::move(pk->covered);  // its capacity serves again
  *pk = Packet{};
  pk->covered = std::move(covered);  // emptied where it is first used (move_on)
  pk->m = m;
  pk->index = m->next_packet++;
  pk->tag = ++tags_;
  if (m->send_base != kNever) {
    // Send overlap: the sender's CPU may not have written this packet yet; the injection port stays
    // the message's meanwhile (docs/model.md 2.15).
    const NodeCosts& c = machine_.costs_of(m->src);
    const auto k = static_cast<Time>(pk->index) + 1;
    const auto bytes = std::min<Time>(static_cast<Time>(m->size), k * net_.packet_payload);
    t = std::max(t, m->send_base + k * c.send_per_packet + bytes * c.send_per_byte);
  }
  const auto payload = static_cast<std::size_t>(net_.packet_payload);
  const std::size_t first = static_cast<std::size_t>(pk->index) * payload;
  const std::size_t body = m->size > first ? std::min(payload, m->size - first) : 0;
  pk->wire = static_cast<std::uint32_t>(body + static_cast<std::size_t>(net_.packet_header));
  // Once per packet, not per hop: a division was a measurable part of every header move.
  pk->body = static_cast<Time>(pk->wire) * m->byte_time;
  if (net_.hop_time > 0) pk->lag = (pk->body + net_.hop_time - 1) / net_.hop_time;
  // The injection port belongs to this message until its last packet has left, so it is free.
  hold(m->path[0], pk, t);
  hash_.add(m->id << 20 | pk->index, m->path[0], static_cast<std::uint64_t>(t));
  pk->hop = 1;
  move_on(pk, 0, t);
}

// The header has just taken path position j at time t and will move for t_hop before it can be
// stopped again, so the tail's progress over the next t_hop is certain: free the one position the
// tail leaves in that interval. (With t_hop == 0 the tail never leaves a position before the
// header reaches the ejection channel, and stream() frees everything.)
void Network::tail_follows(Packet* pk, std::uint32_t j, Time t) {
  const Time hop = net_.hop_time, body = pk->body;
  if (hop == 0) return;
  if (body == 0) return free_position(pk, j, t);  // a worm of no length frees what it takes
  const Time i = static_cast<Time>(j) + 1 - pk->lag;
  if (i >= 0) free_position(pk, static_cast<std::uint32_t>(i), t + body - (pk->lag - 1) * hop);
}

// The tail leaves path position i at time r. Every take of a link ends here, so the usual case,
// a link of an ordinary worm, is kept apart from the rest: inlined, it costs no call.
void Network::free_position(Packet* pk, std::uint32_t i, Time r) {
  if (pk->m->fan == 1 && i != 0) [[likely]]
    return set_release(pk->m->path[i], r);
  free_position_or_port(pk, i, r);
}

// free_position's other cases: a forked worm's position, and the injection channel.
void Network::free_position_or_port(Packet* pk, std::uint32_t i, Time r) {
  Msg* m = pk->m;
  if (m->fan == 1) {
    set_release(m->path[i], r);
  } else {
    for (std::uint32_t k = 0; k < width(*m, i); ++k) set_release(chan(*m, i, k), r);
  }
  if (i != 0) return;
  if (pk->index + 1 < m->packets) {
    // The port belongs to this message, so its next packet starts the moment this tail has left.
    start_packet(m, r);
    return;
  }
  // The port frees for the node's next message at r, by the event port_next. With an observer,
  // which is told every event as the model states it, the port is m's until that event. Otherwise
  // most often no message waits by then (a program sends again after its send completed), so the
  // event is queued only for one that waits (queue_port_next), and meanwhile the port is leaving:
  // idle for every later event (idle_ports). It keeps what it needs of m, which with t_hop == 0
  // can arrive, be received and be freed at r. (Tests compare the two.)
  const auto port = static_cast<std::size_t>(m->path[0] - inj_channel(m->src, 0));
  Node& node = nodes_[static_cast<std::size_t>(m->src)];
  if (observer_) {
    q_.push(r, m->id, Ev::port_next, nullptr, static_cast<std::uint64_t>(m->src) << 8 | port);
  } else {
    InjPort& p = node.inj[port];
    p.cur = nullptr;
    p.leaves = r;
    p.leaving_id = m->id;
    p.leaving_dst = m->dst;
    p.leaving_am = is_am(*m);
    p.next_queued = false;
    if (node.queue_head) queue_port_next(m->src, port);
  }
  listener_.on_send_done(*m, r);
}

// Adaptive routing (paper 004, section 2.3; docs/model.md 2.10). The first packet of a message
// picks the link at each hop when its header gets there: among the legal minimal output channels
// (the switch's forwarding table) that are free, a seeded random one; if none is free, the one
// that frees first (known release time, else the first in the table) and it waits there. Later
// packets of the message, and later messages of the same pair while earlier ones are in flight,
// follow the same channels, so messages between one pair never overtake each other.
void Network::choose_channel(Packet* pk, Time t) {
  Msg* m = pk->m;
  const std::size_t k = pk->hop - 1;  // index among the route's links
  auto& chosen = *m->route;
  if (k < chosen.size()) {
    m->path[pk->hop] = chosen[k];
    return;
  }
  candidates_.clear();
  machine_.topology->next_channels(m->src, m->dst, pk->hop >= 2 ? m->path[pk->hop - 1] : kNoLink, candidates_);
  std::uint32_t pick = m->path[pk->hop];
  if (!candidates_.empty()) {
    std::uint32_t free_count = 0;
    for (auto c : candidates_) free_count += ch_[c].release <= t && !ch_[c].wait_head;
    if (free_count > 0) {
      auto nth = static_cast<std::uint32_t>(draw((m->id << 8) + pk->hop) % free_count);
      for (auto c : candidates_)
        if (ch_[c].release <= t && !ch_[c].wait_head && nth-- == 0) {
          pick = c;
          break;
        }
    } else {
      pick = candidates_.front();
      for (auto c : candidates_)
        if (ch_[c].release < ch_[pick].release) pick = c;
    }
  }
  m->path[pk->hop] = pick;
  chosen.push_back(pick);
}

// Tells the observer that a header starts waiting at t for what `w` names: `w`'s blocker, or when
// it names none, the header queued ahead of it (`ahead`), which waits for the same thing.
void Network::report_wait(Wait w, const Packet* ahead, Time t) {
  w.t = t;
  if (!w.blocker && ahead) {
    w.blocker = ahead->m;
    w.blocker_packet = ahead->index;
    w.blocker_holds = false;
  }
  observer_->on_wait(w);
}

// Packet pk's header joins the queue (head, tail) of headers waiting at t.
void Network::start_waiting(Packet*& head, Packet*& tail, Packet* pk, Time t) {
  enqueue(head, tail, pk);
  pk->wait_since = t;
  ++stats_.blocked_headers;
}

void Network::advance(Packet* pk, Time t) {
  if (pk->hop == positions(*pk->m)) return want_ejection(pk, t);
  if (adaptive_ && pk->index == 0 && pk->hop >= 1) choose_channel(pk, t);
  const std::uint32_t c = pk->m->fan == 1 ? pk->m->path[pk->hop] : chan(*pk->m, pk->hop, pk->sub);
  Channel& ch = ch_[c];
  // Taken ahead of time by a header that gets there after this one: it gives the channel back, and
  // so does the one whose take that uncovers, if it gets there after this one too.
  while (ch.ahead >= t && ch.ahead != 0 && ch.holder != pk && (ch.ahead > t || ch.holder->m->id > pk->m->id))
    give_back(ch.holder, ch.ahead);
  if (ch.release <= t && !ch.wait_head) {
    hold(c, pk, t);
    return took(pk, c, t);
  }
  if (observer_) {
    // The worm in the way: the one whose tail has not left yet (its Packet may already be back in
    // the pool, even reused by pk itself: held_ names it), else the header queued ahead.
    Wait w{Wait::For::channel, c, pk->m, pk->index};
    w.blocker_channel = c;
    if (ch.release > t && held_[c].msg) {
      w.blocker = held_[c].msg;
      w.blocker_packet = held_[c].packet;
    }
    report_wait(w, ch.wait_head, t);
  }
  start_waiting(ch.wait_head, ch.wait_tail, pk, t);
  // A forked worm blocks as in wormhole: its branches move in lock-step (docs/model.md 2.11).
  if (net_.switching == Switching::cut_through && pk->m->fan == 1) drain(pk, t);
  if (!ch.grant_pending && ch.release != kNever) {
    ch.grant_pending = true;
    q_.push(ch.release, ch.wait_head->m->id, Ev::grant, nullptr, c);
  }
}

// Cut-through (docs/model.md 2.9): the header waits at the end of position h-1 (a switch input);
// a worm that fits in the router buffer keeps streaming into it, so the tail leaves every position
// i < h-1 at t + B*b - (h-1-i)*t_hop, as if the header had kept moving. Only worms at least as long
// as their path drain (the others free positions while moving, section 2.3); the buffer's channel
// h-1 stays held until the tail leaves it after the header moves on.
void Network::drain(Packet* pk, Time t) {
  const Time hop = net_.hop_time, body = pk->body;
  const auto n = static_cast<Time>(positions(*pk->m) + 1);
  if (pk->hop < 2 || static_cast<std::int64_t>(pk->wire) > net_.router_buffer) return;
  if (hop > 0 && body < n * hop) return;
  const std::uint32_t h = pk->hop;
  for (std::uint32_t i = pk->base; i + 1 < h; ++i)
    free_position(pk, i, std::max(t, t + body - static_cast<Time>(h - 1 - i) * hop));
  pk->base = h - 1;
}

// A forked worm's header takes the channels of a branch position one after another at the same
// instant (lock-step replication: it moves on only when it holds all of them, and waits for a busy
// one holding the others and everything behind).
void Network::took(Packet* pk, std::uint32_t c, Time t) {
  pk->trail += TraceHash::term(c, t);
  if (pk->m->fan > 1) {
    if (++pk->sub < width(*pk->m, pk->hop)) return advance(pk, t);
    pk->sub = 0;
  }
  move_on(pk, pk->hop++, t);
}

// The header has just taken position j at t (now, or later for a packet that starts when the one
// ahead of it has left the injection channel): its tail follows, and it goes on to position j + 1.
//
// Run-ahead: a header event per hop is most of the events of a run, and most hops find their
// channel free. So the header goes on, in this same event, over the next positions k that it
// would find free at t + (k-j)*t_hop and that no header waits for, and the one event left is for
// the first position it cannot take so (or the ejection channel). A position qualifies when its
// channel is free now, or when the tail now on it leaves by then, even where that release was
// scheduled by a take made ahead itself (a worm following another, as the messages converging on
// one node do). Such a take is exact unless another header wants the channel before this one gets
// there (or at the same time with a smaller message id: the order of events, docs/model.md 1.3):
// that header's event comes first in virtual time and finds the channel marked (`ahead`), and
// give_back undoes this header's takes from that position on, restoring what each take found on
// its channel. Every later effect of a take is either undone there or is the one the take would
// have had: a free channel's next holder takes it through advance, which checks the mark; the tail
// releases a take made ahead schedules lie after the take's time, so no event has used them when
// they are undone, and a header that took a channel ahead on such a release gives that take back
// first (uncover), and so on down a line of worms; a grant waiting for such a release finds it
// moved and waits again. The takes that would free the injection channel (and with it start the
// next packet or complete the send) are never taken ahead, nor are forked worms', adaptive routes'
// (the choice depends on the state at the hop's time) or any take an observer is told about.
void Network::move_on(Packet* pk, std::uint32_t j, Time t) {
  const Time hop = net_.hop_time;
  Time at = t + hop;
  if (!run_ahead_ || pk->m->fan > 1 || !free_ahead(pk, pk->hop, at)) {
    q_.push(at, pk->m->id, Ev::header, pk, pk->tag);
    return tail_follows(pk, j, t);
  }
  pk->ahead_from = pk->hop;
  pk->ahead_at = at;
  pk->covered.clear();  // the takes of its last run-ahead lie before t: no one gives them back
  // Position j + 1 is taken before the tail moves: when that frees the injection channel, the
  // message's next packet starts now and must find it taken.
  take_ahead(pk, at);
  tail_follows(pk, j, t);
  tail_follows(pk, pk->hop++, at);
  while (free_ahead(pk, pk->hop, at + hop)) {
    at += hop;
    take_ahead(pk, at);
    tail_follows(pk, pk->hop++, at);
  }
  q_.push(at + hop, pk->m->id, Ev::header, pk, pk->tag);
}

// pk's header takes position pk->hop ahead of time: it will get there at `at`.
void Network::take_ahead(Packet* pk, Time at) {
  const std::uint32_t c = pk->m->path[pk->hop];
  Channel& ch = ch_[c];
  // Another header's take ahead, which may still be given back itself (now or later).
  if (ch.ahead >= now_ && ch.ahead != 0) [[unlikely]] cover(pk, ch);
  ch.before_release = ch.release;
  ch.before_holder = ch.holder;
  hold(c, pk, at);
  ch.ahead = at;
  pk->trail += TraceHash::term(c, at);
}

void Network::cover(Packet* pk, const Channel& ch) {
  pk->covered.push_back(Packet::Covered{pk->hop, ch.ahead, ch.before_release, ch.before_holder});
}

bool Network::can_run_ahead() const { return !observer_ && !adaptive_ && net_.hop_time > 0; }

// Position k of pk's path can be taken ahead by a header that gets there at `at`: a link whose
// channel is free by then (its release no later than `at`), that no header waits for, and
// whose take does not free the injection channel (tail_follows frees position k + 1 - lag: none
// while the worm is longer than the path behind its header, a link after that).
bool Network::free_ahead(const Packet* pk, std::uint32_t k, Time at) const {
  if (k >= positions(*pk->m) || static_cast<Time>(k) + 1 == pk->lag || pk->body == 0) return false;
  const Channel& ch = ch_[pk->m->path[k]];
  return !ch.wait_head && ch.release <= at;
}

// A header wants, before pk's header gets there at `at`, the channel of a position pk took ahead of
// time: pk gives that position and every later one back, undoes what those takes scheduled, and
// its header goes there as an ordinary event.
// The takes are undone latest first, so that each channel gets back what its take found there.
void Network::give_back(Packet* pk, Time at) {
  const Time hop = net_.hop_time;
  const Msg& m = *pk->m;
  const auto b = pk->ahead_from + static_cast<std::uint32_t>((at - pk->ahead_at) / hop);
  for (std::uint32_t k = pk->hop; k-- > b;) {
    // The tail does not leave the position this take freed, unless it is given back itself.
    const Time i = static_cast<Time>(k) + 1 - pk->lag;
    if (i >= 0 && i < static_cast<Time>(b)) {
      const std::uint32_t c = m.path[static_cast<std::size_t>(i)];
      uncover(c, pk);
      set_release_time(c, kNever);
    }
    const std::uint32_t c = m.path[k];
    const Time when = pk->ahead_at + static_cast<Time>(k - pk->ahead_from) * hop;
    uncover(c, pk);
    Channel& ch = ch_[c];
    set_release_time(c, ch.before_release);
    ch.holder = ch.before_holder;
    ch.ahead = 0;
    if (!pk->covered.empty() && pk->covered.back().position == k) {
      const Packet::Covered& under = pk->covered.back();
      ch.ahead = under.ahead;
      ch.before_release = under.before_release;
      ch.before_holder = under.before_holder;
      pk->covered.pop_back();
    }
    pk->trail -= TraceHash::term(c, when);
  }
  pk->hop = b;
  pk->tag = ++tags_;  // the event at the end of the run-ahead is superseded
  q_.push(at, m.id, Ev::header, pk, pk->tag);
}

// Channel c is pk's, under the takes other headers made ahead of time on the release of pk's tail
// (a line of worms following each other): those go back, latest first, until pk's take is on top.
// Each lies after now, as the release it rests on does, so its header goes there as an event.
void Network::uncover(std::uint32_t c, const Packet* pk) {
  Channel& ch = ch_[c];
  while (ch.holder != pk) give_back(ch.holder, ch.ahead);
}

void Network::grant(std::uint32_t c, Time t) {
  Channel& ch = ch_[c];
  ch.grant_pending = false;
  if (ch.release > t) {
    // The tail release this grant was for was given back (give_back): wait for the new one.
    if (ch.release != kNever) {
      ch.grant_pending = true;
      q_.push(ch.release, ch.wait_head->m->id, Ev::grant, nullptr, c);
    }
    return;
  }
  Packet* pk = arbitrate(ch.wait_head, ch.wait_tail, ch.last_in, c, t);
  stats_.blocked_time += t - pk->wait_since;
  if (observer_) observer_->on_grant(*pk->m, pk->index, t);
  hold(c, pk, t);
  took(pk, c, t);
}

void Network::want_ejection(Packet* pk, Time t) {
  const int dst = pk->m->dst;
  Node& node = nodes_[static_cast<std::size_t>(dst)];
  // (A forked worm never meets bounded receive buffers: Proc::multicast refuses them.)
  // (Under flow control the sender reserved the space, or the message needs none: 2.16.)
  if (pk->index == 0 && net_.recv_buffer >= 0 && pk->m->fan == 1 && !net_.flow_control()) {
    if (node.buf_wait_head || !buffer_admits(node, *pk->m)) {
      // No room for the message: the worm waits in front of the ejection channel, holding its
      // path, while the ejection channel stays free for messages already admitted.
      if (observer_) {
        report_wait(Wait{Wait::For::buffer, static_cast<std::uint32_t>(dst), pk->m, pk->index}, node.buf_wait_head, t);
      }
      start_waiting(node.buf_wait_head, node.buf_wait_tail, pk, t);
      return;
    }
    node.buffer_used += static_cast<std::int64_t>(pk->m->size);
    pk->m->buffered = true;
  }
  want_ejection_port(pk, t);
}

void Network::want_ejection_port(Packet* pk, Time t) {
  const int dst = dst_of(pk);
  Node& node = nodes_[static_cast<std::size_t>(dst)];
  if (!node.ej_wait_head) {
    for (int port = 0; port < net_.ej_ports; ++port)
      if (ch_[ej_channel(dst, port)].release <= t) return got_ejection(pk, port, t);
  }
  if (observer_) {
    // In the way: the header queued ahead, else the holder of the port that frees first.
    Wait w{Wait::For::ejection_port, static_cast<std::uint32_t>(dst), pk->m, pk->index};
    std::uint32_t first = ej_channel(dst, 0);
    for (int port = 1; port < net_.ej_ports; ++port)
      if (ch_[ej_channel(dst, port)].release < ch_[first].release) first = ej_channel(dst, port);
    w.blocker_channel = first;
    if (!node.ej_wait_head && held_[first].msg) {
      w.blocker = held_[first].msg;
      w.blocker_packet = held_[first].packet;
    }
    report_wait(w, node.ej_wait_head, t);
  }
  start_waiting(node.ej_wait_head, node.ej_wait_tail, pk, t);
  ej_grant(dst, kNever);  // schedules the next grant if a port's release time is known
}

// Admits waiting headers to free ejection ports at time t (t == kNever: only reschedule).
void Network::ej_grant(int dst, Time t) {
  Node& node = nodes_[static_cast<std::size_t>(dst)];
  if (t != kNever && t == node.ej_grant_at) node.ej_grant_at = kNever;
  while (node.ej_wait_head && t != kNever) {
    int port = 0;
    while (port < net_.ej_ports && ch_[ej_channel(dst, port)].release > t) ++port;
    if (port == net_.ej_ports) break;
    Packet* pk = arbitrate(node.ej_wait_head, node.ej_wait_tail, node.ej_last_in, ej_channel(dst, 0), t);
    stats_.blocked_time += t - pk->wait_since;
    if (observer_) observer_->on_grant(*pk->m, pk->index, t);
    got_ejection(pk, port, t);
  }
  if (!node.ej_wait_head) return;
  Time next = kNever;
  for (int port = 0; port < net_.ej_ports; ++port) next = std::min(next, ch_[ej_channel(dst, port)].release);
  if (next >= node.ej_grant_at) return;
  node.ej_grant_at = next;
  q_.push(next, node.ej_wait_head->m->id, Ev::ej_grant, nullptr, static_cast<std::uint64_t>(dst));
}

bool Network::buffer_admits(const Node& n, const Msg& m) const {
  if (net_.recv_buffer < 0) return true;
  // A message larger than the whole buffer is admitted alone, so that it cannot wait forever.
  return n.buffer_used == 0 || n.buffer_used + static_cast<std::int64_t>(m.size) <= net_.recv_buffer;
}

void Network::got_ejection(Packet* pk, int port, Time t) {
  pk->ej = ej_channel(dst_of(pk), port);
  hold(pk->ej, pk, t);
  hash_.add(pk->m->id << 20 | pk->index, pk->ej, static_cast<std::uint64_t>(t));
  Msg* m = pk->m;
  if (m->fan > 1) {
    // The forked worm's header must hold every branch's ejection channel before the body streams.
    m->branch_ej[pk->sub] = pk->ej;
    if (++pk->sub < m->fan) return want_ejection_port(pk, t);
    pk->sub = 0;
  }
  stream(pk, t);
}

void Network::hold(std::uint32_t c, Packet* pk, Time t) {
  Channel& ch = ch_[c];
  if (observer_) {  // who held it before: the observer's business only
    observer_->on_take(c, *pk->m, pk->index, t);
    held_[c] = HeldBy{pk->m, pk->index, t};
  }
  set_release_time(c, kNever);
  ch.holder = pk;
  ch.ahead = 0;
}

void Network::note_release(std::uint32_t c) {
  releases_noted_.push_back(ReleaseNoted{*release_place_, c, ch_[c].release});
}

void Network::releases_back_to(Stamp failure) {
  for (; !releases_noted_.empty() && failure < releases_noted_.back().at; releases_noted_.pop_back())
    ch_[releases_noted_.back().channel].release = releases_noted_.back().before;
  releases_noted_.clear();
  release_place_ = nullptr;
}

void Network::set_release(std::uint32_t c, Time r) {
  Channel& ch = ch_[c];
  set_release_time(c, r);
  if (ch.wait_head && !ch.grant_pending) {
    ch.grant_pending = true;
    q_.push(r, ch.wait_head->m->id, Ev::grant, nullptr, c);
  }
}

void Network::stream(Packet* pk, Time t) {
  Msg* m = pk->m;
  const Time hop = net_.hop_time, body = pk->body;
  const Time tail = t + body;
  const auto n = static_cast<Time>(positions(*m) + 1);  // positions, the ejection channel(s) last
  // Positions the tail has not left yet (tail_follows freed the others on the way).
  Time first = 0;
  if (hop > 0) first = body == 0 ? n - 1 : std::max<Time>(0, n - (body + hop - 1) / hop);
  first = std::max<Time>(first, pk->base);
  const bool last = pk->index + 1 == m->packets;
  hash_.add(m->id << 20 | pk->index, pk->trail, static_cast<std::uint64_t>(tail));
  ++stats_.packets;
  // The receive-overlap pipeline (docs/model.md 2.15): each packet's receive work once it is in.
  const auto payload = static_cast<Time>(pk->wire) - net_.packet_header;
  for (std::uint32_t k = 0; k < m->fan; ++k) {
    Msg* b = m->fan == 1 ? m : m->branch[k];
    const NodeCosts& c = machine_.costs_of(b->dst);
    b->drained = std::max(b->drained, tail) + c.recv_per_packet + payload * c.recv_per_byte;
    if (c.demux_per_packet) {  // docs/model.md 2.18
      std::uint64_t& last = nodes_[static_cast<std::size_t>(b->dst)].last_taken;
      if (pk->index > 0 && last != b->id) listener_.on_packet_resumed(*b, t);
      last = b->id;
    }
  }
  if (m->fan == 1) {
    set_release_time(pk->ej, tail);
    ej_grant(m->dst, kNever);
  } else {
    // Every branch streams the same body at the tree's bottleneck: all tails arrive together.
    for (std::uint32_t k = 0; k < m->fan; ++k) {
      set_release_time(m->branch_ej[k], tail);
      ej_grant(m->branch[k]->dst, kNever);
    }
  }
  Time i = first;
  if (m->fan == 1) {
    // A worm longer than its path (every short message on the generic mesh) frees all of it here:
    // the injection channel first, as free_position would, then the links in a plain loop.
    if (i == 0 && n > 1) {
      free_position_or_port(pk, 0, tail - (n - 1) * hop);
      i = 1;
    }
    const std::uint32_t* path = m->path.data();
    for (; i < n - 1; ++i) set_release(path[i], tail - (n - 1 - i) * hop);
  }
  for (; i < n - 1; ++i) free_position(pk, static_cast<std::uint32_t>(i), tail - (n - 1 - i) * hop);
  packets_.put(pk);
  if (!last) return;
  if (m->fan == 1) return q_.push(tail, m->id, Ev::arrive, m);
  // Each branch delivers its own ordinary message, exactly once: one arrival event each (an event
  // wakes at most one VP).
  for (Msg* b : m->branch) q_.push(tail, b->id, Ev::arrive, b);
}

bool Network::release_buffer(const Msg& m, Time t) {
  if (!m.buffered) return false;
  free_buffer_at(m.dst, m.size, t);
  return true;
}

void Network::free_buffer_at(int node, std::uint64_t bytes, Time t) {
  q_.push(t, vp_order(node), Ev::buffer_free, nullptr, bytes << 24 | static_cast<std::uint64_t>(node));
}

void Network::buffer_freed(int dst, Time t) {
  Node& node = nodes_[static_cast<std::size_t>(dst)];
  while (node.buf_wait_head && buffer_admits(node, *node.buf_wait_head->m)) {
    Packet* pk = dequeue(node.buf_wait_head, node.buf_wait_tail);
    stats_.blocked_time += t - pk->wait_since;
    if (observer_) observer_->on_grant(*pk->m, pk->index, t);
    node.buffer_used += static_cast<std::int64_t>(pk->m->size);
    pk->m->buffered = true;
    want_ejection_port(pk, t);
  }
}

bool Network::reserve_buffer(int node, std::size_t bytes) {
  if (net_.recv_buffer < 0) return true;
  Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.buffer_used + static_cast<std::int64_t>(bytes) > net_.recv_buffer) return false;
  n.buffer_used += static_cast<std::int64_t>(bytes);
  return true;
}

std::vector<bool> Network::reserve_between_frees(std::span<const Reservation> asked) {
  for (const Freed& f : window_frees_) nodes_[static_cast<std::size_t>(f.node)].buffer_used += f.bytes;
  std::size_t made = 0;
  const auto free_up_to = [&](std::size_t n) {
    for (; made < std::min(n, window_frees_.size()); ++made)
      nodes_[static_cast<std::size_t>(window_frees_[made].node)].buffer_used -= window_frees_[made].bytes;
  };
  std::vector<bool> fitted;
  fitted.reserve(asked.size());
  for (const Reservation& r : asked) {
    free_up_to(r.frees_before);
    fitted.push_back(reserve_buffer(r.node, r.bytes));
  }
  free_up_to(window_frees_.size());
  return fitted;
}

void Network::handle(const Event& e) {
  now_ = e.t;
  switch (e.kind()) {
    case Ev::inject: {
      Msg* m = static_cast<Msg*>(e.p);
      Node& node = nodes_[static_cast<std::size_t>(m->src)];
      m->next = nullptr;
      if (node.queue_tail) node.queue_tail->next = m; else node.queue_head = m;
      node.queue_tail = m;
      idle_ports(m->src, e.t, e.order);
      try_start_messages(m->src, e.t);
      if (m->path.empty() || m->path[0] == kNoChannel) {  // it waits: the ports that free will start it
        for (std::size_t port = 0; port < node.inj.size(); ++port) queue_port_next(m->src, port);
        if (observer_) injection_wait(*m, e.t);
      }
      break;
    }
    case Ev::header: {
      auto* pk = static_cast<Packet*>(e.p);
      if (e.a == pk->tag) advance(pk, e.t);  // else superseded (give_back)
      break;
    }
    case Ev::port_next: {
      const int src = static_cast<int>(e.a >> 8);
      InjPort& port = nodes_[static_cast<std::size_t>(src)].inj[static_cast<std::size_t>(e.a & 0xff)];
      if (port.cur) {  // an observer's: the port was its message's until now
        port.cur = nullptr;
        port.freed = e.t;
      }
      idle_ports(src, e.t, e.order);  // else this event's port among them
      try_start_messages(src, e.t);
      break;
    }
    case Ev::grant: grant(static_cast<std::uint32_t>(e.a), e.t); break;
    case Ev::ej_grant: ej_grant(static_cast<int>(e.a), e.t); break;
    case Ev::buffer_free: {
      const int node = static_cast<int>(e.a & 0xffffff);
      const auto bytes = static_cast<std::int64_t>(e.a >> 24);
      nodes_[static_cast<std::size_t>(node)].buffer_used -= bytes;
      if (keeps_frees_) window_frees_.push_back(Freed{node, bytes});
      buffer_freed(node, e.t);
      break;
    }
    case Ev::arrive: {
      Msg* m = static_cast<Msg*>(e.p);
      m->arrival = e.t;
      if (adaptive_) {
        const auto key = static_cast<std::uint64_t>(m->src) << 32 | static_cast<std::uint32_t>(m->dst);
        if (auto it = pair_routes_.find(key); --it->second.inflight == 0) {
          if (keeps_ended_routes_) ended_routes_[key] = EndedRoute{std::move(it->second.links), e.t};
          pair_routes_.erase(it);
        }
        m->route.reset();
      }
      hash_.add(m->id, 0xa77, static_cast<std::uint64_t>(e.t));
      listener_.on_arrival(*m, e.t);
      break;
    }
    default: break;
  }
}

void Network::plan_multicast(int src, std::span<const int> dsts, std::vector<std::uint32_t>& path, std::uint32_t& trunk,
                             std::vector<int>& order) const {
  const auto& topo = *machine_.topology;
  if (dsts.empty()) throw UsageError(fmt::format("multicast from {}: no destinations", src));
  std::vector<std::vector<LinkId>> routes(dsts.size());
  for (std::size_t i = 0; i < dsts.size(); ++i) topo.route(src, dsts[i], routes[i]);
  // The worm forks at the first replicating router on its way, onto all of that router's ports.
  std::vector<LinkId> ports;
  std::size_t fork = 0;
  for (; fork < routes[0].size(); ++fork) {
    topo.replicating_channels(routes[0][fork], ports);
    if (!ports.empty()) break;
  }
  if (ports.empty())
    throw UsageError(fmt::format("multicast from {}: the route to {} crosses no replicating router (the hardware "
                                 "replicates onto the inter-level channels below a level's last row)",
                                 src, dsts[0]));
  if (dsts.size() != ports.size())
    throw UsageError(fmt::format("multicast from {}: the router replicates onto all of its {} outgoing channels (the "
                                 "first is {}), so it needs exactly one destination below each; {} given",
                                 src, ports.size(), topo.link_name(ports[0]), dsts.size()));
  std::vector<std::size_t> which(ports.size(), dsts.size());  // per port: the destination below it
  for (std::size_t i = 0; i < dsts.size(); ++i) {
    const auto& r = routes[i];
    const auto port = r.size() == routes[0].size() && std::equal(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(fork), routes[0].begin())
                          ? std::find(ports.begin(), ports.end(), r[fork])
                          : ports.end();
    if (port == ports.end())
      throw UsageError(fmt::format("multicast from {}: destination {} is not reached through the router of {} at the "
                                   "same distance ({} links) as destination {}; every branch ends as far from the fork",
                                   src, dsts[i], topo.link_name(ports[0]), routes[0].size(), dsts[0]));
    const auto k = static_cast<std::size_t>(port - ports.begin());
    if (which[k] != dsts.size())
      throw UsageError(fmt::format("multicast from {}: destinations {} and {} both lie below channel {}", src,
                                   dsts[which[k]], dsts[i], topo.link_name(ports[k])));
    which[k] = i;
  }
  path.assign(1, kNoChannel);
  path.insert(path.end(), routes[0].begin(), routes[0].begin() + static_cast<std::ptrdiff_t>(fork));
  trunk = static_cast<std::uint32_t>(path.size());
  for (std::size_t j = fork; j < routes[0].size(); ++j)
    for (std::size_t k = 0; k < ports.size(); ++k) path.push_back(routes[which[k]][j]);
  // Lock-step branches that shared a channel would wait for themselves.
  std::vector<std::uint32_t> tree(path.begin() + trunk, path.end());
  std::sort(tree.begin(), tree.end());
  if (const auto dup = std::adjacent_find(tree.begin(), tree.end()); dup != tree.end())
    throw UsageError(fmt::format("multicast from {}: two branches would share channel {}", src, topo.link_name(*dup)));
  order.clear();
  for (std::size_t k = 0; k < ports.size(); ++k) order.push_back(dsts[which[k]]);
}

}  // namespace touchstone::detail
