// Completing requests (docs/model.md 1.2, 2.5): wait, waitall, waitany, test, cancel, probe and the
// drop of a request destroyed unfinished. These are the program's side of a request: they decide
// when a VP blocks and in which order its receives complete; the message's own way (posting,
// matching, delivering, completing a receive) stays in engine.cpp.
#include <algorithm>

#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

// A request is completed only by the VP that started it. Another VP's wait or test would otherwise
// block as a misleading "application deadlock" (and race with the owner's). The loop is inline in
// every wait and test, the report out of line.
[[noreturn]] static void not_owner(const Vp& v, const Op& op, const char* call) {
  throw UsageError(fmt::format("rank {} called {} on a request of rank {} (its {}): only the VP that started a "
                               "request may complete it",
                               v.rank, call, op.owner, describe_op(op)));
}
static inline void check_owner(const Vp& v, std::span<Op* const> ops, const char* call) {
  for (const Op* op : ops)
    if (op && op->owner != v.rank) [[unlikely]] not_owner(v, *op, call);
}

Status Engine::wait(Vp& v, Op*& op) {
  enter(v);
  check_owner(v, {&op, 1}, "wait");
  if (!op) throw UsageError(fmt::format("rank {}: wait on a request that is not active (already completed?)", v.rank));
  const Time since = v.clock;
  for (;;) {
    if (op->kind != Op::Kind::recv && op->done != kNever) {
      complete_send(v, op);
      return Status{};
    }
    if (op->kind == Op::Kind::recv && op->matched) {
      const Status s = complete_recv(v, op, since);
      copies_made_for(v.index);  // the program reads the buffer next (Engine::posted_beside)
      return s;
    }
    if (ahead_of_sends_ && continue_ahead(v, op)) return Status{};  // the event loop completes it (finish_ahead)
    Op* one[] = {op};
    await_ops(v, one, true);
    if (op->kind == Op::Kind::recv && fixes_matches_) {
      const bool goes_on = may_go_on_past_receive(v);
      if (goes_on) {
        PastReceive& pr = past_receive(v);
        pr.recv = op, pr.since = since, pr.unfixed = 1;
        v.in_receive_wait = true;
      }
      if (goes_on || ways_[static_cast<std::size_t>(v.rank)].fixable) fix_inbound(v, goes_on);
      if (goes_on && op->fixed_msg) go_on_past_receive(v);
    }
    block(v, Vp::Block::ops, Call::on(Call::Form::wait_for, *op));
    if (v.continues_ahead) [[unlikely]] {  // on a helper thread, past the receive (launch_ahead)
      op->holder = nullptr;  // the event loop completes it (finish_ahead)
      op = nullptr;
      return past_receive_[static_cast<std::size_t>(v.rank)]->status;
    }
    v.in_receive_wait = false;
    unawait_ops(v, one);
  }
}

// The order of a waitall's heap of matched receives (std heaps keep the greatest first): the
// message that arrived later, at a tie the receive later in `ops`, is the greater.
static auto arrived_later(std::span<Op*> ops) {
  return [ops](std::uint32_t a, std::uint32_t b) {
    const Time ta = ops[a]->matched->arrival, tb = ops[b]->matched->arrival;
    return ta != tb ? ta > tb : a > b;
  };
}

// The steps of a waitall, inline in their two callers: waitall, run by the VP, and waitall_ahead,
// run by the event loop for a program that went on past it (a call each cost 170 instructions
// more per waitall, 2.4% of a 64-byte 1-lev-xor all-to-all on 256 VPs).
[[gnu::always_inline]] inline void Engine::begin_waitall(Vp& v, WaitAll& w) {
  std::vector<std::uint32_t>& ready = v.ready_recvs;
  ready.clear();
  v.waiting_ops.clear();
  v.matched_awaited.clear();
  v.waits_for_all = true;
  for (std::size_t i = 0; i < w.ops.size(); ++i) {
    Op* op = w.ops[i];
    if (!op || op->kind != Op::Kind::recv) continue;
    ++w.pending;
    op->slot = static_cast<std::uint32_t>(i);
    if (op->matched) {
      ready.push_back(op->slot);
    } else {
      op->awaited = true;
      v.waiting_ops.push_back(op);
    }
  }
  std::make_heap(ready.begin(), ready.end(), arrived_later(w.ops));
}

[[gnu::always_inline]] inline bool Engine::waitall_moves(Vp& v, WaitAll& w) {
  const auto ops = w.ops;
  const auto later = arrived_later(ops);
  if (w.pending) {
    std::vector<std::uint32_t>& ready = v.ready_recvs;
    for (Op* op : v.matched_awaited) {  // matched since the last look
      if (op->slot >= ops.size() || ops[op->slot] != op) continue;  // not one of these (defensive)
      op->awaited = false;
      v.waiting_ops.drop(op);
      ready.push_back(op->slot);
      std::push_heap(ready.begin(), ready.end(), later);
    }
    v.matched_awaited.clear();
    while (!ready.empty()) {
      std::pop_heap(ready.begin(), ready.end(), later);
      const std::uint32_t best = ready.back();
      ready.pop_back();
      const Status s = complete_recv(v, ops[best], w.since);
      if (!w.st.empty()) w.st[best] = s;
      --w.pending;
      w.since = v.clock;
    }
    if (w.pending) return false;
    v.waiting_ops.clear();
  }
  for (std::size_t i = w.next_send; i < ops.size(); ++i) {  // i in a register: calls are made between
    Op*& op = ops[i];
    if (!op) continue;
    Op* one[] = {op};
    if (op->awaited) unawait_ops(v, one);  // woken from waiting for it
    if (op->done == kNever) {
      await_ops(v, one, true);
      w.next_send = i;
      return false;
    }
    complete_send(v, op);
  }
  return true;
}

// The waitall is about to wait for receives: the matches its messages on their way are sure of
// (once a call: a later look would find matches that one host core does not make, and
// delivered_early would depend on the host), and whether its program goes on. A waitall of a halo
// exchange goes on when the matches of all its receives are known (at that look, or as their
// messages are sent: fix_at_send) and none of its sends depends on a receiver; not for more than
// 64 receives, since one that may go on counts its known matches at every wait.
[[gnu::always_inline]] inline void Engine::look_before_waiting(Vp& v, WaitAll& w) {
  constexpr std::size_t kMostReceives = 64;
  auto goes_on_with = [](const Op* op) {
    if (!op) return true;
    if (op->kind == Op::Kind::recv) return op->src != any_source;
    return op->kind == Op::Kind::send &&
           (op->done != kNever || (!op->synchronous && !op->rendezvous && op->unreceived == 0));
  };
  const bool goes_on = receives_go_on_ && fixes_matches_ && w.pending <= kMostReceives && may_go_on_past_receive(v) &&
                       std::all_of(w.ops.begin(), w.ops.end(), goes_on_with);
  if (!w.looked) fix_inbound(v, goes_on), w.looked = true;
  if (!goes_on) return;
  PastReceive& pr = past_receive(v);
  pr.recv = nullptr, pr.waitall = w, pr.unfixed = 0;
  for (const Op* op : v.waiting_ops) pr.unfixed += !op->fixed_msg;
  v.in_receive_wait = true;  // fix_at_send counts the matches found from here on
  if (pr.unfixed == 0) go_on_past_receive(v);
}

// Receives cost CPU time, so a waitall completes them in the order their messages arrived (ties: the
// earlier in `ops`); sends cost nothing more, so they only raise the clock to their completion
// times. Each receive is looked at when it is posted here and when it matches (the match path lists
// it in matched_awaited), not at every completion: waiting for p - 1 receives that arrive one by one
// would otherwise cost p^2 looks (alltoall/1-lev-dir on 256 VPs spent 63% of its instructions
// there). The unmatched ones stay awaited, and listed for deadlock reports, until they match.
void Engine::waitall(Vp& v, std::span<Op*> ops, std::span<Status> st) {
  enter(v);
  check_owner(v, ops, "waitall");
  std::fill(st.begin(), st.end(), Status{});  // a send's status
  WaitAll w{.ops = ops, .st = st, .since = v.clock, .looked = !fixes_matches_};
  begin_waitall(v, w);
  while (!waitall_moves(v, w)) {
    if (w.pending && (!w.looked || receives_go_on_)) look_before_waiting(v, w);
    block(v, Vp::Block::ops, w.waits_for());
    if (v.continues_ahead) [[unlikely]] return;  // on a helper thread, past it: finish_ahead completes it
    v.in_receive_wait = false;
  }
  copies_made_for(v.index);
}

// The event loop's part of a waitall its program went on past (finish_ahead): at each of the VP's
// wake-ups, what the VP's own code would do there; the program makes its next call once all is
// complete.
Engine::Ahead Engine::waitall_ahead(Vp& v) {
  WaitAll& w = past_receive(v).waitall;
  if (!waitall_moves(v, w)) {
    mark_blocked(v, Vp::Block::ops, w.waits_for());
    return Ahead::waits_again;
  }
  executor_->settle(v.index);
  v.continues_ahead = false;
  return Ahead::done;
}

std::size_t Engine::waitany(Vp& v, std::span<Op*> ops, Status* st) {
  enter(v);
  check_owner(v, ops, "waitany");
  const Time since = v.clock;
  for (;;) {
    std::size_t best = ops.size();
    Time best_t = kNever;
    bool any = false;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Op* op = ops[i];
      if (!op) continue;
      any = true;
      const Time t = op->kind != Op::Kind::recv ? op->done : (op->matched ? op->matched->arrival : kNever);
      if (t < best_t) best = i, best_t = t;
    }
    if (!any) throw UsageError(fmt::format("rank {}: waitany with no active request", v.rank));
    // A receive matched so far arrived no later than now_; a known send completion in the future
    // may still be beaten by a receive, so that case waits until its time comes.
    if (best < ops.size() && best_t <= now_) {
      if (ops[best]->kind == Op::Kind::recv) {
        Status s = complete_recv(v, ops[best], since);
        copies_made_for(v.index);
        if (st) *st = s;
      } else {
        complete_send(v, ops[best]);
        if (st) *st = Status{};
      }
      return best;
    }
    await_ops(v, ops, false);
    if (best < ops.size()) queue_.push(best_t, v.order, Ev::resume, &v, v.token + 1);
    block(v, Vp::Block::ops, Call::counting(Call::Form::waitany, ops.size()));
    unawait_ops(v, ops);
  }
}

bool Engine::test(Vp& v, Op*& op, Status* st) {
  enter(v);
  check_owner(v, {&op, 1}, "test");
  if (!op) throw UsageError(fmt::format("rank {}: test on a request that is not active (already completed?)", v.rank));
  auto done = [&] {
    return op->kind != Op::Kind::recv ? op->done <= v.clock : op->matched != nullptr;
  };
  if (!done()) sync(v);
  // A send whose completion time is already known (a synchronous one matched ahead in virtual
  // time) completes as this VP's clock moves on, which polling does: not futile.
  const bool completes_by_itself = op->kind != Op::Kind::recv && op->done != kNever;
  if (!done() && !completes_by_itself) futile_poll(v, Call::on(Call::Form::test_of, *op));
  if (done()) {
    if (op->kind != Op::Kind::recv) {
      complete_send(v, op);
      if (st) *st = Status{};
    } else {
      Status s = complete_recv(v, op, v.clock);
      copies_made_for(v.index);
      if (st) *st = s;
    }
    return true;
  }
  v.clock += machine_.costs_of(v.rank).probe_cost;
  return false;
}

// A receive is withdrawn only if it is still unmatched once every event before this VP's clock has
// been committed: the same line test draws, so a cancel succeeds exactly when a test at that moment
// would have found nothing. Withdrawing it from the posted queue leaves every later message to the
// receives posted after it (or the unexpected queue): each message is still delivered once.
bool Engine::cancel(Vp& v, Op*& op) {
  enter(v);
  check_owner(v, {&op, 1}, "cancel");
  if (!op)
    throw UsageError(fmt::format("rank {}: cancel of a request that is not active (already completed?)", v.rank));
  if (op->kind != Op::Kind::recv) return false;
  if (!op->matched && !op->awaiting_data) sync(v);
  if (op->matched || op->awaiting_data) return false;
  if (op->fixed_msg) unfix(*op);
  ++v.actions;  // the world changed for this VP: a poll loop around it is not futile
  v.mailbox.cancel(op);
  instruments_.cancelled(op->call, v.rank, v.clock);
  free_op(op);
  op = nullptr;
  return true;
}

std::optional<Status> Engine::probe(Vp& v, const Group& g, int src, int tag, bool blocking) {
  enter(v);
  const GroupData& gd = resolve(v, g);
  const int world_src = src == any_source ? any_source : GroupTable::to_world(gd, src, "source");
  Op pattern;
  pattern.src = world_src;
  pattern.tag = tag;
  pattern.ctx = gd.ctx;
  pattern.posted = v.clock;
  pattern.call = v.last_recv_call = ++v.home->recv_calls;
  if (world_src == any_source && !forced_.empty()) {
    pattern.src = forced_.source(v.rank, pattern.call, world_src, &gd);
    pattern.forced = pattern.src != any_source;
  }
  auto find = [&]() -> std::optional<Status> {
    const Msg* m = v.home->mailbox.find(pattern);
    if (!m) return std::nullopt;
    auto it = std::lower_bound(gd.by_world.begin(), gd.by_world.end(), std::pair{m->src, -1});
    instruments_.probed(v.rank, pattern, *m, v.label);
    v.clock = std::max(v.clock, m->arrival);
    return Status{it->second, m->tag, m->envelope_size(), m->arrival};
  };
  if (auto s = find()) return s;
  if (!blocking) {
    sync(v);
    if (auto s = find()) return s;
    futile_poll(v, Call{Call::Form::iprobe, {}, 0, src, tag});
    v.clock += machine_.costs_of(v.rank).probe_cost;
    return std::nullopt;
  }
  for (;;) {
    v.probe_src = world_src;
    v.probe_tag = tag;
    v.probe_ctx = gd.ctx;
    block(v, Vp::Block::probe, Call{Call::Form::probe, {}, 0, src, tag});
    if (auto s = find()) return s;
  }
}

void Engine::drop(Op* op) {
  // A program that went on past its send lets a Request go in its turn: the event loop reads the
  // operations meanwhile.
  if (Vp& owner = *vps_[static_cast<std::size_t>(op->owner)]; owner.continues_ahead) [[unlikely]]
    park_ahead(owner);
  op->holder = nullptr;  // its Request lets it go
  if (phase_ == Phase::rests) [[unlikely]] {  // in the rest of its program (Proc::leave): run_rests
    vps_[static_cast<std::size_t>(op->owner)]->dropped_in_rest.push_back(op);
    return;
  }
  if (phase_ == Phase::ahead) [[unlikely]] {
    // In a program run ahead of its turn (run_instant_programs): the send's bytes are copied now,
    // while the buffer still holds them (the message belongs to this VP alone until the event
    // loop goes on); the rest waits for the VP's turn, its next call (park).
    if (op->kind != Op::Kind::recv) keep_payload(op);
    vps_[static_cast<std::size_t>(op->owner)]->dropped_ahead.push_back(op);
    return;
  }
  if (op->kind != Op::Kind::recv) {
    keep_payload(op);  // nobody will wait for it: its buffer may change or go at any moment
    if (op->done == kNever) op->dropped = true; else free_op(op);  // on_send_done or on_matched frees it
    return;
  }
  Vp& v = *vps_[static_cast<std::size_t>(op->owner)];
  if (!aborting_)
    misuse_.push_back({now_, op->owner,
                       fmt::format("rank {}: a receive request ({}) was destroyed without being completed", op->owner,
                                   describe_op(*op))});
  // Bytes may be on their way into its buffer, which the program may free now: a rendezvous's data
  // (fix_rendezvous), a message matched as it was posted (posted_beside).
  copies_made_for(v.index);
  if (op->awaiting_data) {  // the rendezvous data is on its way and frees op when it arrives
    op->dropped = true;
    return;
  }
  if (op->fixed_msg && !op->matched) unfix(*op);
  if (op->matched) free_msg(op->matched); else v.mailbox.cancel(op);
  free_op(op);
}

}  // namespace touchstone::detail
