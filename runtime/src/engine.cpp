#include "engine.hpp"

#include "active_messages.hpp"
#include "checked_time.hpp"

#include <sched.h>
#include <signal.h>

#include <thread>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <limits>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "touchstone/error.hpp"


namespace touchstone::detail {

namespace {
constexpr std::uint64_t kWorldCtx = 1;

std::string rank_str(int r) { return r == any_source ? "any" : std::to_string(r); }
std::string tag_str(int t) { return t == any_tag ? "any" : std::to_string(t); }

std::shared_ptr<GroupData> new_group(std::vector<int> members, std::uint64_t ctx) {
  auto g = std::make_shared<GroupData>();
  g->members = std::move(members);
  g->ctx = ctx;
  g->by_world.reserve(g->members.size());
  for (std::size_t i = 0; i < g->members.size(); ++i) g->by_world.emplace_back(g->members[i], static_cast<int>(i));
  std::sort(g->by_world.begin(), g->by_world.end());
  g->in_world_order = true;
  for (std::size_t i = 0; g->in_world_order && i < g->members.size(); ++i)
    g->in_world_order = g->members[i] == static_cast<int>(i);
  return g;
}
}  // namespace

// ---------------------------------------------------------------- set-up and the baton

// Every message touches its sender's and receiver's Vp: kept small, 256 VPs' Vps stay in the cache
// (672 bytes when measured; it was 3.2 KB with a random generator inline, docs/performance.md).
static_assert(sizeof(Vp) <= 1024, "Vp grew past 1 KiB: keep rarely used state out of line");

Engine::Engine(const Machine& machine, const RunOptions& options) : machine_(machine), opts_(options) {
  const int n = machine.nodes();
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  world_ = new_group(std::move(all), kWorldCtx);
  // A sixteenth of a hop per bucket: a header's next hop lands some buckets ahead (event_queue.hpp).
  queue_.set_resolution(machine.net.hop_time > 0 ? machine.net.hop_time / 16 : 1024);
  network_ = std::make_unique<Network>(machine_, queue_, *this, hash_, stats_);
  network_->set_seed(opts_.seed);
  am_ = std::make_unique<ActiveMessages>(*this, n);
  if (!opts_.trace_file.empty() || !opts_.order_log_file.empty()) recorder_ = std::make_unique<Recorder>(n);
  if (recorder_ || opts_.explain) {
    blame_ = std::make_unique<Blame>(*network_, recorder_.get());
    network_->set_observer(blame_.get());
  }
  if (opts_.races != RaceCheck::off) {
    races_ = std::make_unique<RaceDetector>(n);
    received_.assign(static_cast<std::size_t>(n), 0);
  }
  for (const ForcedMatch& f : opts_.schedule) {
    if (f.rank < 0 || f.rank >= n || f.source < 0 || f.source >= n || f.call < 1)
      throw UsageError(fmt::format("schedule entry {}: ranks must be in 0..{} and calls count from 1",
                                   format_schedule({f}), n - 1));
    if (!forced_.emplace(std::pair{f.rank, f.call}, f.source).second)
      throw UsageError(fmt::format("schedule entry {}:{} appears twice", f.rank, f.call));
  }
  vps_.reserve(static_cast<std::size_t>(n));
  idle_tasks_.resize(static_cast<std::size_t>(n));
  tasks_of_.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    auto v = std::make_unique<Vp>();
    v->rank = r;
    v->index = r;
    v->proc.reset(new Proc(*this, *v));
    if (opts_.perturb)
      v->perturb_rng = std::make_unique<std::mt19937_64>(opts_.perturb * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(r));
    vps_.push_back(std::move(v));
  }
  executor_ = make_executor(opts_.execution, opts_.stack_bytes, opts_.host_cores, *this);
}

// The pools reclaim whatever an aborted run left behind. A Request that still holds one of its
// operations (kept beyond its VP's program; after a failed run, or one of MPI's) is detached first:
// its destructor, after run() returned, would otherwise use the freed engine.
Engine::~Engine() {
  ops_.for_each([](Op& op) {
    if (op.holder) op.holder->op_ = nullptr;
  });
}

// A Request that outlives its VP's program would be completed or destroyed after run()
// returned. A run that otherwise succeeded fails with a usage error naming each such request.
std::string Engine::held_requests() {
  std::string held;
  ops_.for_each([&](Op& op) {
    if (op.holder)
      held += fmt::format("\n  rank {}: {}", op.owner, describe_op(op));
  });
  if (held.empty()) return held;
  return "a Request outlives the program of the VP that started it (stored outside the program?); complete it "
         "with wait or test, or let it go out of scope, before the program returns:" + held;
}

// The life of a VP, in its own thread or fiber, from its first turn to its end.
void Engine::vp_main(Vp& v) {
  v.host_thread = pthread_self();
  progress_.running.store(v.rank, std::memory_order_relaxed);
  v.state = Vp::State::running;
  v.block = Vp::Block::none;
  if (!aborting_) {
    try {
      // Inside the try: a hook that throws fails the run like the program would; outside, the
      // exception would leave the fiber's function and terminate the process.
      if (opts_.on_vp_resume) opts_.on_vp_resume(v.rank, now_);
      if (v.is_task()) task_main(v);
      else (*program_)(*v.proc);
      // A VP that ends past the time limit (its last call's cost) stops the run too.
      if (v.clock > opts_.time_limit)
        abort_run(time_limit_report(opts_.time_limit, fmt::format("rank {} ended at t={} us", v.rank, to_us(v.clock))));
    } catch (const Aborted&) {
    } catch (...) {
      fail_with_current_exception(fmt::format("rank {} failed at t={} us", v.rank, to_us(v.clock)));
    }
  }
  if (opts_.on_vp_pause) {
    try {
      opts_.on_vp_pause(v.rank);
    } catch (...) {
      fail_with_current_exception(fmt::format("rank {}'s on_vp_pause hook failed at the end of its program", v.rank));
    }
  }
  progress_.running.store(-1, std::memory_order_relaxed);
  v.state = Vp::State::done;
}

// ---------------------------------------------------------------- tasks (Proc::spawn)

Vp& Engine::context(int index) {
  const auto n = vps_.size(), i = static_cast<std::size_t>(index);
  return i < n ? *vps_[i] : *tasks_[i - n];
}

Vp& Engine::acting(Vp& v) {
  const int i = executor_->current();
  if (i < static_cast<int>(vps_.size()) || i == kMain) return v;
  Vp& t = *tasks_[static_cast<std::size_t>(i) - vps_.size()];
  return t.home == &v ? t : v;  // another rank's task using this Proc: enter() refuses it
}

Vp* Engine::idle_task() {
  for (auto& idle : idle_tasks_)
    if (!idle.empty()) {
      Vp* t = idle.back();
      idle.pop_back();
      return t;
    }
  return nullptr;
}

// The n-th spawn on a group is the same on every member (as MPI requires collectives on a
// communicator to start in the same order everywhere): its two groups -- the scope's members, and
// the world, each with a new context -- are made by the first member to spawn it and handed to the
// others, so that the members agree on them without a message and no other group or task shares
// them. They are forgotten once every member has them (the tasks hold them): a program that starts
// a million collectives keeps only the groups of those in flight.
Op* Engine::spawn(Vp& v, const Group& scope, std::function<void(const Group&)> task) {
  enter(v);
  const GroupData& s = resolve(v, scope);
  if (!std::binary_search(s.by_world.begin(), s.by_world.end(), std::pair{v.rank, -1},
                          [](const auto& a, const auto& b) { return a.first < b.first; }))
    throw UsageError(fmt::format("rank {} spawned a task on a group it is not a member of", v.rank));
  if (!task) throw UsageError(fmt::format("rank {} spawned an empty task", v.rank));
  Vp& home = *v.home;
  const std::uint64_t nth = home.spawns[s.ctx]++;
  auto [it, fresh] = instances_.try_emplace({s.ctx, nth});
  if (fresh) {
    it->second.scope = new_group(s.members, next_ctx_++);
    it->second.world = new_group(world_->members, next_ctx_++);
  }
  const Group instance(it->second.scope), world(it->second.world);
  if (++it->second.taken == s.members.size()) instances_.erase(it);
  auto& idle = idle_tasks_[static_cast<std::size_t>(home.rank)];
  Vp* t = nullptr;
  if (!idle.empty()) {
    t = idle.back();
    idle.pop_back();
  } else {
    auto made = std::make_unique<Vp>();
    t = made.get();
    t->rank = home.rank;
    t->home = &home;
    t->index = static_cast<int>(vps_.size() + tasks_.size());
    if (opts_.perturb)
      t->perturb_rng = std::make_unique<std::mt19937_64>(opts_.perturb * 0x9e3779b97f4a7c15ULL +
                                                         static_cast<std::uint64_t>(t->index));
    tasks_.push_back(std::move(made));
    tasks_of_[static_cast<std::size_t>(home.rank)].push_back(t);
    // The context's user is the rank's Proc: Proc::current() in a task is its rank's Proc.
    if (executor_->add(home.proc.get()) != t->index)
      throw std::logic_error("task contexts out of step with the executor's");
  }
  t->clock = v.clock;
  t->label = v.label;
  t->groups_made.clear();
  t->world_alias = world.shared_data();
  t->task = [fn = std::move(task), instance] { fn(instance); };
  Op* op = new_op();
  op->kind = Op::Kind::task;
  op->owner = v.rank;
  op->vp = &v;
  op->dst = v.rank;
  t->task_op = op;
  ++v.actions;
  hash_.add(0x7a5c, static_cast<std::uint64_t>(v.rank),
            static_cast<std::uint64_t>(v.clock) ^ instance.context() << 40);
  queue_.push(t->clock, vp_order(t->index), Ev::resume, t, t->token);
  return op;
}

void Engine::task_main(Vp& t) {
  for (;;) {
    std::function<void()> task = std::move(t.task);
    t.task = nullptr;
    task();
    finish_task(t);
    idle_tasks_[static_cast<std::size_t>(t.rank)].push_back(&t);
    block(t, Vp::Block::idle, Call{});
    if (retiring_) return;
  }
}

void Engine::finish_task(Vp& t) {
  Op* op = t.task_op;
  t.task_op = nullptr;
  t.world_alias.reset();
  op->done = t.clock;
  if (op->dropped) return free_op(op);
  Vp& w = *op->vp;
  if (op->awaited && w.state == Vp::State::blocked) queue_.push(op->done, vp_order(w.index), Ev::resume, &w, w.token);
}

// In a catch block: the run fails with `what_failed` and the exception's message. Bad input found
// in VP code (or in code the engine calls) stays a usage error (RunUsageError, exit 1): the fault
// is the program's input, not the emulator's.
void Engine::fail_with_current_exception(const std::string& what_failed) {
  try {
    throw;
  } catch (const UsageError& ex) {
    if (!aborting_) failure_is_usage_ = true;
    abort_run(fmt::format("{}: {}", what_failed, ex.what()));
  } catch (const std::exception& ex) {
    abort_run(fmt::format("{}: {}", what_failed, ex.what()));
  } catch (...) {
    abort_run(what_failed + " with an exception that is not a std::exception");
  }
}

// Creates the VPs' contexts and runs them until the run is over.
void Engine::start_vps() {
  std::vector<void*> procs;
  procs.reserve(vps_.size());
  for (auto& v : vps_) procs.push_back(v->proc.get());
  const bool fibers = opts_.execution == Execution::fibers;
  std::size_t started = 0;
  try {
    started = executor_->start(std::move(procs), [this](int i) { vp_main(context(i)); });
  } catch (const std::exception& e) {
    if (!fibers) throw;
    throw RunError(fmt::format("could not create {} VP fibers with {} KiB stacks: {}", vps_.size(),
                               opts_.stack_bytes / 1024, e.what()));
  }
  if (started < vps_.size()) {
    // Not enough host threads: let the ones that started end, and report.
    abort_run(fmt::format("could not start {} VP threads (started {}); try --execution fibers or a smaller --stack-kb",
                          vps_.size(), started));
    for (std::size_t i = started; i < vps_.size(); ++i) vps_[i]->state = Vp::State::done;
  }
  executor_->pass(kMain);
  executor_->finish();
}

// A VP resumes at now_: one more in this instant's batch, or the first of a new instant.
void Engine::count_segment() {
  BatchStats& b = stats_.batches;
  ++b.segments;
  if (batch_width_ && now_ == batch_time_) {
    ++batch_width_;
    return;
  }
  close_batch();
  batch_time_ = now_;
  batch_width_ = 1;
}

void Engine::close_batch() {
  if (!batch_width_) return;
  BatchStats& b = stats_.batches;
  ++b.instants;
  b.widest = std::max(b.widest, batch_width_);
  for (std::size_t i = 0; i < BatchStats::kCoreCounts; ++i) {
    const auto w = static_cast<std::uint64_t>(BatchStats::kCores[i]);
    b.rounds[i] += (batch_width_ + w - 1) / w;
  }
  batch_width_ = 0;
}

// SIGINT or SIGTERM (RunOptions::stop_on_signals): the run ends as a failure, with where every VP
// was; `v` is the VP that noticed, at its call.
std::string Engine::interrupted_report(const Vp* v) const {
  const int sig = Watchdog::pending_signal();
  std::string where = v ? fmt::format("rank {} was calling the runtime at t={} us", v->rank, to_us(v->clock))
                        : fmt::format("the event loop was at t={} us", to_us(now_));
  std::string blocked;
  for (const auto& w : vps_)
    if (w->state == Vp::State::blocked)
      blocked += fmt::format("  rank {} blocked since t={} us in {}{}\n", w->rank, to_us(w->blocked_since),
                             describe_wait(*w), w->label.empty() ? "" : " at " + w->label);
  return fmt::format("interrupted by {}: {}.\n{}", sig == SIGINT ? "SIGINT" : "SIGTERM", where,
                     blocked.empty() ? "" : "The blocked VPs:\n" + blocked);
}

void Engine::abort_run(std::string report) {
  if (!aborting_) failure_ = std::move(report);
  aborting_ = true;
}

// The event loop: commits events until a VP can go on (its rank), or the run is over (kMain).
// Code outside the engine runs in the event loop too (a user topology's routing, allocations):
// whatever it throws fails the run like a failing VP, so that the VPs are unwound by the engine
// (each resumed to throw Aborted) and not torn down suspended with the executor. The guard is per
// call, not per event: around each event the phantom Figure-9 sweep measured about 1% slower
// (docs/performance.md); per call, within noise.
int Engine::next() {
  for (;;) {
    try {
      return run_events();
    } catch (...) {
      fail_with_current_exception(fmt::format("handling an event at t={} us failed", to_us(now_)));
    }
  }
}

int Engine::run_events() {
  for (;;) {
    if (opts_.stop_on_signals && !aborting_ && Watchdog::pending_signal()) abort_run(interrupted_report(nullptr));
    if (aborting_) return next_to_unwind();
    if (queue_.empty()) {
      bool all_done = true;
      for (auto& v : vps_) all_done &= v->state == Vp::State::done;
      for (auto& t : tasks_) all_done &= t->state == Vp::State::done || t->block == Vp::Block::idle;
      if (all_done) {
        // The programs have ended: the idle task contexts end too, one after another.
        Vp* t = idle_task();
        if (!t) return kMain;
        retiring_ = true;
        t->state = Vp::State::running;
        return t->index;
      }
      abort_run(deadlock_report());
      continue;
    }
    const Event e = queue_.pop();
    step();
    if ((stats_.events & 1023) == 0) {
      progress_.now_ps.store(now_, std::memory_order_relaxed);
      progress_.messages.store(stats_.messages, std::memory_order_relaxed);
    }
    if (e.t < now_) {  // an invariant of the model; never expected, but never silently wrong
      abort_run(fmt::format("internal error: an event at t={} ps was scheduled after t={} ps had been reached "
                            "(please report this with the command line)",
                            e.t, now_));
      continue;
    }
    now_ = e.t;
    ++stats_.events;
    if (now_ > opts_.time_limit) {
      abort_run(time_limit_report(opts_.time_limit, ""));
      continue;
    }
    switch (e.kind()) {
      case Ev::resume: {
        Vp& v = *static_cast<Vp*>(e.p);
        if (v.state == Vp::State::blocked && v.token == e.a) wake(v);
        break;
      }
      case Ev::barrier: wake(*static_cast<Vp*>(e.p)); break;
      default: network_->handle(e); break;
    }
    if (resume_next_ != kMain) {
      const int r = resume_next_;
      resume_next_ = kMain;
      count_segment();
      return r;
    }
  }
}

int Engine::next_to_unwind() {
  for (auto* all : {&vps_, &tasks_})
    for (auto& v : *all)
    if (v->state == Vp::State::blocked) {
      v->state = Vp::State::running;
        return v->index;
    }
  return kMain;
}

void Engine::wake(Vp& v) {
  v.state = Vp::State::running;
  v.busy_until_wake = v.clock;
  v.clock = std::max(v.clock, now_);
  resume_next_ = v.index;
}

void Engine::block(Vp& v, Vp::Block why, const Call& what) {
  // A VP's errno must not change because other VPs ran meanwhile (each would be a process of its
  // own): with fibers they share the host thread's errno, and with threads the hand-over's own
  // waits may set it.
  const int own_errno = errno;
  if (opts_.on_vp_pause) opts_.on_vp_pause(v.rank);
  v.block = why;
  v.pending = what;
  v.blocked_since = v.clock;
  v.state = Vp::State::blocked;
  ++v.token;
  progress_.running.store(-1, std::memory_order_relaxed);
  executor_->pass(v.index);
  progress_.running.store(v.rank, std::memory_order_relaxed);
  v.block = Vp::Block::none;
  if (opts_.on_vp_resume && !aborting_) opts_.on_vp_resume(v.rank, now_);
  errno = own_errno;
  if (aborting_) {
    // The evidence of a failed run shows where every VP was stuck when it failed.
    if (recorder_)
      recorder_->span(v.rank, "blocked", v.blocked_since, std::max(v.blocked_since, now_),
                      describe(v.pending) + " (when the run failed)");
    throw Aborted{};
  }
  if (recorder_ && v.clock > v.blocked_since) {
    // Name what ended the wait: the message a receive got (its arrow leads back to the sender).
    std::string what = describe(v.pending);
    for (const Op* op : v.waiting_ops)
      if (op->kind == Op::Kind::recv && op->matched)
        what += fmt::format("; got message #{} from {}, arrived t={} us", op->matched->id, op->matched->src,
                            to_us(op->matched->arrival));
    recorder_->span(v.rank, "blocked", v.blocked_since, v.clock, what);
  }
  if (opts_.perturb) enter(v);
}

void Engine::sync(Vp& v) {
  if (v.clock <= now_) return;
  queue_.push(v.clock, vp_order(v.rank), Ev::resume, &v, v.token + 1);
  block(v, Vp::Block::sync, Call{});
}

void Engine::enter(Vp& v) {
  if (am_->in_handler()) throw UsageError(am_->blocking_error());
  // The thread id first: it never changes once the VP runs, so checking it from a foreign thread
  // is race-free; only then the baton.
  if (!executor_->on_thread_of(v.index) || executor_->current() != v.index)
    throw UsageError(fmt::format("the Proc of rank {} was used from a thread that does not run its program", v.rank));
  if (aborting_) throw Aborted{};
  step();
  progress_.now_ps.store(std::max(now_, v.clock), std::memory_order_relaxed);
  progress_.messages.store(stats_.messages, std::memory_order_relaxed);
  if (opts_.stop_on_signals && Watchdog::pending_signal()) {
    abort_run(interrupted_report(&v));
    throw Aborted{};
  }
  // A clock past the limit stops the run at the VP's next call (checked_time.hpp, part 2).
  if (v.clock > opts_.time_limit) {
    abort_run(time_limit_report(opts_.time_limit, fmt::format("rank {}'s clock reached t={} us", v.rank, to_us(v.clock))));
    throw Aborted{};
  }
  if (opts_.perturb) {
    const std::uint64_t r = (*v.perturb_rng)();
    if (r % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds((r >> 8) % 200));
    else if (r % 8 == 1) sched_yield();
  }
}

}  // namespace touchstone::detail

namespace touchstone {
Proc* Proc::current() { return static_cast<Proc*>(detail::Executor::current_user()); }
}  // namespace touchstone

namespace touchstone::detail {

RunResult Engine::run(const Program& program) {
  const auto t0 = std::chrono::steady_clock::now();
  program_ = &program;
  for (auto& v : vps_) queue_.push(0, vp_order(v->rank), Ev::resume, v.get(), 0);
  {
    const Watchdog watchdog(opts_, progress_,
                            {[this](int rank) { return vps_[static_cast<std::size_t>(rank)]->host_thread; },
                             [this] { return write_evidence(true); }});
    start_vps();
  }
  if (races_) {  // before any ending: exploration goes on from failed runs too
    races_->on_run_end(vps_);
    if (opts_.on_races) opts_.on_races(races_->races(true));
  }

  if (!aborting_) {
    std::string unreceived;
    std::size_t count = 0;
    for (auto& v : vps_)
      for (const Msg* m = v->mailbox.unexpected(); m; m = m->next)
        if (++count <= 20) unreceived += describe_msg(*m);
    if (count)
      failure_ = fmt::format("the run finished with {} message(s) never received:\n{}{}", count, unreceived,
                             count > 20 ? "  ...\n" : "");
    for (const auto& s : misuse_) failure_ += s + "\n";
    if (failure_.empty() && forced_used_.size() < forced_.size()) {
      std::vector<ForcedMatch> unused;
      for (const auto& [key, src] : forced_)
        if (std::find(forced_used_.begin(), forced_used_.end(), key) == forced_used_.end())
          unused.push_back(ForcedMatch{key.first, key.second, src});
      throw UsageError(fmt::format("the schedule names no wildcard receive or probe of this run at {}",
                                   format_schedule(unused)));
    }
  }
  if (blame_) blame_->finish(now_);  // who blocked whom: waits still open end here
  // Every VP's clock, where it finished or where the failure left it, ends the hash.
  for (auto& v : vps_) hash_.add(0xf1, static_cast<std::uint64_t>(v->rank), static_cast<std::uint64_t>(v->clock));
  if (!failure_.empty()) {
    if (opts_.explain) failure_ += blame_->explain();
    // The races seen up to the failure are often its cause.
    if (races_ && !races_->races().empty())
      failure_ += (failure_.back() == '\n' ? "" : "\n") + std::string("Races up to the failure:\n") +
                  describe_races(races_->races());
    // The events up to the failure are deterministic, so their hash identifies the failed run
    // (a replay with --schedule must show it is the same run).
    const std::uint64_t h = hash_.value();
    failure_ += fmt::format("{}trace_hash {:016x} (of the run up to the failure)\n", failure_.back() == '\n' ? "" : "\n", h);
    if (failure_is_usage_) throw RunUsageError(failure_ + write_evidence(true), h);
    throw RunError(failure_ + write_evidence(true), h);
  }

  if (std::string held = held_requests(); !held.empty()) throw RunUsageError(held);
  RunResult res;
  close_batch();
  res.stats = stats_;
  for (auto& v : vps_) {
    res.finish_time.push_back(v->clock);
    res.sent.push_back(v->sent);
    res.makespan = std::max(res.makespan, v->clock);
  }
  res.trace_hash = hash_.value();
  if (opts_.explain) res.explanation = blame_->explain();
  if (races_) {
    res.races = races_->races();
    res.received = received_;
    if (opts_.races == RaceCheck::error && !res.races.empty()) {
      write_evidence(false);
      throw RunError(fmt::format("the run has message races (RaceCheck::error):\n{}trace_hash {:016x}\n",
                                 describe_races(res.races), res.trace_hash),
                     res.trace_hash);
    }
  }
  write_evidence(false);
  res.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

// Writes the trace and order log a run asked for. After a failure they hold everything up to it,
// and the returned note tells the user so.
std::string Engine::write_evidence(bool failed) {
  if (!recorder_) return {};
  if (!failed) {
    recorder_->write(opts_.trace_file, opts_.order_log_file, machine_.name, hash_.value(), false);
    return {};
  }
  for (const auto& v : vps_)
    for (const Msg* m = v->mailbox.unexpected(); m; m = m->next) recorder_->unreceived(m->id, m->dst, m->arrival);
  std::vector<std::string> files;
  if (!opts_.trace_file.empty()) files.push_back(fmt::format("the trace '{}'", opts_.trace_file));
  if (!opts_.order_log_file.empty()) files.push_back(fmt::format("the order log '{}'", opts_.order_log_file));
  try {
    recorder_->write(opts_.trace_file, opts_.order_log_file, machine_.name, hash_.value(), true);
  } catch (const std::exception& e) {
    return fmt::format("\nNo evidence written: {}\n", e.what());
  }
  Time upto = now_;  // a VP may have run ahead of the event loop before it failed
  for (const auto& v : vps_) upto = std::max(upto, v->clock);
  return fmt::format("\nWritten up to the failure at t={} us: {}.\n", to_us(upto), fmt::join(files, " and "));
}

Msg* Engine::new_msg() {
  Msg* m = msgs_.get();
  std::vector<std::uint32_t> path = std::move(m->path);
  std::vector<std::uint32_t> vc = std::move(m->vc);
  *m = Msg{};
  m->path = std::move(path);
  m->vc = std::move(vc);
  m->vc.clear();
  return m;
}

void Engine::free_msg(Msg* m) {
  m->payload = std::vector<std::byte>();  // payloads can be large: give the memory back now
  if (m->lender) m->lender->lent = nullptr;
  msgs_.put(m);
}

// Payloads are copied once, from the send buffer into the receive buffer, at the match (docs/model.md
// 1.5). Until then the message reads the sender's buffer, which the program may not change before its
// send completes (as in MPI). Only when the send completes (or its request is dropped) before the
// match -- a blocking send returns once its last packet has left, and the receive may be posted much
// later -- does the message take a copy of its own.
void Engine::keep_payload(Op* send) {
  Msg* m = send->lent;
  if (!m) return;
  // A failed run delivers nothing more, and its unwinding may already have freed the buffer.
  if (!aborting_) m->payload.assign(m->lent.begin(), m->lent.end());
  m->lent = {};
  m->lender = nullptr;
  send->lent = nullptr;
}

// The match: the message's bytes go into the receive buffer now, and the message lets go of them
// (its copy, if it had one, is freed; the sender's buffer is no longer read). A message longer than
// a receive that does not truncate is left alone: completing the receive reports it.
void Engine::deliver(Msg& m, Op& recv) {
  if (m.size > recv.buf.size() && !recv.truncating) return;
  const std::span<const std::byte> bytes = m.bytes();
  if (!bytes.empty()) std::memmove(recv.buf.data(), bytes.data(), std::min(bytes.size(), recv.buf.size()));
  if (m.lender) m.lender->lent = nullptr, m.lender = nullptr, m.lent = {};
  m.payload = std::vector<std::byte>();
}

Op* Engine::new_op() {
  Op* op = ops_.get();
  *op = Op{};
  op->engine = this;
  return op;
}

void Engine::free_op(Op* op) {
  op->group.reset();
  op->holder = nullptr;
  ops_.put(op);
}

// ---------------------------------------------------------------- groups

const GroupData& Engine::resolve(const Vp& v, const Group& g) const {
  return g.data() ? *g.data() : v.world_alias ? *v.world_alias : *world_;
}

std::shared_ptr<const GroupData> Engine::resolve_shared(const Vp& v, const Group& g) const {
  return g.data() ? g.shared_data() : v.world_alias ? v.world_alias : world_;
}

int Engine::to_world(const GroupData& g, int local, const char* what) const {
  if (local < 0 || local >= static_cast<int>(g.members.size()))
    throw UsageError(fmt::format("{} rank {} out of range: the group has {} member(s)", what, local, g.members.size()));
  return g.members[static_cast<std::size_t>(local)];
}

Group Engine::make_group(Vp& v, std::uint64_t parent_ctx, std::vector<int> members) {
  std::vector<int> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= machine_.nodes())
      throw UsageError(fmt::format("group member {} out of range 0..{}", sorted[i], machine_.nodes() - 1));
    if (i && sorted[i] == sorted[i - 1]) throw UsageError(fmt::format("rank {} appears twice in a group", sorted[i]));
  }
  // Members agree on the context without communicating: the n-th group with these members made
  // from this parent is the same group on every member (as MPI communicators are created in order).
  std::uint64_t h = 1469598103934665603ULL;
  for (int r : members) h = (h ^ static_cast<std::uint64_t>(r)) * 1099511628211ULL;
  const int nth = v.groups_made[{parent_ctx, h}]++;
  auto key = std::make_tuple(parent_ctx, members, nth);
  auto it = groups_.find(key);
  if (it == groups_.end()) it = groups_.emplace(std::move(key), new_group(std::move(members), next_ctx_++)).first;
  return Group(it->second);
}

Group Engine::split(Vp& v, const Group& parent, int color, int key) {
  const GroupData& g = resolve(v, parent);
  const int n = static_cast<int>(g.members.size());
  const int me = g.by_world.empty() ? -1 : [&] {
    auto it = std::lower_bound(g.by_world.begin(), g.by_world.end(), std::pair{v.rank, -1});
    return it != g.by_world.end() && it->first == v.rank ? it->second : -1;
  }();
  if (me < 0) throw UsageError(fmt::format("rank {} called split on a group it is not a member of", v.rank));
  // Bruck allgather of (color, key) over the parent, with real messages: after round k every
  // member knows the entries of members me .. me + 2^(k+1) - 1 (mod n).
  std::vector<std::int32_t> known(static_cast<std::size_t>(2 * n));
  known[0] = color;
  known[1] = key;
  int have = 1;
  const InCollective in(v, "split");
  for (int dist = 1, round = 0; dist < n; dist *= 2, ++round) {
    const int cnt = std::min(dist, n - dist);
    const int to = g.members[static_cast<std::size_t>((me - dist + n) % n)];
    const int from = g.members[static_cast<std::size_t>((me + dist) % n)];
    auto out = std::as_bytes(std::span(known.data(), static_cast<std::size_t>(2 * cnt)));
    auto in = std::as_writable_bytes(std::span(known.data() + 2 * have, static_cast<std::size_t>(2 * cnt)));
    std::vector<std::int32_t> sendcopy(out.size() / 4);
    std::memcpy(sendcopy.data(), out.data(), out.size());
    Op* s = post_send(v, to, round, g.ctx | kInternalCtx | (1ULL << 62), std::as_bytes(std::span(sendcopy)));
    Op* r = post_recv(v, from, round, g.ctx | kInternalCtx | (1ULL << 62), nullptr, in);
    wait(v, r);
    wait(v, s);
    have += cnt;
  }
  if (color < 0) return Group(new_group({}, 0));
  std::vector<std::tuple<int, int, int>> same;  // (key, parent rank, world rank)
  for (int i = 0; i < n; ++i) {
    const int who = (me + i) % n;
    if (known[static_cast<std::size_t>(2 * i)] == color)
      same.emplace_back(known[static_cast<std::size_t>(2 * i + 1)], who, g.members[static_cast<std::size_t>(who)]);
  }
  std::sort(same.begin(), same.end());
  std::vector<int> members;
  for (auto& [k, pr, w] : same) members.push_back(w);
  return make_group(v, g.ctx ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(color)) << 32), std::move(members));
}

// ---------------------------------------------------------------- point-to-point

Op* Engine::isend(Vp& v, const Group& g, int dst, int tag, std::span<const std::byte> data, bool synchronous) {
  enter(v);
  const GroupData& gd = resolve(v, g);
  const int world_dst = to_world(gd, dst, "destination");
  if (tag < 0) throw UsageError(fmt::format("send tag must be >= 0 (got {})", tag));
  Op* op = post_send(v, world_dst, tag, gd.ctx, data, synchronous);
  return op;
}

// A synchronous send completes at the later of its last packet leaving and the match.
void Engine::on_matched(Msg& m, Time t) {
  Op* op = m.sync_op;
  m.sync_op = nullptr;
  op->matched_at = t;
  if (op->left == kNever) return;
  op->done = std::max(op->left, t);
  if (op->dropped) return free_op(op);
  Vp& v = *op->vp;
  if (op->awaited && v.state == Vp::State::blocked) queue_.push(op->done, vp_order(v.index), Ev::resume, &v, v.token);
}

Msg* Engine::make_msg(int src, int dst, int tag, std::uint64_t ctx, std::size_t size) {
  Msg* m = new_msg();
  m->id = next_msg_id_++;
  m->src = src;
  m->dst = dst;
  m->tag = tag;
  m->ctx = ctx;
  m->size = size;
  return m;
}

// The send's tail (docs/model.md 2.19): the sender's CPU does the last send_tail of a send's
// set-up after the hand-over, so a send whose CPU work ends at `done` hands its message over
// send_tail earlier. Never before the send began: no event is posted before the sender's clock.
Time Engine::after_tail(int src, Time start, Time done) const {
  const Time tail = machine_.costs_of(src).send_tail;
  return tail > 0 ? std::max(start, done - tail) : done;
}

void Engine::hand_over(Msg* m, Time start, Time handed) {
  // Control messages and rendezvous data hash apart from eager messages (whose hash is unchanged).
  const std::uint64_t proto = static_cast<std::uint64_t>(m->proto) * 0x9e3779b9ULL;
  hash_.add(m->id, static_cast<std::uint64_t>(m->src) << 32 | static_cast<std::uint32_t>(m->dst),
            (static_cast<std::uint64_t>(start) ^ (m->ctx * 31 + static_cast<std::uint64_t>(m->tag)) ^ (m->size << 40)) + proto);
  ++stats_.messages;
  ++vps_[static_cast<std::size_t>(m->src)]->sent;
  stats_.payload_bytes += m->size;
  // The trace's send span is the CPU's work, to `handed`; the message leaves before that by the
  // send's tail (docs/model.md 2.19).
  if (recorder_) {
    using Wire = Recorder::Wire;
    switch (m->proto) {
      case Msg::Proto::eager:
        recorder_->sent(m->id, m->src, m->dst, m->tag, m->size, start, handed, is_am_reply(m->ctx));
        break;
      case Msg::Proto::rts:
        recorder_->sent(m->rdv->id, m->src, m->dst, m->tag, m->rdv->size, start, handed, false,
                        Wire::rendezvous_request);
        break;
      case Msg::Proto::cts:
        recorder_->sent(m->rdv->id, m->src, m->dst, m->tag, 0, start, handed, false, Wire::clear_to_send);
        break;
      case Msg::Proto::rdv_data:
        recorder_->sent(m->id, m->src, m->dst, m->tag, m->size, start, handed, false, Wire::rendezvous_data);
        break;
    }
  }
  handed = after_tail(m->src, start, handed);
  // Send overlap (docs/model.md 2.15): the packets leave as the CPU writes them, the first one when
  // the per-message overhead and its own share of the work are done.
  const std::size_t n = machine_.net.packets(m->size);
  if (n > 1 && machine_.costs_of(m->src).send_overlap) {
    const NodeCosts& c = machine_.costs_of(m->src);
    m->send_base = handed - machine_.send_body_cost(m->src, m->size);
    const auto first = std::min<Time>(static_cast<Time>(m->size), machine_.net.packet_payload);
    handed = m->send_base + c.send_per_packet + first * c.send_per_byte;
  }
  network_->post(m, handed);
}

// A message whose CPU costs alone pass the time limit stops the run before any of its
// costs is computed unchecked (checked_time.hpp, part 2). In a handler (an active-message reply)
// the handler's failure report carries it.
void Engine::check_message_time(int src, int dst, std::size_t bytes) {
  const std::string why = check_message_cost(machine_, src, dst, bytes, opts_.time_limit);
  if (why.empty()) return;
  if (am_->in_handler()) throw UsageError(time_limit_report(opts_.time_limit, why));
  abort_run(time_limit_report(opts_.time_limit, why));
  throw Aborted{};
}

Op* Engine::post_send(Vp& v, int dst, int tag, std::uint64_t ctx, std::span<const std::byte> data, bool synchronous) {
  check_message_time(v.rank, dst, data.size());
  const bool eager = goes_eager(v, dst, ctx, data.size());
  Msg* m = make_msg(v.rank, dst, tag, ctx, data.size());
  Op* op = new_op();
  op->engine = this;
  op->kind = Op::Kind::send;
  op->owner = v.rank;
  op->vp = &v;
  // An active message's send completes at once (its caller's buffer is gone): it keeps a copy.
  if (ctx & kAmCtx) m->payload.assign(data.begin(), data.end());
  else if (!opts_.phantom_payloads && !data.empty()) m->lent = data, m->lender = op, op->lent = m;
  op->msg_id = m->id;
  op->dst = dst;
  op->size = m->size;
  m->send_op = op;
  const Time start = v.clock;
  if (races_) races_->on_send(v.rank, *m);
  if (eager) {
    // A synchronous send completes when it is matched too (a rendezvous is matched before its data
    // leaves, so only an eager one needs to be told).
    if (synchronous) op->synchronous = true, m->sync_op = op;
    m->buffered = machine_.net.flow_control() && machine_.net.recv_buffer >= 0;  // reserved by goes_eager
    v.clock += machine_.send_cost(v.rank, m->size);
    hand_over(m, start, v.clock);
    return op;
  }
  // Rendezvous (docs/model.md 2.16): only the request to send leaves now, a 0-byte message with the
  // envelope; the data waits, with its payload, for the receiver's clear to send.
  op->rendezvous = true;
  m->proto = Msg::Proto::rdv_data;
  Msg* rts = make_msg(v.rank, dst, tag, ctx, 0);
  rts->proto = Msg::Proto::rts;
  rts->rdv = m;
  rts->vc = m->vc;  // the request's match is the send's match (race detection)
  v.clock += machine_.send_cost(v.rank, 0);
  hand_over(rts, start, v.clock);
  return op;
}

// Flow control (docs/model.md 2.16): eager when the message is at most eager_limit bytes and, with a
// bounded buffer, fits the receiver's free buffer at the sender's clock (reserved then). To read the
// buffer at that virtual time, the sender first lets the event loop catch up with its clock.
// Active messages (handled on arrival) and 0-byte messages (they need no buffer) are always eager.
bool Engine::goes_eager(Vp& v, int dst, std::uint64_t ctx, std::size_t size) {
  const NetworkParams& net = machine_.net;
  if (!net.flow_control() || (ctx & kAmCtx) || size == 0) return true;
  if (size > static_cast<std::uint64_t>(net.eager_limit)) return false;
  if (net.recv_buffer < 0) return true;
  sync(v);
  return network_->reserve_buffer(dst, size);
}

// The receive `op` of v has matched the request to send `rts` at virtual time `at`: v's CPU takes
// the request (the receive cost of a 0-byte message) and sends the clear to send (the send cost of
// one), charged to its clock like an active-message handler (docs/model.md 7). The data will
// complete op directly: it needs no buffer space, and its matching cost is the request's.
void Engine::clear_to_send(Vp& v, Op* op, Msg* rts, Time at) {
  Msg* data = rts->rdv;
  data->rdv_recv = op;
  data->examined = rts->examined;
  op->awaiting_data = true;
  op->msg_id = data->id;
  const Time handed = at + machine_.recv_cost(v.rank, 0) + machine_.send_cost(v.rank, 0);
  v.clock = std::max(v.clock, at) + (handed - at);
  Msg* cts = make_msg(v.rank, rts->src, 0, 0, 0);  // never matched: it is handled on arrival
  cts->proto = Msg::Proto::cts;
  cts->rdv = data;
  hash_.add(rts->id, 0xc75, static_cast<std::uint64_t>(at));
  free_msg(rts);
  hand_over(cts, at, handed);
}

// The clear to send is back at the sender at t: its CPU takes it and sends the data (receive cost
// of a 0-byte message, send cost of the data), charged to its clock like a handler. The send
// request completes when the data's last packet has left (on_send_done).
void Engine::on_clear_to_send(Msg& cts, Time t) {
  Msg* data = cts.rdv;
  Vp& v = data->send_op ? *data->send_op->vp : *vps_[static_cast<std::size_t>(cts.dst)];  // the sender's VP or task
  const Time handed = t + machine_.recv_cost(v.rank, 0) + machine_.send_cost(v.rank, data->size);
  v.clock = std::max(v.clock, t) + (handed - t);
  free_msg(&cts);
  hand_over(data, t, handed);
}

void Engine::on_rendezvous_data(Msg& m, Time t) {
  Op* op = m.rdv_recv;
  op->awaiting_data = false;
  if (op->dropped) {  // its request was destroyed (already reported as misuse)
    free_msg(&m);
    free_op(op);
    return;
  }
  op->matched = &m;
  deliver(m, *op);
  hash_.add(m.id, 0x3a7c, static_cast<std::uint64_t>(t));
  if (Vp& v = *op->vp; op->awaited && v.state == Vp::State::blocked) wake(v);
}

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
  for (std::size_t i = 0; i < dsts.size(); ++i) world[i] = to_world(gd, dsts[i], "destination");
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
  ++v.sent;
  for (std::size_t k = 0; k < order.size(); ++k) {
    Msg* m = k == 0 ? lead : new_msg();
    lead->branch[k] = m;
    m->id = next_msg_id_++;
    m->src = v.rank;
    m->dst = order[k];
    m->tag = tag;
    m->ctx = gd.ctx;
    m->size = data.size();
    if (!opts_.phantom_payloads) m->payload.assign(data.begin(), data.end());
    hash_.add(m->id, static_cast<std::uint64_t>(v.rank) << 32 | static_cast<std::uint32_t>(m->dst),
              static_cast<std::uint64_t>(start) ^ (gd.ctx * 31 + static_cast<std::uint64_t>(tag)) ^ (m->size << 40) ^ 0x3c);
    ++stats_.messages;
    stats_.payload_bytes += m->size;
    if (races_) {
      if (k == 0) races_->on_send(v.rank, *m);
      else m->vc = lead->vc;  // one send event: every branch carries the same vector
    }
    if (recorder_) recorder_->sent(m->id, v.rank, m->dst, tag, m->size, start, v.clock);
  }
  op->msg_id = lead->id;
  op->dst = lead->dst;
  lead->send_op = op;
  network_->post(lead, after_tail(v.rank, start, v.clock));
  return op;
}

Op* Engine::irecv(Vp& v, const Group& g, int src, int tag, std::span<std::byte> buf, bool truncating) {
  enter(v);
  const GroupData& gd = resolve(v, g);
  const int world_src = src == any_source ? any_source : to_world(gd, src, "source");
  if (tag < 0 && tag != any_tag) throw UsageError(fmt::format("receive tag must be >= 0 or any_tag (got {})", tag));
  Op* op = post_recv(v, world_src, tag, gd.ctx, resolve_shared(v, g), buf);
  op->truncating = truncating;
  return op;
}

Op* Engine::post_recv(Vp& v, int src, int tag, std::uint64_t ctx, std::shared_ptr<const GroupData> g,
                      std::span<std::byte> buf) {
  ++v.actions;
  Op* op = new_op();
  op->engine = this;
  op->kind = Op::Kind::recv;
  op->owner = v.rank;
  op->vp = &v;
  op->src = src;
  op->tag = tag;
  op->ctx = ctx;
  op->group = std::move(g);
  op->buf = buf;
  op->posted = v.clock;
  op->call = ++v.home->recv_calls;  // one numbering per rank: its tasks' receives count too
  if (src == any_source && !forced_.empty()) {
    op->src = forced_source(v, op->call, src, op->group.get());
    op->forced = op->src != any_source;
  }
  // The earliest-arrived matching message that is already here; anything arriving later is later.
  if (Msg* m = v.home->mailbox.post(op)) {
    if (races_) races_->on_match(v.rank, *op, *m, v.label);  // the match is decided here, also for a request to send
    if (m->proto == Msg::Proto::rts) {
      clear_to_send(v, op, m, v.clock);
    } else {
      op->matched = m;
      deliver(*m, *op);
      if (m->sync_op) on_matched(*m, v.clock);
    }
  }
  return op;
}

void Engine::on_send_done(Msg& m, Time t) {
  Op* op = m.send_op;
  if (!op) return;  // a request or clear to send: nobody waits for it to leave
  m.send_op = nullptr;
  if (op->synchronous) {
    op->left = t;
    if (op->matched_at == kNever) return;  // on_matched completes it
    t = std::max(t, op->matched_at);
  }
  op->done = t;
  if (op->dropped) {
    free_op(op);
    return;
  }
  Vp& v = *op->vp;
  if (op->awaited && v.state == Vp::State::blocked) queue_.push(t, vp_order(v.index), Ev::resume, &v, v.token);
}

void Engine::on_arrival(Msg& m, Time t) {
  if (is_am_request(m.ctx)) {
    if (races_) races_->on_handler(m.dst, m);
    return am_->on_request(m, t);
  }
  if (m.proto == Msg::Proto::cts) return on_clear_to_send(m, t);
  if (m.proto == Msg::Proto::rdv_data) return on_rendezvous_data(m, t);
  Vp& v = *vps_[static_cast<std::size_t>(m.dst)];
  // Matching cost (docs/model.md 2.5) counts in virtual time (Mailbox::arrive).
  if (Op* op = v.mailbox.arrive(m, t)) {
    if (races_) races_->on_match(v.rank, *op, m, v.label);
    // The receive's poster (the rank's VP or one of its tasks) takes it.
    Vp& by = *op->vp;
    if (m.proto == Msg::Proto::rts) return clear_to_send(by, op, &m, std::max(t, op->posted));
    op->matched = &m;
    deliver(m, *op);
    // A receive the VP posted ahead of the event loop matches at its posting time, not before.
    if (m.sync_op) on_matched(m, std::max(t, op->posted));
    hash_.add(m.id, 0x3a7c, static_cast<std::uint64_t>(t));
    if (op->awaited && by.state == Vp::State::blocked) wake(by);
    return;
  }
  auto probing = [&](const Vp& w) {
    return w.state == Vp::State::blocked && w.block == Vp::Block::probe && m.ctx == w.probe_ctx &&
           (w.probe_src == any_source || w.probe_src == m.src) && (w.probe_tag == any_tag || w.probe_tag == m.tag);
  };
  if (probing(v)) return wake(v);
  for (Vp* t : tasks_of_[static_cast<std::size_t>(v.rank)])
    if (probing(*t)) return wake(*t);
}

// Demultiplexing per packet (docs/model.md 2.18): a packet of m that does not continue the message
// its node took last is matched again, with the search of an arrival at t (model.md 2.5), paid with
// m's receive. Messages handled on arrival (active messages, clear to send) and rendezvous data (it
// goes to the receive its request matched) are not searched for.
void Engine::on_packet_resumed(Msg& m, Time t) {
  if (is_am_request(m.ctx) || m.proto != Msg::Proto::eager) return;
  const std::uint64_t e = vps_[static_cast<std::size_t>(m.dst)]->mailbox.examined_by(m, t);
  constexpr std::uint64_t most = std::numeric_limits<std::uint32_t>::max();  // times 1 ms still fits Time
  m.examined = static_cast<std::uint32_t>(std::min<std::uint64_t>(m.examined + e, most));
  m.resumed = static_cast<std::uint32_t>(std::min<std::uint64_t>(m.resumed + 1ULL, most));
}

Status Engine::complete_recv(Vp& v, Op*& op, Time waiting_since) {
  ++v.actions;
  Msg* m = op->matched;
  Status st;
  st.source = op->group ? [&] {
    auto it = std::lower_bound(op->group->by_world.begin(), op->group->by_world.end(), std::pair{m->src, -1});
    return it->second;
  }() : m->src;
  st.tag = m->tag;
  st.size = m->size;
  st.arrival = m->arrival;
  st.truncated = m->size > op->buf.size();
  if (st.truncated && !op->truncating) {
    const std::string err = fmt::format("rank {}: message #{} from {} (tag {}) has {} bytes, more than the receive "
                                        "buffer of {} bytes",
                                        v.rank, m->id, m->src, m->tag, m->size, op->buf.size());
    free_msg(m);
    free_op(op);
    op = nullptr;
    throw UsageError(err);
  }
  const NodeCosts& c = machine_.costs_of(v.rank);
  const Time start = std::max(v.clock, m->arrival);
  // Matching is CPU work too: every queue entry examined, on arrival (posted receives) and when
  // the receive was posted (unexpected messages), is paid when the receive completes.
  // With demultiplexing per packet (2.18) the packets matched again add their searches to
  // m->examined and a fixed switch time each.
  const Time matching = static_cast<Time>(m->examined + op->examined) * c.match_per_entry +
                        static_cast<Time>(m->resumed) * c.demux_switch;
  // With receive overlap (docs/model.md 2.15) the CPU drains the packets from max(clock, their
  // arrival) on, one after another; the per-message part and matching follow the last one. Its
  // CPU is free to drain from the start of the wait, but not while active-message handlers that
  // ran during the wait held it: those pushed the clock to busy_until_wake (taking the
  // start of the wait alone would end the receive before its own start, and the clock ran backwards).
  const Time body = machine_.recv_body_cost(v.rank, m->size);
  const Time cpu_free = std::max(waiting_since, v.busy_until_wake);
  const Time drained = c.recv_overlap ? std::max(cpu_free + body, m->drained) : start + body;
  v.clock = drained + c.recv_overhead + matching;
  network_->release_buffer(*m, v.clock);
  if (races_) {
    races_->on_complete(v.rank, *op, *m);
    if (!is_internal(m->ctx) && !(m->ctx & kAmCtx)) {
      // The data a VP received, for exploration's "other data received" (explore.cpp).
      std::uint64_t h = received_[static_cast<std::size_t>(v.rank)] * 0x100000001b3ULL;
      h ^= static_cast<std::uint64_t>(m->src) << 40 ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(m->tag)) ^
           m->size << 20;
      // The bytes are in the receive buffer since the match (deliver); phantom messages carry none.
      const std::span<const std::byte> got =
          opts_.phantom_payloads ? std::span<const std::byte>() : std::span<const std::byte>(op->buf).first(std::min(m->size, op->buf.size()));
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < got.size(); i += 8) {
        const std::size_t k = std::min<std::size_t>(8, got.size() - i);
        word = 0;
        std::memcpy(&word, got.data() + i, k);
        h = (h ^ word) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
      }
      received_[static_cast<std::size_t>(v.rank)] = h;
    }
  }
  hash_.add(m->id, 0x5ec, static_cast<std::uint64_t>(v.clock));
  if (recorder_) recorder_->received(m->id, m->src, v.rank, m->tag, m->size, m->arrival, start, v.clock);
  free_msg(m);
  free_op(op);
  op = nullptr;
  return st;
}

void Engine::complete_send(Vp& v, Op*& op) {
  v.clock = std::max(v.clock, op->done);
  keep_payload(op);  // the program may reuse its buffer from now on
  free_op(op);
  op = nullptr;
}

std::string describe_op(const OpSummary& op) {
  if (op.kind == Op::Kind::send && op.rendezvous)
    return fmt::format("send of message #{} to rank {} ({} bytes, rendezvous: waiting for the receiver to post a "
                       "matching receive)",
                       op.msg_id, op.dst, op.size);
  if (op.kind == Op::Kind::send) return fmt::format("send of message #{} to {}", op.msg_id, op.dst);
  if (op.kind == Op::Kind::task) return fmt::format("task of rank {} (spawned with Proc::spawn)", op.owner);
  if (op.awaiting_data)
    return fmt::format("recv(source={}, tag={}), waiting for the data of rendezvous message #{}", rank_str(op.src),
                       tag_str(op.tag), op.msg_id);
  // A forced wildcard says so: the program asked for any source, the schedule picked this one
  // (a schedule that picks a rank whose message never comes deadlocks here).
  if (op.forced)
    return fmt::format("recv(source=any, tag={}), forced by --schedule {}:{}={} to take rank {}'s message",
                       tag_str(op.tag), op.owner, op.call, op.src, op.src);
  return fmt::format("recv(source={}, tag={})", rank_str(op.src), tag_str(op.tag));
}

std::string describe(const Call& c) {
  switch (c.form) {
    case Call::Form::sync: return "catching up with virtual time";
    case Call::Form::wait_for: return "wait for " + describe_op(c.op);
    case Call::Form::waitall_recvs: return fmt::format("waitall on {} receive(s)", c.count);
    case Call::Form::waitall_for: return "waitall for " + describe_op(c.op);
    case Call::Form::waitany: return fmt::format("waitany on {} request(s)", c.count);
    case Call::Form::probe: return fmt::format("probe(source={}, tag={})", rank_str(c.src), tag_str(c.tag));
    case Call::Form::iprobe: return fmt::format("iprobe(source={}, tag={})", rank_str(c.src), tag_str(c.tag));
    case Call::Form::test_of: return "test of " + describe_op(c.op);
    case Call::Form::barrier: return fmt::format("barrier of a group of {}", c.count);
  }
  return {};
}

void Engine::await_ops(Vp& v, std::span<Op* const> ops, bool all) {
  v.waiting_ops.clear();
  v.waits_for_all = all;
  for (Op* op : ops)
    if (op) op->awaited = true, v.waiting_ops.push_back(op);
}

void Engine::unawait_ops(Vp& v, std::span<Op* const> ops) {
  for (Op* op : ops)
    if (op) op->awaited = false;
  v.waiting_ops.clear();
}

// A request is completed only by the VP that started it. Another VP's wait or test would otherwise
// block as a misleading "application deadlock" (and race with the owner's).
static void check_owner(const Vp& v, std::span<Op* const> ops, const char* call) {
  for (const Op* op : ops)
    if (op && op->owner != v.rank)
      throw UsageError(fmt::format("rank {} called {} on a request of rank {} (its {}): only the VP that started a "
                                   "request may complete it",
                                   v.rank, call, op->owner, describe_op(*op)));
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
    if (op->kind == Op::Kind::recv && op->matched) return complete_recv(v, op, since);
    Op* one[] = {op};
    await_ops(v, one, true);
    block(v, Vp::Block::ops, Call::on(Call::Form::wait_for, *op));
    unawait_ops(v, one);
  }
}

std::vector<Status> Engine::waitall(Vp& v, std::span<Op*> ops) {
  enter(v);
  check_owner(v, ops, "waitall");
  std::vector<Status> st(ops.size());
  // Receives cost CPU time, so they are completed in the order their messages arrived; sends cost
  // nothing more, so they only raise the clock to their completion times.
  Time since = v.clock;
  for (;;) {
    std::size_t best = ops.size();
    bool pending = false;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Op* op = ops[i];
      if (!op || op->kind != Op::Kind::recv) continue;
      pending = true;
      if (op->matched && (best == ops.size() || op->matched->arrival < ops[best]->matched->arrival)) best = i;
    }
    if (!pending) break;
    if (best < ops.size()) {
      st[best] = complete_recv(v, ops[best], since);
      since = v.clock;
      continue;
    }
    std::size_t waiting = 0;
    v.waiting_ops.clear();
    v.waits_for_all = true;
    for (Op* op : ops)
      if (op && op->kind == Op::Kind::recv) op->awaited = true, v.waiting_ops.push_back(op), ++waiting;
    block(v, Vp::Block::ops, Call::counting(Call::Form::waitall_recvs, waiting));
    unawait_ops(v, ops);
  }
  for (auto& op : ops) {
    if (!op) continue;
    while (op->done == kNever) {
      Op* one[] = {op};
      await_ops(v, one, true);
      block(v, Vp::Block::ops, Call::on(Call::Form::waitall_for, *op));
      unawait_ops(v, one);
    }
    complete_send(v, op);
  }
  return st;
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
        if (st) *st = s;
      } else {
        complete_send(v, ops[best]);
        if (st) *st = Status{};
      }
      return best;
    }
    await_ops(v, ops, false);
    if (best < ops.size()) queue_.push(best_t, vp_order(v.rank), Ev::resume, &v, v.token + 1);
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
  if (!done() && !completes_by_itself) futile_poll(v, reinterpret_cast<std::uintptr_t>(op) * 2, Call::on(Call::Form::test_of, *op));
  if (done()) {
    if (op->kind != Op::Kind::recv) {
      complete_send(v, op);
      if (st) *st = Status{};
    } else {
      Status s = complete_recv(v, op, v.clock);
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
  ++v.actions;  // the world changed for this VP: a poll loop around it is not futile
  v.mailbox.cancel(op);
  hash_.add(op->call, 0xca9c, static_cast<std::uint64_t>(v.clock) ^ static_cast<std::uint64_t>(v.rank) << 48);
  free_op(op);
  op = nullptr;
  return true;
}

std::optional<Status> Engine::probe(Vp& v, const Group& g, int src, int tag, bool blocking) {
  enter(v);
  const GroupData& gd = resolve(v, g);
  const int world_src = src == any_source ? any_source : to_world(gd, src, "source");
  Op pattern;
  pattern.src = world_src;
  pattern.tag = tag;
  pattern.ctx = gd.ctx;
  pattern.posted = v.clock;
  pattern.call = ++v.home->recv_calls;
  if (world_src == any_source && !forced_.empty()) {
    pattern.src = forced_source(v, pattern.call, world_src, &gd);
    pattern.forced = pattern.src != any_source;
  }
  auto find = [&]() -> std::optional<Status> {
    const Msg* m = v.home->mailbox.find(pattern);
    if (!m) return std::nullopt;
    auto it = std::lower_bound(gd.by_world.begin(), gd.by_world.end(), std::pair{m->src, -1});
    if (races_) races_->on_probe(v.rank, pattern, *m, v.label);
    v.clock = std::max(v.clock, m->arrival);
    return Status{it->second, m->tag, m->envelope_size(), m->arrival};
  };
  if (auto s = find()) return s;
  if (!blocking) {
    sync(v);
    if (auto s = find()) return s;
    futile_poll(v, (static_cast<std::uint64_t>(static_cast<std::uint32_t>(world_src)) << 32 ^
                    static_cast<std::uint32_t>(tag) ^ gd.ctx * 0x9e3779b97f4a7c15ULL) | 1,
                Call{Call::Form::iprobe, {}, 0, src, tag});
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
  op->holder = nullptr;  // its Request lets it go
  if (op->kind != Op::Kind::recv) {
    keep_payload(op);  // nobody will wait for it: its buffer may change or go at any moment
    if (op->done == kNever) op->dropped = true; else free_op(op);  // on_send_done or on_matched frees it
    return;
  }
  Vp& v = *vps_[static_cast<std::size_t>(op->owner)];
  if (!aborting_)
    misuse_.push_back(fmt::format("rank {}: a receive request ({}) was destroyed without being completed",
                                  op->owner, describe_op(*op)));
  if (op->awaiting_data) {  // the rendezvous data is on its way and frees op when it arrives
    op->dropped = true;
    return;
  }
  if (op->matched) free_msg(op->matched); else v.mailbox.cancel(op);
  free_op(op);
}

// ---------------------------------------------------------------- time and barrier

// A forced match (RunOptions::schedule): wildcard receive or probe `call` of v takes the next
// matching message from the forced source. Its timing stays the model's: the receive is posted
// when the program posts it and completes when that message has arrived, as a receive naming the
// source would (docs/debugging.md).
int Engine::forced_source(Vp& v, std::uint64_t call, int src, const GroupData* g) {
  auto it = forced_.find({v.rank, call});
  if (it == forced_.end()) return src;
  if (g && !std::binary_search(g->by_world.begin(), g->by_world.end(), std::pair{it->second, -1},
                               [](const auto& a, const auto& b) { return a.first < b.first; }))
    throw UsageError(fmt::format("schedule entry {}:{}={}: rank {} is not in the receive's group", v.rank, call,
                                 it->second, it->second));
  forced_used_.push_back(it->first);
  return it->second;
}

// A VP that only polls while nothing can change is a livelock (docs/debugging.md). After sync(v)
// the event loop has committed everything up to v's clock; an empty queue then means every other
// VP is blocked without a timed wake-up or finished, and nothing is in flight: only v can still
// act. If v polls the same thing twice without acting in between (sending, receiving, posting a
// receive, entering a barrier), its loop is futile: the run stops here, naming the rank, instead
// of spinning until the time limit.
void Engine::futile_poll(Vp& v, std::uint64_t key, const Call& what) {
  if (!queue_.empty()) {
    v.futile_polls.clear();
    return;
  }
  if (v.quiet_since != v.actions) {
    v.quiet_since = v.actions;
    v.futile_polls.clear();
  }
  if (std::find(v.futile_polls.begin(), v.futile_polls.end(), key) == v.futile_polls.end()) {
    v.futile_polls.push_back(key);
    return;
  }
  std::string others;
  for (const auto& w : vps_)
    if (w->state == Vp::State::blocked)
      others += fmt::format("  rank {} blocked since t={} us in {}{}\n", w->rank, to_us(w->blocked_since),
                            describe_wait(*w), w->label.empty() ? "" : " at " + w->label);
  abort_run(fmt::format("livelock at t={} us: rank {} polls in a loop ({}{}) but nothing can change: every other VP "
                        "is blocked or finished, nothing is in flight, and rank {} has neither sent nor received since "
                        "its first futile poll.\n{}",
                        to_us(v.clock), v.rank, describe(what), v.label.empty() ? "" : " at " + v.label, v.rank,
                        others.empty() ? "No other VP is blocked.\n" : "The other VPs:\n" + others));
  now_ = std::max(now_, v.clock);
  throw Aborted{};
}

void Engine::compute(Vp& v, Time dt) {
  enter(v);
  if (dt < 0) throw UsageError(fmt::format("rank {}: compute with a negative duration ({} ps)", v.rank, dt));
  // The clock is at most the limit here (enter), so the difference cannot overflow.
  if (dt > opts_.time_limit - v.clock) {
    abort_run(time_limit_report(opts_.time_limit, fmt::format("rank {} called compute({} ps) at t={} us", v.rank, dt,
                                                              to_us(v.clock))));
    throw Aborted{};
  }
  if (recorder_ && dt > 0) recorder_->span(v.rank, "compute", v.clock, v.clock + dt);
  v.clock += dt;
}

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
    BarrierState& b = barriers_[gd.ctx];
    ++b.arrived;
    b.latest = std::max(b.latest, v.clock);
    if (b.arrived < static_cast<int>(gd.members.size())) {
      b.waiting.push_back(&v);
      v.barrier_ctx = gd.ctx;
      block(v, Vp::Block::barrier, Call::counting(Call::Form::barrier, gd.members.size()));
    } else {
      const Time release = b.latest + machine_.net.barrier_latency;
      if (races_) races_->on_barrier(gd.members);
      for (Vp* w : b.waiting) queue_.push(release, vp_order(w->rank), Ev::barrier, w);
      barriers_.erase(gd.ctx);
      v.clock = release;
    }
  }
  if (recorder_) recorder_->span(v.rank, "barrier", start, v.clock);
}

// Dissemination barrier (Hensgen, Finkel, Manber): in round k member i signals i + 2^k and waits
// for i - 2^k; after ceil(log2 n) rounds everyone has heard from everyone.
void Engine::software_barrier(Vp& v, const GroupData& g) {
  const int n = static_cast<int>(g.members.size());
  const int me = std::lower_bound(g.by_world.begin(), g.by_world.end(), std::pair{v.rank, -1})->second;
  const InCollective in(v, "barrier");
  for (int dist = 1, round = 0; dist < n; dist *= 2, ++round) {
    Op* s = post_send(v, g.members[static_cast<std::size_t>((me + dist) % n)], round, g.ctx | kInternalCtx, {});
    Op* r = post_recv(v, g.members[static_cast<std::size_t>((me - dist + n) % n)], round, g.ctx | kInternalCtx,
                      nullptr, {});
    wait(v, r);
    wait(v, s);
  }
}

// ---------------------------------------------------------------- reports

std::string Engine::describe_msg(const Msg& m) const {
  if (m.proto == Msg::Proto::rts)
    return fmt::format("  request to send message #{} from {} to {}, tag {}, {} bytes (rendezvous), arrived t={} us\n",
                       m.rdv->id, m.src, m.dst, m.tag, m.rdv->size, to_us(m.arrival));
  return fmt::format("  message #{} from {} to {}, tag {}, {} bytes, arrived t={} us\n", m.id, m.src, m.dst, m.tag,
                     m.size, to_us(m.arrival));
}

}  // namespace touchstone::detail
