// Inter-level multicast (docs/model.md 2.11): a send form of its own, with the checks only it
// needs (the hardware, one packet, no rendezvous) and one worm whose branches each deliver an
// ordinary message. Apart from engine.cpp, whose messages each have one destination; from the
// hand-over on (Network::post) a forked worm goes the network's way like any other.
#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

// Inter-level multicast (docs/model.md 2.11): one message set-up and one worm, which forks at the
// replicating router; each branch delivers its own ordinary message (own id, same payload).
Op* Engine::imulticast(Vp& v, const Group& g, std::span<const int> dsts, int tag, std::span<const std::byte> data) {
  enter(v);
  if (!machine_.net.multicast)
    throw UsageError(fmt::format("multicast needs a machine with inter-level multicast hardware, such as "
                                 "hpam:4x4/16x16,Q=8,multicast (this is {})",
                                 machine_.name));
  if (machine_.net.recv_buffer >= 0) throw UsageError("multicast is not modeled with bounded receive buffers (buffer=)");
  if (machine_.net.flow_control() && data.size() > static_cast<std::uint64_t>(machine_.net.eager_limit))
    throw UsageError(fmt::format("multicast of {} bytes: above eager_limit ({} bytes), and a forked worm has no "
                                 "rendezvous (docs/model.md 2.16)",
                                 data.size(), machine_.net.eager_limit));
  if (data.size() > static_cast<std::size_t>(machine_.net.packet_payload))
    throw UsageError(fmt::format("multicast of {} bytes: a forked worm is one packet (at most {} bytes)", data.size(),
                                 machine_.net.packet_payload));
  if (tag < 0) throw UsageError(fmt::format("send tag must be >= 0 (got {})", tag));
  const GroupData& gd = resolve(v, g);
  std::vector<int> world(dsts.size());
  for (std::size_t i = 0; i < dsts.size(); ++i) world[i] = GroupTable::to_world(gd, dsts[i], "destination");
  for (const int d : world) check_message_time(v.rank, d, data.size());
  std::vector<int> order;
  Msg* lead = new_msg();
  try {
    network_->plan_multicast(v.rank, world, lead->path, lead->trunk, order);
  } catch (...) {
    free_msg(lead);
    throw;
  }
  ++v.actions;
  const Time start = v.clock;
  v.clock += machine_.send_cost(v.rank, data.size());
  Op* op = new_op();
  op->kind = Op::Kind::send;
  op->owner = v.rank;
  op->vp = &v;
  lead->fan = static_cast<std::uint32_t>(order.size());
  lead->branch.resize(order.size());
  lead->branch_ej.resize(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    Msg* m = k == 0 ? lead : new_msg();
    lead->branch[k] = m;
    m->id = partition_ ? 0 : next_msg_id_++;  // a split run numbers them at the window's end
    m->src = v.rank;
    m->dst = order[k];
    m->tag = tag;
    m->ctx = gd.ctx;
    m->size = data.size();
    if (!opts_.phantom_payloads) m->payload.assign(data.begin(), data.end());
    if (machine_.net.send_holds_until_received) hold_send(op, m);
  }
  op->msg_id = lead->id;
  op->dst = lead->dst;
  lead->send_op = op;
  Traffic& sent = traffic_of(v.rank);  // one send, however many branches
  ++sent.messages_sent;
  sent.bytes_sent += data.size();
  instruments_.send_posted(v.rank, *lead);  // at the call: a split run hands it over later
  if (partition_) [[unlikely]] {  // numbered, counted and posted at the window's end (partition.cpp)
    multicast_dsts_[lead] = std::move(world);
    handed_here_.push_back(HandedHere{lead, Stamp{now_, v.order, place_now_.step}, start, v.clock,
                                      instruments_.hold_multicast(v.rank, *lead), false, 0, order_at_instant(v.order)});
    return op;
  }
  instruments_.multicast_sent(v.rank, *lead, start, v.clock, v.is_task());
  network_->post(lead, after_tail(v.rank, start, v.clock));
  return op;
}

// A split run's multicast at the window's end, in its sender's process: its branches numbered in
// turn as the single process numbers them at the send, then counted and hashed with those ids
// (number_multicast), and handed to this process's copy of the network.
void Engine::number_multicast(const HandedHere& h) {
  Msg* lead = h.m;
  for (Msg* b : lead->branch) b->id = next_msg_id_++;
  numbered(*lead->send_op, lead->id);
  instruments_.multicast_sent(lead->src, *lead, h.start, h.handed, h.sent.order != vp_order(lead->src), h.held);
}

void Engine::hand_over_multicast(const HandedHere& h) {
  number_multicast(h);
  Msg* lead = h.m;
  for (Msg* b : lead->branch) {
    if (here(b->dst)) continue;
    b->payload = std::vector<std::byte>();                                        // its bytes are on their way there
    if (b->held_op) awaiting_receipt_[b->id] = b->held_op, b->held_op = nullptr;  // until its receipt
  }
  to_network(lead, h.start, h.handed, h.sent.t);
}

// Another process's multicast, as this process's copy of the network carries it: the same plan
// and branches, each numbered in turn, with its payload where its destination's program runs.
void Engine::take_multicast(const HandedHere& h, std::span<const int> dsts, std::span<const std::byte> payload,
                            std::span<const std::uint32_t> vc, bool held) {
  Msg* lead = h.m;
  std::vector<int> order;
  network_->plan_multicast(lead->src, dsts, lead->path, lead->trunk, order);
  lead->fan = static_cast<std::uint32_t>(order.size());
  lead->branch.resize(order.size());
  lead->branch_ej.resize(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    Msg* m = k == 0 ? lead : make_msg(lead->src, order[k], lead->tag, lead->ctx, lead->size);
    lead->branch[k] = m;
    m->dst = order[k];
    m->id = next_msg_id_++;
    if (!here(m->dst)) continue;
    m->payload.assign(payload.begin(), payload.end());
    m->vc.assign(vc.begin(), vc.end());
    m->held_elsewhere = held;  // its receipt goes back to the sender's process (Engine::receipt_here)
  }
  to_network(lead, h.start, h.handed, h.sent.t);
}

}  // namespace touchstone::detail
