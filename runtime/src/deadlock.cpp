// Deadlock reports (docs/debugging.md): what every blocked VP waits for, the wait-for
// cycle among the ranks, the unmatched messages that could have broken it, which receive buffers
// are full and of what, and the network's own channel cycle when worms hold each other up.
#include <algorithm>

#include <fmt/format.h>

#include "engine.hpp"
#include "touchstone/packed.hpp"

namespace touchstone::detail {

namespace {

constexpr std::uint64_t kUnreceivedShown = 64;  // of the messages unreceived at the end, the first

std::string at_label(const Vp& v) { return v.label.empty() ? std::string() : " at " + v.label; }

bool user_message(const Msg& m, bool internal_too) { return internal_too || (!is_internal(m.ctx) && !(m.ctx & kAmCtx)); }

// "MPI_Send: " when RunOptions::blocked_in names the call of the program's interface that a
// rank's own VP blocks in; tasks run on the rank's behalf and are not in its call.
// (Not of a program that runs on past its send meanwhile, Engine::continue_ahead: what its
// interface records of its calls is its own until its next turn.)
std::string in_call(const RunOptions& o, const Vp& v) {
  if (!o.blocked_in || v.is_task() || v.continues_ahead) return {};
  std::string call = o.blocked_in(v.rank);
  return call.empty() ? call : call + ": ";
}

// The whole call a rank's own VP blocks in, as RunOptions::describe_blocked words it; empty when
// the runtime's description stands.
std::string program_call(const RunOptions& o, const Vp& v) {
  if (!o.describe_blocked || v.is_task() || v.continues_ahead) return {};
  std::vector<RunOptions::PendingOp> ops;
  if (v.block == Vp::Block::ops) {
    for (const Op* op : v.waiting_ops) {
      if (op->kind == Op::Kind::send) ops.push_back({true, op->dst, op->tag, op->ctx});
      else if (op->kind == Op::Kind::recv) ops.push_back({false, op->src, op->tag, op->ctx});
    }
  }
  return o.describe_blocked(v.rank, ops);
}

}  // namespace

// What v's blocking call is, in the user's terms: a runtime collective is named as such unless
// the report asks for the runtime's internal messages; the call of the program's interface a
// rank is in (RunOptions::blocked_in, e.g. MPI_Send) comes first.
std::string Engine::describe_wait(const Vp& v) const {
  if (std::string program = program_call(opts_, v); !program.empty()) return program;
  const std::string in = in_call(opts_, v);
  if (v.collective && !opts_.report_internal) return in + fmt::format("{} (a runtime collective)", v.collective);
  return in + describe(v.pending);
}

// RunOptions::ranks: the VPs from there on run no rank, unless another VP started them (Proc::start).
bool Engine::runs_no_rank(int r) const {
  const Vp* v = vps_[static_cast<std::size_t>(r)].get();
  return opts_.ranks > 0 && r >= opts_.ranks && !(v && v->ever_started);
}

// The wait-for graph among ranks: rank r -> rank s when r's blocking call needs s to act (send a
// message, post a receive that frees buffer space, arrive at a barrier). A cycle of such edges
// among blocked ranks is the deadlock; without one, the chain ends at ranks that have finished.
Engine::WaitGraph Engine::wait_graph() const {
  const int n = static_cast<int>(vps_.size());
  WaitGraph g;
  g.whole = !partition_;
  g.blocked.assign(static_cast<std::size_t>(n), 0);
  g.edges.resize(static_cast<std::size_t>(n));
  for (const auto& vp : vps_) {
    if (!vp) continue;  // another process's rank (a split run)
    const Vp& v = *vp;
    if (v.state != Vp::State::blocked || v.block == Vp::Block::dormant) continue;  // not started: no program
    g.blocked[static_cast<std::size_t>(v.rank)] = 1;
    auto& out = g.edges[static_cast<std::size_t>(v.rank)];
    const std::string where = describe_wait(v) + at_label(v);
    const std::string program = program_call(opts_, v);
    auto add_any = [&](const GroupData* gd, const std::string& call) {
      if (!gd) return;
      for (int m : gd->members)
        if (m != v.rank) out.push_back(WaitGraph::Edge{m, call});
    };
    // The ranks a send or receive needs.
    auto add_peers = [&](const Op& op, const std::string& call, bool others_only = false) {
      const int peer = op.kind == Op::Kind::send ? op.dst : op.src;
      if (peer == any_source) add_any(op.group.get(), call);
      else if (!others_only || peer != v.rank)
        out.push_back(WaitGraph::Edge{peer, call});
    };
    switch (v.block) {
      case Vp::Block::ops:
        for (const Op* op : v.waiting_ops) {
          const std::string call = !program.empty() || (v.collective && !opts_.report_internal)
                                       ? where
                                       : v.waiting_ops.size() > 1 ? describe_op(*op) + " in " + where
                                                                  : in_call(opts_, v) + describe_op(*op) + at_label(v);
          if (op->kind != Op::Kind::task) {
            add_peers(*op, call);
            continue;
          }
          // A wait for a task (Proc::spawn: a nonblocking collective) needs what the task waits for
          // from other ranks (its messages from its own rank are its rank's other tasks').
          for (const auto& t : tasks_)
            if (t->task_op == op && t->state == Vp::State::blocked && t->block == Vp::Block::ops)
              for (const Op* inner : t->waiting_ops)
                if (inner->kind != Op::Kind::task) add_peers(*inner, call, true);
        }
        break;
      case Vp::Block::probe:
        if (v.probe_src != any_source)
          out.push_back(WaitGraph::Edge{v.probe_src, where});
        else {
          for (const auto& [key, gd] : groups_)
            if (gd->ctx == v.probe_ctx) add_any(gd.get(), where);
          if (v.probe_ctx == world_->ctx) add_any(world_.get(), where);
        }
        break;
      case Vp::Block::barrier: {
        auto b = barriers_.find(v.barrier_ctx);
        const GroupData* gd = v.barrier_ctx == world_->ctx ? world_.get() : nullptr;
        for (const auto& [key, group] : groups_)
          if (group->ctx == v.barrier_ctx) gd = group.get();
        if (!gd || b == barriers_.end()) break;
        for (int m : gd->members) {
          const bool arrived = std::any_of(b->second.waiting.begin(), b->second.waiting.end(),
                                           [&](const Vp* w) { return w->rank == m; });
          if (!arrived) out.push_back(WaitGraph::Edge{m, where});
        }
        break;
      }
      default: break;
    }
    // The messages that sit unreceived at it: a receive with another source, tag or group would
    // have taken one of them and broken the wait.
    for (const Msg* m = v.mailbox.unexpected(); m; m = m->next) {
      if (!user_message(*m, opts_.report_internal)) continue;
      const std::string line = describe_unreceived(opts_, *m, v.mailbox.unexpected());
      if (line.empty()) continue;
      // With the interface's own words (describe_message) ranks are the communicator's, and the
      // receive's world rank would mislead: the blocked call above names its source.
      const bool own_words = static_cast<bool>(opts_.describe_message);
      std::string why;
      for (const Op* op : v.waiting_ops)
        if (op->kind == Op::Kind::recv) {
          // (In the interface's words, the blocked call names its communicator, which may be
          // one of the interface's own contexts, a collective's: no reason is given.)
          if (op->ctx != m->ctx)
            why = own_words ? "" : "it was sent in another group";
          else if (op->src != any_source && op->src != m->src)
            why = own_words ? "" : fmt::format("the receive wants source {}", op->src);
          else if (op->tag != any_tag && op->tag != m->tag)
            why = fmt::format("the receive wants tag {}", op->tag);
        }
      g.unmatched.emplace_back(v.rank, line + (why.empty() ? "" : " (" + why + ")"));
    }
  }
  for (const auto& v : vps_)
    for (const Msg* m = v ? v->mailbox.unexpected() : nullptr; m; m = m->next) {
      if (!user_message(*m, opts_.report_internal)) continue;
      std::string line = describe_unreceived(opts_, *m, v->mailbox.unexpected());
      if (!line.empty() && ++g.unreceived_count <= kUnreceivedShown) g.unreceived.push_back(std::move(line));
    }
  // Why a rank may have finished without its part: an error returned to it that it went past. In a
  // split run every finished rank of this process's, since the ranks that wait for it may be elsewhere.
  if (opts_.describe_finished) {
    std::vector<std::uint8_t> wanted(static_cast<std::size_t>(n), partition_ ? 1 : 0);
    if (!partition_)
      for (const auto& out : g.edges)
        for (const WaitGraph::Edge& e : out) wanted[static_cast<std::size_t>(e.to)] = 1;
    for (int r = first_here_; r < end_here_; ++r)
      if (wanted[static_cast<std::size_t>(r)] && !g.blocked[static_cast<std::size_t>(r)] && !runs_no_rank(r))
        if (std::string why = opts_.describe_finished(r); !why.empty()) g.finished.emplace_back(r, std::move(why));
  }
  return g;
}

void Engine::WaitGraph::pack(Packed& out) const {
  std::uint64_t ranks = 0;
  for (const std::uint8_t b : blocked) ranks += b;
  out.put(ranks);
  for (std::size_t r = 0; r < blocked.size(); ++r) {
    if (!blocked[r]) continue;
    out.put(static_cast<std::int64_t>(r));
    out.put(static_cast<std::uint64_t>(edges[r].size()));
    for (const Edge& e : edges[r]) {
      out.put(static_cast<std::int64_t>(e.to));
      out.put_text(e.call);
    }
  }
  for (const auto* lines : {&unmatched, &finished}) {
    out.put(static_cast<std::uint64_t>(lines->size()));
    for (const auto& [rank, text] : *lines) {
      out.put(static_cast<std::int64_t>(rank));
      out.put_text(text);
    }
  }
  out.put(unreceived_count);
  out.put(static_cast<std::uint64_t>(unreceived.size()));
  for (const std::string& line : unreceived) out.put_text(line);
}

void Engine::WaitGraph::unpack(Unpacker& in) {
  const auto n = static_cast<std::int64_t>(blocked.size());
  const auto rank = [&] {
    const auto r = in.take<std::int64_t>();
    if (r < 0 || r >= n) throw_corrupt_swap("a corrupt wait-for graph");
    return static_cast<int>(r);
  };
  for (auto ranks = in.take<std::uint64_t>(); ranks > 0; --ranks) {
    const int r = rank();
    blocked[static_cast<std::size_t>(r)] = 1;
    for (auto k = in.take<std::uint64_t>(); k > 0; --k) {
      const int to = rank();
      edges[static_cast<std::size_t>(r)].push_back(Edge{to, in.take_text()});
    }
  }
  for (auto* lines : {&unmatched, &finished})
    for (auto k = in.take<std::uint64_t>(); k > 0; --k) {
      const int r = rank();
      lines->emplace_back(r, in.take_text());
    }
  unreceived_count += in.take<std::uint64_t>();
  for (auto k = in.take<std::uint64_t>(); k > 0; --k) {
    std::string line = in.take_text();
    if (unreceived.size() < kUnreceivedShown) unreceived.push_back(std::move(line));
  }
}

std::string Engine::describe_waits(const WaitGraph& g) const {
  const int n = static_cast<int>(g.blocked.size());
  const auto& edges = g.edges;
  auto blocked = [&](int r) { return g.blocked[static_cast<std::size_t>(r)] != 0; };
  auto idle = [&](int r) { return runs_no_rank(r); };  // not "finished"
  // Depth-first over blocked ranks, lowest rank first, taking each rank's edges in call order.
  std::vector<int> color(static_cast<std::size_t>(n), 0);
  std::vector<int> cycle;
  std::vector<std::size_t> cycle_edge;
  for (int start = 0; start < n && cycle.empty(); ++start) {
    if (!blocked(start) || color[static_cast<std::size_t>(start)]) continue;
    std::vector<std::pair<int, std::size_t>> stack{{start, 0}};
    color[static_cast<std::size_t>(start)] = 1;
    while (!stack.empty() && cycle.empty()) {
      auto& [r, i] = stack.back();
      const auto& out = edges[static_cast<std::size_t>(r)];
      if (i == out.size()) {
        color[static_cast<std::size_t>(r)] = 2;
        stack.pop_back();
        continue;
      }
      const std::size_t e = i++;
      const int to = out[e].to;
      if (!blocked(to)) continue;
      if (color[static_cast<std::size_t>(to)] == 1) {  // back edge: the cycle is the stack from `to`
        auto it = std::find_if(stack.begin(), stack.end(), [&](const auto& f) { return f.first == to; });
        for (; it != stack.end(); ++it) {
          cycle.push_back(it->first);
          cycle_edge.push_back(it->second - 1);
        }
      } else if (color[static_cast<std::size_t>(to)] == 0) {
        color[static_cast<std::size_t>(to)] = 1;
        stack.emplace_back(to, 0);
      }
    }
  }
  std::string s;
  if (!cycle.empty()) {
    s += fmt::format("Wait-for cycle ({} rank(s)):\n", cycle.size());
    for (std::size_t k = 0; k < cycle.size(); ++k) {
      const WaitGraph::Edge& e = edges[static_cast<std::size_t>(cycle[k])][cycle_edge[k]];
      s += fmt::format("  rank {} waits in {} for rank {}\n", cycle[k], e.call, e.to);
    }
  } else {
    // Before a split run's processes pool their graphs a rank of another process is neither blocked
    // nor finished here: its own process's report says which it is.
    s += !g.whole ? "No wait-for cycle among this process's ranks: the blocked ranks wait for ranks that have "
                    "finished or run in another process of the split run:\n"
                  : "No wait-for cycle: the blocked ranks wait for ranks that have finished:\n";
    int shown = 0;
    std::vector<int> waited_for;  // the finished ranks named, each once, in the order named
    for (int r = 0; r < n && shown < 16; ++r) {
      if (!blocked(r)) continue;
      std::vector<int> gone, elsewhere;
      std::string call;
      for (const WaitGraph::Edge& e : edges[static_cast<std::size_t>(r)])
        if (!blocked(e.to) && !idle(e.to)) (g.whole || here(e.to) ? gone : elsewhere).push_back(e.to), call = e.call;
      if (gone.empty() && elsewhere.empty()) continue;
      ++shown;
      std::string whom = gone.empty() ? "" : fmt::format("{}, finished", fmt::join(gone, ", "));
      if (!elsewhere.empty())
        whom += fmt::format("{}{}, in another process", whom.empty() ? "" : "; and ", fmt::join(elsewhere, ", "));
      s += fmt::format("  rank {} waits in {} for rank(s) {}\n", r, call, whom);
      for (int w : gone)
        if (std::find(waited_for.begin(), waited_for.end(), w) == waited_for.end()) waited_for.push_back(w);
    }
    for (std::size_t k = 0; k < waited_for.size() && k < 16; ++k)
      for (const auto& [rank, why] : g.finished)
        if (rank == waited_for[k]) s += fmt::format("  rank {} finished: {}\n", rank, why);
  }
  // The messages that sit unreceived at the ranks of the cycle (or at every blocked rank).
  std::string near;
  int count = 0;
  for (const auto& [rank, line] : g.unmatched) {
    if (!cycle.empty() ? std::find(cycle.begin(), cycle.end(), rank) == cycle.end() : !blocked(rank)) continue;
    if (++count <= 16) near += line + "\n";
  }
  if (count) s += fmt::format("Unmatched messages that could have broken it ({}):\n{}", count, near);
  return s;
}

// What a deadlock report adds after the wait-for graph: the full receive buffers, by node.
std::string Engine::full_buffers() const {
  std::string s;
  // Message-dependent deadlock with bounded buffers: name the full buffers and their contents.
  // Its space is reserved by messages that arrived and wait for a receive, by messages matched but
  // not yet received, and by messages whose first packets are in while the rest wait in the network.
  for (const auto& vp : vps_) {
    if (!vp || !network_->waits_for_buffer(vp->rank)) continue;
    std::vector<std::string> held;
    std::int64_t unreceived = 0, in_flight = 0;
    for (const Msg* m = vp->mailbox.unexpected(); m; m = m->next)
      if (m->buffered) {
        held.push_back(fmt::format("#{} from {} ({} B)", m->id, m->src, m->size));
        unreceived += static_cast<std::int64_t>(m->size);
      }
    const auto flying = network_->describe_buffer_holders(vp->rank);
    in_flight = flying.bytes;
    const std::int64_t used = network_->buffer_used(vp->rank);
    s += fmt::format("The receive buffer of node {} is full ({} of {} bytes reserved), reserved by:\n", vp->rank, used,
                     machine_.net.recv_buffer);
    if (!held.empty()) s += fmt::format("  unreceived messages {}\n", fmt::join(held, ", "));
    if (!flying.lines.empty())
      s += "  messages still arriving, each reserved whole at its first packet, the rest blocked in the network:\n" +
           flying.lines;
    if (used > unreceived + in_flight)
      s += fmt::format("  {} bytes of messages arrived and matched but not yet received\n", used - unreceived - in_flight);
  }
  return s;
}

// True when some receive buffer waits for messages that wait for it (docs/model.md 2.7): no
// receive can break that.
bool Engine::buffer_cycle() const {
  for (const auto& vp : vps_)
    if (vp && network_->waits_for_buffer(vp->rank) && network_->describe_buffer_holders(vp->rank).cycle) return true;
  return false;
}

// A blocked receive whose source the schedule forced (RunOptions::schedule): the message it waits
// for never comes, while the program's wildcard would have taken another or blocked by itself.
std::string Engine::infeasible_choice() const {
  for (const auto& v : vps_) {
    if (!v || v->state != Vp::State::blocked || v->block != Vp::Block::ops) continue;
    for (const Op* op : v->waiting_ops)
      if (op->kind == Op::Kind::recv && op->forced && !op->matched)
        return fmt::format("--schedule {}:{}={} forces rank {}'s receive #{} to take a message from rank {}, and none "
                           "comes",
                           v->rank, op->call, op->src, v->rank, op->call, op->src);
  }
  return {};
}

// The run is stuck from the moment its last VP blocked, which a VP's own clock may put after the
// last event (a receive posted after local work the engine had no event for).
Time Engine::deadlock_stuck_at() const {
  Time at = now_;
  for (const auto* list : {&vps_, &tasks_})
    for (const auto& v : *list)
      if (v && v->state == Vp::State::blocked && v->block != Vp::Block::idle && v->block != Vp::Block::dormant)
        at = std::max(at, v->blocked_since);
  return at;
}

std::string Engine::deadlock_report(const HeadlineFacts* pooled) const {
  std::string cycle = network_->find_deadlock_cycle();
  const Time at = pooled ? pooled->stuck_at : deadlock_stuck_at();
  std::string s;
  if (!cycle.empty()) {
    s = fmt::format("{}at t={} us; the VPs waiting on it:\n", cycle, to_us(at));
  } else if (pooled ? pooled->buffer_cycle : buffer_cycle()) {
    s = fmt::format("message-dependent deadlock at t={} us: a receive buffer is reserved by messages whose later "
                    "packets are blocked behind worms that wait for space in that same buffer (below).\n",
                    to_us(at));
  } else if (network_->blocked_packets()) {
    s = fmt::format("deadlock at t={} us: worms wait in the network (for receive-buffer space or behind such "
                    "worms) that only the blocked VPs below could free.\n",
                    to_us(at));
  } else if (std::string forced = pooled ? pooled->forced : infeasible_choice(); !forced.empty()) {
    s = fmt::format("infeasible schedule at t={} us: {}; no run of the program makes that match after the choices "
                    "before it, so this is not a run the program can make (drop that choice from the schedule)\n",
                    to_us(at), forced);
  } else {
    s = fmt::format("application deadlock at t={} us: every VP still running is blocked and nothing is in flight.\n",
                    to_us(at));
  }
  const BlockedLines here = pooled ? BlockedLines() : blocked_lines();
  const BlockedLines& lines = pooled ? pooled->lines : here;
  for (const std::string& line : lines.ranks) s += line;
  if (lines.ranks_blocked > lines.ranks.size())
    s += fmt::format("  ... and {} more blocked rank(s)\n", lines.ranks_blocked - lines.ranks.size());
  for (const auto& [order, line] : lines.tasks) s += line;
  // VPs that run no rank (RunOptions::ranks: an MPI run with -np below the machine's VPs, those
  // not started: Proc::await_start) are neither blocked nor finished ranks.
  const int n = static_cast<int>(vps_.size());
  int ranks = n;
  if (opts_.ranks > 0 && opts_.ranks < n) {
    ranks = opts_.ranks;
    for (int r = opts_.ranks; r < n; ++r) ranks += runs_no_rank(r) ? 0 : 1;
  }
  const int blocked = static_cast<int>(lines.ranks_blocked);  // pooled: every process's
  if (partition_ && !pooled) {  // only this process's ranks are known here
    const int first = std::min(first_here_, ranks), end = std::min(end_here_, ranks);
    s += fmt::format("{} of this process's {} ranks ({}..{} of {}) finished.\n", end - first - blocked, end - first,
                     first, end - 1, ranks);
  } else if (ranks == n) {
    s += fmt::format("{} of {} VPs finished.\n", n - blocked, n);
  } else {
    s += fmt::format("{} of {} ranks finished ({} more VP(s) of the machine run no rank).\n", ranks - blocked, ranks,
                     n - ranks);
  }
  const WaitGraph graph = pooled ? WaitGraph() : wait_graph();
  const WaitGraph& waits = pooled ? pooled->waits : graph;
  if (cycle.empty()) s += describe_waits(waits) + lines.buffers;
  s += waits.unreceived_count
           ? fmt::format("Unmatched messages ({}):\n{}\n", waits.unreceived_count, fmt::join(waits.unreceived, "\n"))
           : "No unmatched messages.\n";
  if (network_->blocked_packets()) s += "Blocked in the network:\n" + network_->describe_blocked();
  return s;
}

Engine::BlockedLines Engine::blocked_lines() const {
  BlockedLines lines;
  for (const auto& v : vps_)
    if (v && v->state == Vp::State::blocked && v->block != Vp::Block::dormant &&
        ++lines.ranks_blocked <= BlockedLines::kRanksShown)
      lines.ranks.push_back(fmt::format("  rank {} blocked since t={} us in {}{}\n", v->rank, to_us(v->blocked_since),
                                        describe_wait(*v), at_label(*v)));
  // Tasks (Proc::spawn, docs/model.md 1.7) that wait are named too: a rank's wait for one of them
  // is only as far as the report can follow.
  // One the program named (a nonblocking collective: "MPI_Ibcast(...) on MPI_COMM_WORLD at prog.c:12")
  // is said in its terms; the rank's line above says which of its calls waits for it.
  for (const auto& t : tasks_)
    if (t->state == Vp::State::blocked && t->block != Vp::Block::idle) {
      if (const std::string named = t->task_text ? t->task_text() : std::string(); !named.empty()) {
        // The ranks it waits for, as the wait-for cycle below names them.
        std::vector<std::string> peers;
        if (t->block == Vp::Block::ops)
          for (const Op* op : t->waiting_ops) {
            const int peer = op->kind == Op::Kind::send ? op->dst : op->kind == Op::Kind::recv ? op->src : t->rank;
            std::string who = peer == any_source ? "any rank" : fmt::format("rank {}", peer);
            if (peer != t->rank && std::find(peers.begin(), peers.end(), who) == peers.end()) peers.push_back(who);
          }
        lines.tasks.emplace_back(t->order, fmt::format("  rank {}'s {} is blocked since t={} us{}{}\n", t->rank, named,
                                                       to_us(t->blocked_since), peers.empty() ? "" : ", waiting for ",
                                                       fmt::join(peers, ", ")));
      } else
        lines.tasks.emplace_back(t->order, fmt::format("  a task of rank {} blocked since t={} us in {}{}\n", t->rank,
                                                       to_us(t->blocked_since), describe_wait(*t), at_label(*t)));
    }
  std::sort(lines.tasks.begin(), lines.tasks.end());  // by rank, then the rank's own count
  lines.buffers = full_buffers();
  return lines;
}

}  // namespace touchstone::detail
