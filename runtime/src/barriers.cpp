// Barriers (docs/model.md 6): the hardware barrier of a control network, which releases a
// group barrier_latency after its last member arrives, and the dissemination barrier of machines
// without one, made of ordinary zero-byte messages. Apart from engine.cpp: neither is a step of a
// message's way, though the software one sends messages along it.
#include <algorithm>

#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

void Engine::barrier(Vp& v, const Group& g) {
  enter(v);
  ++v.actions;
  const GroupData& gd = resolve(v, g);
  auto it = std::lower_bound(gd.by_world.begin(), gd.by_world.end(), std::pair{v.rank, -1});
  if (it == gd.by_world.end() || it->first != v.rank)
    throw UsageError(fmt::format("rank {} called barrier on a group it is not a member of", v.rank));
  const Time start = v.clock;
  if (machine_.net.barrier == BarrierKind::software) {
    software_barrier(v, gd);
  } else {
    // Hardware barrier (a control network): releases everyone barrier_latency after the last arrival.
    // The last to arrive waits for the release too, as an event at its time like the others': in a
    // split run no process knows that its member is the last before the processes meet, and the
    // release is no sooner than the window's end (Engine::lookahead), so it is the same run.
    BarrierState& b = barriers_[gd.ctx];
    b.members = static_cast<int>(gd.members.size());
    ++b.arrived;
    b.latest = std::max(b.latest, v.clock);
    b.waiting.push_back(&v);
    instruments_.barrier_arrived(v.rank, b.heard);
    v.barrier_ctx = gd.ctx;
    if (partition_) {
      if (b.arrived_here++ == 0) barriers_here_.push_back(gd.ctx);
    } else if (b.arrived == b.members) {
      instruments_.barrier_released(gd.members, b.heard);
      release_barrier(gd.ctx);
    }
    block(v, Vp::Block::barrier, Call::counting(Call::Form::barrier, gd.members.size()));
  }
  instruments_.barrier_passed(v.rank, start, v.clock);
}

// Every member of the barrier of context ctx has arrived: the waiting ones here go on
// barrier_latency after the last arrival, in rank order.
void Engine::release_barrier(std::uint64_t ctx) {
  const auto it = barriers_.find(ctx);
  const Time release = it->second.latest + machine_.net.barrier_latency;
  for (Vp* w : it->second.waiting) queue_.push(release, vp_order(w->rank), Ev::barrier, w);
  barriers_.erase(it);
}

// Dissemination barrier (Hensgen, Finkel, Manber): in round k member i signals i + 2^k and waits
// for i - 2^k; after ceil(log2 n) rounds everyone has heard from everyone.
void Engine::software_barrier(Vp& v, const GroupData& g) {
  const int n = static_cast<int>(g.members.size());
  const int me = std::lower_bound(g.by_world.begin(), g.by_world.end(), std::pair{v.rank, -1})->second;
  const InCollective in(v, "barrier");
  // Its waits go on with the next round's message: not a wait whose return a program of the
  // instant may run from (Engine::open_instant).
  v.in_waiting_call = false;
  for (int dist = 1, round = 0; dist < n; dist *= 2, ++round) {
    Op* s = post_send(v, g.members[static_cast<std::size_t>((me + dist) % n)], round, g.ctx | kInternalCtx, {});
    Op* r = post_recv(v, g.members[static_cast<std::size_t>((me - dist + n) % n)], round, g.ctx | kInternalCtx,
                      nullptr, {});
    wait(v, r);
    wait(v, s);
  }
}

}  // namespace touchstone::detail
