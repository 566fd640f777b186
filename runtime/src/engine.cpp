#include "engine.hpp"

#include "active_messages.hpp"
#include "checked_time.hpp"
#include "sorted.hpp"

#include <sched.h>

#include <thread>
#include <tuple>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <exception>
#include <chrono>
#include <limits>
#include <memory>
#include <new>
#include <cstring>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::detail {

namespace {
// The calling host thread's errno, asked anew. A VP's fiber may go on on another host thread after
// a switch (the parallel turns), and glibc declares __errno_location const, so the compiler may
// compute errno's address once before the switch and write the first thread's errno after it.
// Kept out of line, with an empty asm that may touch memory, so that neither GCC nor Clang takes
// this function for const in turn and merges its calls.
[[gnu::noinline]] int& errno_here() {
  asm volatile("" ::: "memory");
  return errno;
}
}  // namespace

// ---------------------------------------------------------------- set-up and the baton

// Every message touches its sender's and receiver's Vp: kept small, 256 VPs' Vps stay in the cache
// (672 bytes when measured; it was 3.2 KB with a random generator inline, docs/performance.md).
static_assert(sizeof(Vp) <= 1024, "Vp grew past 1 KiB: keep rarely used state out of line");

Engine::Engine(const Machine& machine, const RunOptions& options)
    : machine_(machine),
      opts_(options),
      copier_(options.execution == Execution::fibers &&
              (options.host_cores > 1 || (options.host_cores == 0 && available_host_cores() > 1))),
      groups_(machine.nodes()),
      world_(groups_.world()),
      instruments_(machine.nodes(), opts_) {
  const int n = machine.nodes();
  // A sixteenth of a hop per bucket: a header's next hop lands some buckets ahead (event_queue.hpp).
  queue_.set_resolution(machine.net.hop_time > 0 ? machine.net.hop_time / 16 : 1024);
  end_here_ = n;
  if (opts_.partition) {
    partition_ = opts_.partition.get();
    check_partition();
    std::tie(first_here_, end_here_) = partition_->ranks_here(n);
    lookahead_ = lookahead();
    window_end_ = lookahead_;  // every program starts at 0
    queue_.track_vp_events();  // the earliest tells the processes when the next window ends
    opts_.host_cores = 1;      // a process per host core: the run's parallelism is the processes'
  }
  // A failed run's records and races end at the failure: on several host cores (an instant's
  // completions run ahead of its turns) and in a split run (whose processes run on to the window's
  // end), what was found past it is taken back (Recorder::cut, RaceDetector::cut).
  stamps_records_ = instruments_.stamps();
  if (stamps_records_) instruments_.stamp_records();
  const bool counts_network = !partition_ || partition_->index() == 0;
  counts_network_events_ = counts_network;
  network_ =
      std::make_unique<Network>(machine_, queue_, *this, counts_network ? instruments_.hash() : network_hash_aside_,
                                counts_network ? instruments_.stats() : network_stats_aside_);
  network_->set_seed(opts_.seed);
  if (partition_) {
    network_->keep_ended_routes();
    if (machine_.net.flow_control() && machine_.net.recv_buffer >= 0) network_->keep_window_frees();
  }
  am_ = std::make_unique<ActiveMessages>(*this, n);
  instruments_.watch(*network_);
  if (partition_ && instruments_.journal_network(&place_now_)) network_->note_releases(&place_now_);
  forced_ = ForcedSchedule(opts_.schedule, n);
  vp_block_.reserve(static_cast<std::size_t>(first_here_), static_cast<std::size_t>(end_here_ - first_here_));
  traffic_.resize(static_cast<std::size_t>(end_here_ - first_here_));
  vps_.reserve(static_cast<std::size_t>(n));
  idle_tasks_.resize(static_cast<std::size_t>(n));
  tasks_of_.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    if (!here(r)) {  // another process runs its program: no Vp, no stack here
      vps_.emplace_back();
      continue;
    }
    VpPtr v = vp_block_.make(static_cast<std::size_t>(r));
    v->rank = r;
    v->index = r;
    v->order = v->turn_place = vp_order(r);
    v->proc.reset(new Proc(*this, *v));
    if (opts_.perturb)
      v->perturb_rng = std::make_unique<std::mt19937_64>(opts_.perturb * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(r));
    vps_.push_back(std::move(v));
    ++unfinished_vps_;
  }
  // 0: every core the process may use (fibers; threads: no pinning), as the command line's default.
  if (opts_.host_cores == 0 && opts_.execution == Execution::fibers) opts_.host_cores = available_host_cores();
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

// The life of a VP, in its own thread or fiber, from its first turn to its end. Running ahead
// (starts_ahead), its code begins before its turn, on a helper thread, and the turn's bookkeeping
// waits for the scheduler's turn at its first call into the engine (park).
void Engine::vp_main(Vp& v) {
  const bool ahead = Executor::running_ahead();
  if (!ahead) begin_turn(v);
  std::exception_ptr failed;
  if (!aborting_) {
    try {
      // Inside the try: a hook that throws fails the run like the program would; outside, the
      // exception would leave the fiber's function and terminate the process.
      // Ahead, the hooks are per VP, and the first turns of t = 0 come before every other.
      if (opts_.on_vp_resume) opts_.on_vp_resume(v.rank, now_, v.turn_place);
      if (v.is_task()) task_main(v);
      else if (ahead) run_program_ahead(v);
      else (*program_)(*v.proc);
    } catch (const Aborted&) {
    } catch (...) {
      failed = std::current_exception();
    }
  }
  // The rest of a program that left runs after the event loop, perhaps beside others: its
  // failure is reported after all of them (run_rests). Otherwise a program that ends or fails in
  // code run ahead of its turn (the programs of an instant, run_instant_programs) waits for the turn
  // first: its end and its failure are events of the sequential order. (Outside the catch block:
  // the C++ runtime keeps the exception being handled per host thread, and the turn may be
  // another thread's.)
  if (v.left) {
    if (failed) v.rest_failure = failed;
    return;
  }
  await_turn(v);
  if (failed) {
    try {
      std::rethrow_exception(failed);
    } catch (...) {
      fail_with_current_exception(fmt::format("rank {} failed at t={} us", v.rank, to_us(v.clock)));
    }
  }
  end_program(v);
}

void Engine::end_program(Vp& v) {
  v.instant_member = false;
  // A VP that ends past the time limit (its last call's cost) stops the run too.
  if (!aborting_ && v.clock > opts_.time_limit)
    abort_run(time_limit_report(opts_.time_limit, fmt::format("rank {} ended at t={} us", v.rank, to_us(v.clock))));
  if (opts_.on_vp_pause) {
    try {
      opts_.on_vp_pause(v.rank);
    } catch (...) {
      fail_with_current_exception(fmt::format("rank {}'s on_vp_pause hook failed at the end of its program", v.rank));
    }
  }
  // Started before its first call (Engine::start), it had to make that call: Proc::await_start.
  if (!aborting_ && v.start_early) {
    failure_is_usage_ = true;
    abort_run(fmt::format("rank {} was started (Proc::start) but its program ended without calling Proc::await_start",
                          v.rank));
  }
  progress_.running.store(-1, std::memory_order_relaxed);
  if (v.state != Vp::State::done) {
    if (!v.is_task())
      --unfinished_vps_;
    else if (v.task_op)
      --busy_tasks_;  // unwound inside its task (a failed run)
  }
  v.state = Vp::State::done;
}

// Proc::leave: the program ends here as far as the emulation is concerned, and its fiber or
// thread waits until the event loop is over (run_rests), where the rest of it runs.
void Engine::leave(Vp& v) {
  if (v.is_task())
    throw UsageError(fmt::format("rank {}: Proc::leave() inside a task (Proc::spawn); only a rank's own program can "
                                 "leave the emulation",
                                 v.rank));
  end_program(v);
  v.left = true;
  left_.push_back(v.index);
  left_at_.emplace_back(now_, v.order);
  executor_->pass(v.index);
  if (aborting_) throw Aborted{};  // the run failed meanwhile: the rest unwinds without running
}

// Proc::await_start: the VP leaves the count of unfinished programs and waits, without a trace,
// until Engine::start queues its resume at the starter's clock, or the run ends (retire_idle_task)
// or fails (next_to_unwind) without it. Either way it is counted again before it goes, so that its
// end (end_program) is counted as any program's. Once the run is over, a wait ends at once.
bool Engine::await_start(Vp& v) {
  enter(v);
  if (v.is_task())
    throw UsageError(
        fmt::format("rank {}: Proc::await_start() inside a task (Proc::spawn); only a rank's own "
                    "program can wait to be started",
                    v.rank));
  if (partition_)
    throw UsageError(
        fmt::format("rank {}: Proc::await_start() in a run split over processes: VPs are started "
                    "during a run in one process only",
                    v.rank));
  if (retiring_) return false;
  if (v.start_early) {  // started before this, its first call: its clock is already the starter's
    v.start_early = false;
    return true;
  }
  --unfinished_vps_;
  stop(v, Vp::Block::dormant, Call{});
  executor_->pass(v.index);
  if (!v.start_given) {  // the run ended, or failed, without it
    ++unfinished_vps_;
    if (aborting_) throw Aborted{};
    return false;
  }
  v.start_given = false;
  goes_on(v);
  if (opts_.on_vp_resume && !aborting_) opts_.on_vp_resume(v.rank, now_, v.turn_place);
  if (aborting_) throw Aborted{};
  return true;
}

// Proc::start: the started VP goes on at the starter's clock, in its own place among that instant's
// events. One that has not made its first call yet makes it at its first turn, with that clock.
void Engine::start(Vp& by, int rank) {
  enter(by);
  const int n = static_cast<int>(vps_.size());
  if (rank < 0 || rank >= n || rank == by.rank || !vps_[static_cast<std::size_t>(rank)])
    throw UsageError(fmt::format("rank {} cannot start rank {}: {}", by.rank, rank,
                                 rank == by.rank         ? "it is the starter itself"
                                 : rank < 0 || rank >= n ? fmt::format("the machine has ranks 0..{}", n - 1)
                                                         : "its program runs in another process"));
  Vp& v = *vps_[static_cast<std::size_t>(rank)];
  const bool blocked = v.state == Vp::State::blocked && !v.is_task();
  const bool waits = blocked && v.block == Vp::Block::dormant && !v.start_given;
  const bool before_first_call = blocked && v.block == Vp::Block::start && !v.start_early;
  if (!waits && !before_first_call)
    throw UsageError(
        fmt::format("rank {} cannot start rank {}: it does not wait to be started (Proc::await_start)", by.rank, rank));
  v.ever_started = true;
  instruments_.started(by.rank, rank, by.clock);
  if (waits) {
    v.start_given = true;
    ++unfinished_vps_;
    queue_.push(by.clock, v.order, Ev::resume, &v, v.token);
  } else {
    v.start_early = true;
    v.clock = std::max(v.clock, by.clock);  // its first turn, at t = 0, raises it no further
  }
}

void Engine::begin_turn(Vp& v) {
  v.host_thread.store(pthread_self(), std::memory_order_release);
  progress_.running.store(v.rank, std::memory_order_relaxed);
  v.state = Vp::State::running;
  v.block = Vp::Block::none;
}

// The program's start runs ahead, up to its first call into the engine. One that ends or throws
// before any call waits for its turn all the same: its end, or its failure, is an event of the
// sequential order (an exception is held across the wait, not handled on the helper thread).
void Engine::run_program_ahead(Vp& v) {
  std::exception_ptr failed;
  try {
    (*program_)(*v.proc);
  } catch (...) {
    failed = std::current_exception();
  }
  if (!v.left) await_turn(v);  // a program that left has had its turns (Proc::leave)
  if (failed) std::rethrow_exception(failed);
}

void Engine::off_turn(Vp& v) {
  if (phase_ == Phase::timed) {
    phase_ = Phase::turns;
    program_time_.add(std::chrono::steady_clock::now() - program_timed_from_, ProgramTimeMean::kSampleEvery);
    return;
  }
  if (phase_ == Phase::ahead) {
    if (Executor::running_ahead()) park(v);
    return;
  }
  throw UsageError(fmt::format("rank {} called the runtime after Proc::leave(): the rest of a program that left the "
                               "emulation may use only its own memory, rank(), size() and machine()",
                               v.rank));
}

// Back to the helper thread of Executor::run_ahead; the pass returns when the scheduler resumes v
// at t = 0 in rank order, on its own thread, exactly where the sequential engine would have
// started v's program. Everything the program did before touched only its own memory.
void Engine::park(Vp& v) {
  const int own_errno = errno;  // the turn may be another host thread's
  executor_->pass(v.index);
  errno_here() = own_errno;
  begin_turn(v);
  for (Op* op : v.dropped_ahead) drop(op);
  v.dropped_ahead.clear();
}

// VP code on several host threads at once (run-ahead start, the rests of programs that left) needs
// fibers (they move between host threads) and more than one host core, and is off when a tool's
// hooks assume one VP's code at a time (batch_widths' timing); mpirun's keep each rank's output
// apart (RunOptions::hooks_are_per_vp).
bool Engine::parallel_host_turns() const {
  const bool hooks_allow = opts_.hooks_are_per_vp || (!opts_.on_vp_pause && !opts_.on_vp_resume);
  return opts_.execution == Execution::fibers && opts_.host_cores > 1 && hooks_allow;
}

bool Engine::starts_ahead() const { return parallel_host_turns() && vps_.size() > 1; }

// The programs of an instant (docs/parallel.md, stage 1). The VPs an instant lets go on (its VP
// events; every message event of the instant comes first, docs/model.md 1.3) each finish the
// runtime call they waited in, in rank order, and stop where it returns to the program
// (returning_to_program); then their programs run on up to host_cores host threads at once, each
// up to its next call into the runtime (await_turn parks it there); then those calls are made in
// rank order, each a VP event of the instant. Exact: until that next call a program touches only
// its own memory, and nothing the other VPs' turns do at this instant reaches it (what they send
// arrives later; a barrier they complete releases VPs that wait in it, not these). `first` is the
// VP of the instant's first VP event.
void Engine::open_instant(Vp& first) {
  instant_at_ = now_;
  instant_members_.clear();
  // A receive's completion completes its send where sends are held until received
  // (NetworkParams::send_holds_until_received): a member's completion, ahead of the rank order,
  // would wake its sender before the sender's own turn at the instant had it wait.
  if (program_time_.value() < worthwhile_ || machine_.net.send_holds_until_received) return;
  // Every VP the instant lets go on must be a member: one that went on in a whole turn between
  // two members would make its calls before the earlier member's.
  // It waits in a call of its program's (not in the runtime's own collectives, whose continuations
  // make more calls), and its memory is its own (a rank's tasks share it).
  // (Not at its start: a program that ran ahead waits at its first call before making it.)
  // A program that went on past its send (continue_ahead) is a member too: its wait is completed
  // by the event loop, and its program has run already (finish_ahead, instant_ready_).
  auto may = [this](const Vp& v) {
    return v.continues_ahead || (v.in_waiting_call && v.block != Vp::Block::start && !v.is_task() && !v.left &&
                                 tasks_of_[static_cast<std::size_t>(v.rank)].empty());
  };
  std::vector<int>& members = instant_;
  members.clear();
  bool all = may(first);
  members.push_back(first.index);
  queue_.for_each_at(now_, [&](const Event& e) {
    if ((e.kind() != Ev::resume && e.kind() != Ev::barrier) || !lets_go_on(e)) return;  // stale: does nothing
    const Vp& v = *static_cast<const Vp*>(e.p);
    all &= may(v);
    members.push_back(v.index);
  });
  sort_unless_sorted(members);
  members.erase(std::unique(members.begin(), members.end()), members.end());
  if (!all || members.size() < 2) return members.clear();
  for (const int i : members) {
    Vp& v = context(i);
    v.instant_member = true;
    v.ahead_in_instant = false;
  }
  instant_members_ = members;
  last_turn_rank_ = -1;
  instant_waking_ = members.size();
  instant_parked_.clear();
  instant_ready_.clear();
}

// A member of the open instant returns from the runtime call it waited in: it stops here until the
// instant's programs run.
void Engine::returning_to_program(Vp& v) {
  waits_in_instant(v);
  instant_parked_.push_back(v.index);
  executor_->pass(v.index);  // returns on a host thread of run_instant_programs, or to unwind
  if (aborting_) throw Aborted{};
}

// A member's wait has completed: it waits, where its program is, for its call's turn at the
// instant (an instant_turn).
void Engine::waits_in_instant(Vp& v) {
  end_of_completion(v);
  v.state = Vp::State::blocked;
  v.block = Vp::Block::sync;
  v.pending = Call{};
  v.blocked_since = v.clock;
  ++v.token;
  progress_.running.store(-1, std::memory_order_relaxed);
}

// Whether the programs of instants are worth running at once: they are often a few instructions up
// to the next call (an all-to-all's next send), and then stopping each VP and handing it to another
// host thread and back (a microsecond or more per VP on 65,536 VPs, whose stacks are out of the
// cache) costs more than they do. So the host time of programs is sampled: one in kSampleEvery
// of the sequential turns' returns to the program is timed up to the program's next call (the
// next await_turn, sent to off_turn by Phase::timed), and each instant's programs are timed as a
// whole; an instant opens only while the running mean per return to the program (ProgramTimeMean,
// each sample weighed by the returns it stands for) is at least RunOptions::parallel_programs_from_us.
// Host time decides only which host threads run what, never what happens: the run is the same.

void Engine::time_program() {
  sample_countdown_ = ProgramTimeMean::kSampleEvery;
  program_timed_from_ = std::chrono::steady_clock::now();
  phase_ = Phase::timed;
}

// A VP event of the instant lets v go on: the instant opens at its first. A VP that is not a member
// (its event was made by a member's turn, such as a synchronous send's completion) goes on after
// the members before it in rank order have made their calls, as in the sequential order: the
// instant's programs run first, its event is put back behind their calls (behind_instant), and the
// members after it go on in whole turns.
void Engine::instant_wake(Vp& v) {
  if (now_ != instant_at_) open_instant(v);
  if (!v.instant_member) {
    last_turn_rank_ = v.rank;  // a whole turn at the instant
    return;
  }
  --instant_waking_;
  v.clock_before_instant = v.clock;
  v.hash_before_instant = instruments_.hash().value();
  v.ahead_in_instant = true;
}

// A member's wait has completed ahead of the sequential order (it stops where the wait returns, or
// waits again): what that added to the trace hash, in case the run fails before its turn.
void Engine::end_of_completion(Vp& v) {
  v.instant_member = false;
  v.hashed_in_instant = instruments_.hash().value() - v.hash_before_instant;
}

bool Engine::behind_instant(const Event& e) {
  if ((e.kind() != Ev::resume && e.kind() != Ev::barrier) || !lets_go_on(e)) return false;
  if (static_cast<const Vp*>(e.p)->instant_member) return false;
  queue_.push(e.t, e.order, e.kind(), e.p, e.a);
  run_instant_programs();
  return true;
}

// Every member has had its turn: the programs that stopped where their calls returned run on, then
// their next calls are made in rank order.
// Members whose programs ran on past their sends (instant_ready_) are at their next calls already.
void Engine::run_instant_programs() {
  for (const int i : instant_) context(i).instant_member = false;
  instant_.clear();
  if (!instant_parked_.empty()) {
    sort_unless_sorted(instant_parked_);
    const auto start = std::chrono::steady_clock::now();
    ++instants_at_once_;
    phase_ = Phase::ahead;
    executor_->run_ahead(instant_parked_, opts_.host_cores);
    phase_ = Phase::turns;
    const auto n = static_cast<std::int64_t>(instant_parked_.size());
    program_time_.add((std::chrono::steady_clock::now() - start) * std::min<std::int64_t>(opts_.host_cores, n) / n, n);
  }
  for (const auto* stopped : {&instant_parked_, &instant_ready_})
    for (const int i : *stopped) {
      Vp& v = context(i);
      queue_.push(now_, vp_order(v.rank), Ev::instant_turn, &v, v.token);
    }
  instant_parked_.clear();
  instant_ready_.clear();
}

// The rests of the programs that left the emulation (Proc::leave), once the event loop is over:
// each touches only its own VP's memory, so they run on up to host_cores host threads at once (or
// one after another, in the order the VPs left). Only then are their failures reported, the first
// in that order, and the operations their Requests let go given back: the same on any number of
// host cores. After a failed run they only unwind (Engine::leave throws Aborted).
void Engine::run_rests() {
  if (left_.empty()) return;
  phase_ = Phase::rests;
  if (parallel_host_turns()) {
    bool worth_handing_out = false;
    const std::size_t sampled = sample_turns(left_, false, worth_handing_out);
    executor_->run_rests(std::span(left_).subspan(sampled), worth_handing_out ? opts_.host_cores : 1);
  } else if (!executor_->run_rests(left_, 1)) {
    executor_->pass(kMain);  // through next(), one after another
  }
  phase_ = Phase::turns;
  for (std::size_t j = 0; j < left_.size(); ++j) {
    Vp& v = context(left_[j]);
    for (Op* op : v.dropped_in_rest) drop(op);
    v.dropped_in_rest.clear();
    if (!v.rest_failure) continue;
    const bool first = !aborting_;
    try {
      std::rethrow_exception(std::exchange(v.rest_failure, nullptr));
    } catch (...) {
      fail_with_current_exception(fmt::format("rank {} failed at t={} us", v.rank, to_us(v.clock)));
    }
    if (!first) continue;
    rest_failed_at_ = left_at_[j];
    failed_at_ = kNever;  // after every event of the run (RunError::failed_at)
    failed_order_ = 0;
  }
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

// Turns of many VPs (the first turns ahead, the rests of programs that left) are handed out to
// host_cores threads only where that pays: handing a fiber to another thread and back moves its
// stack and state between the cores' caches, which costs more than a short program's whole turn (a
// 65,536-VP gather's first turns, a few microseconds each, made its run slower on two host cores
// than on one). So the first of `contexts` run here, one after another: the first untimed (it pays
// for what a run does once, such as the heap's first pages), then up to kSampledTurns more, timed.
// Once these have taken kSampledTurns times parallel_programs_from_us, the others are worth
// handing out; if they all run in less, they are not. Returns how many ran (none with a threshold
// of 0: always worth it). Host time decides only which thread runs what, never what happens.
std::size_t Engine::sample_turns(std::span<const int> contexts, bool ahead, bool& worth_handing_out) {
  constexpr std::int64_t kSampledTurns = 64;
  worth_handing_out = true;
  if (worthwhile_.count() == 0 || contexts.empty()) return 0;
  auto run_here = [&](std::size_t k) {
    const auto one = contexts.subspan(k, 1);
    ahead ? executor_->run_ahead(one, 1) : executor_->run_rests(one, 1);
  };
  run_here(0);
  const std::size_t most = std::min<std::size_t>(contexts.size(), kSampledTurns + 1);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t k = 1; k < most; ++k) {
    run_here(k);
    if (std::chrono::steady_clock::now() - start >= worthwhile_ * kSampledTurns) return k + 1;
  }
  worth_handing_out = false;
  return most;
}

// Creates the VPs' contexts and runs them until the run is over.
void Engine::start_vps() {
  // Only real bytes need copying; a machine with replicating routers is left out because a
  // multicast's branches are not known to keep a pair's order with its point-to-point messages.
  // A split run's receives see their remote messages only from the window's swap (partition.cpp).
  fixes_matches_ = !opts_.phantom_payloads && !machine_.net.multicast && !partition_;
  if (fixes_matches_) ways_.resize(vps_.size());
  std::vector<void*> procs;
  procs.reserve(vps_.size());
  for (auto& v : vps_) procs.push_back(v ? v->proc.get() : nullptr);
  const bool fibers = opts_.execution == Execution::fibers;
  worthwhile_ = std::chrono::nanoseconds(static_cast<std::int64_t>(opts_.parallel_programs_from_us * 1000));
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
    for (std::size_t i = started; i < vps_.size(); ++i)
      if (vps_[i] && vps_[i]->state != Vp::State::done) vps_[i]->state = Vp::State::done, --unfinished_vps_;
  } else if (starts_ahead()) {
    instant_turns_ = true;
    ahead_of_sends_ = true;
    receives_go_on_ = opts_.programs_read_no_arrival;
    past_receive_.resize(vps_.size());
    program_time_ = ProgramTimeMean(worthwhile_);
    phase_ = Phase::ahead;
    std::vector<int> all(vps_.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    // The first turns not worth handing out are left to the event loop, as on one host core.
    bool worth_handing_out = false;
    const std::size_t sampled = sample_turns(all, true, worth_handing_out);
    if (worth_handing_out) executor_->run_ahead(std::span(all).subspan(sampled), opts_.host_cores);
    phase_ = Phase::turns;
  }
  executor_->pass(kMain);
  copier_.wait_all();  // the rests read what the copies wrote, and free what they read
  failed_before_rests_ = aborting_;
  run_rests();
  executor_->finish();
}

void Engine::abort_run(std::string report) {
  if (!aborting_) {
    failure_ = std::move(report);
    failed_at_ = now_;
    const int running = executor_ ? executor_->current() : kMain;
    const std::uint64_t own = running >= 0 ? context(running).order : 0;
    failed_order_ = order_at_instant(own);
    if (in_network_event_) failed_network_place_ = network_event_place_, failed_in_handler_ = am_ && am_->in_handler();
  }
  aborting_ = true;
}

// The event loop: commits events until a VP can go on (its rank), or the run is over (kMain).
// Code outside the engine runs in the event loop too (a user topology's routing, allocations):
// whatever it throws fails the run like a failing VP, so that the VPs are unwound by the engine
// (each resumed to throw Aborted) and not torn down suspended with the executor. The guard is per
// call, not per event: around each event the phantom Figure-9 sweep measured about 1% slower
// (docs/performance.md); per call, within noise.
int Engine::next() {
  if (phase_ == Phase::rests) [[unlikely]]
    return next_rest_ < left_.size() ? left_[next_rest_++] : kMain;
  for (;;) {
    try {
      return run_events();
    } catch (...) {
      fail_with_current_exception(fmt::format("handling an event at t={} us failed", to_us(now_)));
    }
  }
}

// The VPs and the busy task contexts whose programs have not ended (an idle task context waits for
// a task that may never come).
std::uint64_t Engine::unfinished_contexts() const { return unfinished_vps_ + busy_tasks_; }

Vp* Engine::dormant_vp() {
  for (; dormant_from_ < vps_.size(); ++dormant_from_)
    if (Vp* v = vps_[dormant_from_].get(); v && v->state == Vp::State::blocked && v->block == Vp::Block::dormant)
      return v;
  return nullptr;
}

// The programs have ended: the idle task contexts end too, one after another (kMain: none left).
int Engine::retire_idle_task() {
  Vp* t = idle_task();
  if (!t) t = dormant_vp();
  if (!t) return kMain;
  retiring_ = true;
  t->state = Vp::State::running;
  return t->index;
}

int Engine::run_events() {
  if (launch_next_ != kMain || !going_on_.empty()) [[unlikely]] launch_ahead();
  for (;;) {
    if (aborting_) {
      if (partition_ && !failure_told_) announce_failure();
      return next_to_unwind();
    }
    if (!instant_.empty() && instant_waking_ == 0) run_instant_programs();
    if (opts_.stop_on_signals && Watchdog::pending_signal()) [[unlikely]] {
      abort_run(interrupted_report(nullptr));
      continue;  // unwinds, as above
    }
    if (partition_) [[unlikely]] {
      // Once every process's programs have ended, the processes do not meet again until the run's
      // end (gather_clocks): this one's idle task contexts end without a window.
      if (split_over_) return retire_idle_task();
      const Window w = window_check();
      if (w == Window::crossed) continue;
      if (w == Window::over) {
        split_over_ = true;
        return retire_idle_task();
      }
    } else if (queue_.empty()) {
      if (unfinished_contexts() == 0) return retire_idle_task();
      abort_run(deadlock_report());
      failed_at_ = kNever;  // after every event (RunError::failed_at), as a split run finds it
      continue;
    }
    const Event e = queue_.pop();
    step();
    if ((instruments_.stats().events & 1023) == 0) {
      progress_.now_ps.store(now_, std::memory_order_relaxed);
      progress_.messages.store(instruments_.stats().messages, std::memory_order_relaxed);
    }
    if (e.t < now_) {  // an invariant of the model; never expected, but never silently wrong
      abort_run(fmt::format("internal error: an event at t={} ps was scheduled after t={} ps had been reached "
                            "(please report this with the command line)",
                            e.t, now_));
      continue;
    }
    now_ = e.t;
    if (partition_ || stamps_records_) [[unlikely]] {
      place_now_ = partition_ ? split_place(e) : place_of(e);
      if (partition_) {
        queue_.taken(e);  // before behind_instant may push it back
        enter_place(place_now_);
      }
      if (stamps_records_) instruments_.stamp(place_now_);
    }
    if (!instant_.empty() && behind_instant(e)) [[unlikely]] continue;
    if (partition_) [[unlikely]]
      took_turn(e);
    // A program's next call at its instant (run_instant_programs) continues the VP's turn: no event
    // of the model, and no new segment (RunStats counts what the sequential order counts).
    const bool of_the_model = e.kind() != Ev::instant_turn;
    // A process of a split run other than the first counts only its own VPs' events: every
    // process handles the network's.
    if (of_the_model &&
        (counts_network_events_ || e.kind() == Ev::resume || e.kind() == Ev::barrier || e.kind() == Ev::received))
      instruments_.event();
    if (now_ > opts_.time_limit) {
      if (!aborting_) failed_before_instant_ = true;  // before this instant's events: a split run can place it
      abort_run(time_limit_report(opts_.time_limit, ""));
      continue;
    }
    switch (e.kind()) {
      case Ev::resume: {
        Vp& v = *static_cast<Vp*>(e.p);
        if (lets_go_on(e)) {
          if (instant_turns_) instant_wake(v);
          wake(v);
        }
        break;
      }
      case Ev::barrier: {
        Vp& v = *static_cast<Vp*>(e.p);
        if (instant_turns_) instant_wake(v);
        wake(v);
        break;
      }
      case Ev::instant_turn: {
        Vp& v = *static_cast<Vp*>(e.p);
        if (lets_go_on(e)) {
          last_turn_rank_ = v.rank;
          v.state = Vp::State::running;
          resume_next_ = v.index;
        }
        break;
      }
      default:
        if (e.kind() == Ev::received) [[unlikely]]
          on_received(static_cast<Op*>(e.p), e.t);
        else
          handle_network_event(e);
        break;
    }
    if (resume_next_ != kMain) {
      const int r = resume_next_;
      resume_next_ = kMain;
      if (of_the_model) instruments_.resumed(now_);
      if (Vp& v = context(r); v.continues_ahead) [[unlikely]] {
        const Ahead a = finish_ahead(v);
        if (a == Ahead::waits_again) continue;  // its waitall waits again; its program is on its way
        // A member of an open instant makes its next call at its instant_turn, in rank order.
        if (a == Ahead::done && v.instant_member) {
          waits_in_instant(v);
          instant_ready_.push_back(v.index);
          continue;
        }
      }
      copies_made_for(r);
      prefetch_next_turn();
      return r;
    }
  }
}

// A VP resumes into its record and its stack's frames, which the other VPs' turns have usually
// evicted from the cache since its last turn: the misses that make most of a message's host time
// on a machine of many VPs (docs/performance.md). The executor prefetches the frames just before
// the switch; asking for the next turn's record and frames while this turn runs hides more of them
// (docs/performance.md, "CPU per emulated message").
void Engine::prefetch_next_turn() const {
  constexpr std::size_t kLookAhead = 16;  // the next resume is usually among the next few events
  const Event* next = queue_.find_soon(kLookAhead, [](const Event& e) {
    return e.kind() == Ev::resume || e.kind() == Ev::barrier || e.kind() == Ev::instant_turn;
  });
  if (!next) return;
  __builtin_prefetch(next->p);
  // A rank's own VP's events carry its rank in their order key, and its context's index is its rank:
  // no load from the record, which is still on its way.
  const std::uint64_t rank = next->order - vp_order(0);
  if (next->order >= vp_order(0) && rank < vps_.size()) executor_->prefetch(static_cast<int>(rank));
}

int Engine::next_to_unwind() {
  copier_.wait_all();  // unwinding frees buffers
  for (auto* all : {&vps_, &tasks_})
    for (auto& v : *all)
      if (v && v->state == Vp::State::blocked) {
        v->state = Vp::State::running;
        // A program that started ahead of its first turn (starts_ahead) and never had it: what it
        // did never happened in the sequential order.
        if (v->block == Vp::Block::start && opts_.on_vp_discard) opts_.on_vp_discard(v->rank);
        if (v->continues_ahead) {  // unwound from the call its program stopped at (park_ahead)
          progress_.running.store(v->rank, std::memory_order_relaxed);
          executor_->settle(v->index);
          v->continues_ahead = false;
          instruments_.unwound(v->rank, v->blocked_since, now_, v->pending, began(*v));
          if (opts_.on_vp_discard) opts_.on_vp_discard(v->rank);  // what it ran past its send never was
        }
        return v->index;
      }
  return kMain;
}

void Engine::wake(Vp& v) {
  v.state = Vp::State::running;
  // One process's hooks come in the sequential order, and its turn places stay the contexts' own.
  if (partition_) [[unlikely]]
    place_turn(v);
  note_clock(v);  // its turn moves it
  v.busy_until_wake = v.clock;
  v.clock = std::max(v.clock, now_);
  resume_next_ = v.index;
}

void Engine::place_turn(Vp& v) { v.turn_place = order_at_instant(v.order); }

// A message event that lets a blocked VP go on queues its wake-up at the same instant instead of
// resuming it at once: behind every message event of the instant (they order first, 1.3), in rank
// order. So the VPs that go on at an instant are known before any of them runs, and nothing a VP
// does at `now` can change what a message event of `now` does: the work of an instant is the
// message events, then the VPs' turns, whichever host thread does which part.
void Engine::wake_at_instant(Vp& v) {
  if (v.wake_queued == v.token) return;  // once per wait: a second arrival finds it queued
  v.wake_queued = v.token;
  queue_.push(now_, v.order, Ev::resume, &v, v.token);
}

void Engine::block(Vp& v, Vp::Block why, const Call& what) {
  // A VP's errno must not change because other VPs ran meanwhile (each would be a process of its
  // own): with fibers they share the host thread's errno, and with threads the hand-over's own
  // waits may set it.
  const int own_errno = errno;
  stop(v, why, what);
  executor_->pass(v.index);
  if (v.continues_ahead) [[unlikely]] {  // on a helper thread past a known receive: nothing shared
    v.host_thread.store(pthread_self(), std::memory_order_release);  // where the watchdog finds it
    errno_here() = own_errno;
    return;
  }
  goes_on(v);
  if (opts_.on_vp_resume && !aborting_) opts_.on_vp_resume(v.rank, now_, v.turn_place);
  errno_here() = own_errno;
  if (aborting_) {
    instruments_.unwound(v.rank, v.blocked_since, now_, v.pending, began(v));
    throw Aborted{};
  }
  instruments_.woke(v.rank, v.blocked_since, v.clock, v.pending, v.waiting_ops, began(v));
  if (opts_.perturb) enter(v);
}

void Engine::stop(Vp& v, Vp::Block why, const Call& what) {
  if (opts_.on_vp_pause) opts_.on_vp_pause(v.rank);
  mark_blocked(v, why, what);
}

void Engine::mark_blocked(Vp& v, Vp::Block why, const Call& what) {
  v.block = why;
  v.pending = what;
  v.blocked_since = v.clock;
  v.state = Vp::State::blocked;
  if (stamps_records_) [[unlikely]]
    blocked_at_[v.index] = instruments_.stamped();
  ++v.token;
  if (v.instant_member) end_of_completion(v);  // it waits again before returning to its program
  progress_.running.store(-1, std::memory_order_relaxed);
}

void Engine::goes_on(Vp& v) {
  progress_.running.store(v.rank, std::memory_order_relaxed);
  v.block = Vp::Block::none;
}

// A program that waits for a send of its own (Proc::send, Proc::wait) goes on past the wait, on
// another host thread, while the event loop goes on: the wait's outcome is already fixed. An eager
// send completes whatever else happens, only its time is open, and the wait returns nothing but
// the time, which the program cannot read before its next call: every call waits for its turn
// first (await_turn parks it there, park_ahead). So the program runs up to its next call ahead of
// the sequential order, and that call is made in it, when the event loop reaches the send's
// completion (finish_ahead). Everything the event loop does meanwhile is what it does with the VP
// blocked in the wait: the VP is blocked there, and its wait is completed by the event loop as
// the VP's own code would have completed it. The send's bytes are copied first (keep_payload):
// the program may reuse its buffer once the wait has returned. Only for the sends that cannot
// depend on the receiver (not synchronous, no rendezvous, not held until received), only in a
// call of the program's own (not inside the runtime's collectives, whose code goes on with more
// calls), not for a rank whose memory active messages reach (their handlers run in the event loop
// while the VP waits: its program must not run beside them), and only while the programs' host
// time makes it pay (the threshold of the instants).
bool Engine::continue_ahead(Vp& v, Op*& op) {  // with ahead_of_sends_ (the caller asks, inline)
  if (!v.in_waiting_call || v.instant_member || op->kind != Op::Kind::send ||
      op->synchronous || op->rendezvous || op->unreceived > 0 || v.is_task() || v.left ||
      !tasks_of_[static_cast<std::size_t>(v.rank)].empty() || am_->serves(v.rank) ||
      program_time_.value() < worthwhile_)
    return false;
  Op* one[] = {op};
  await_ops(v, one, true);
  stop(v, Vp::Block::ops, Call::on(Call::Form::wait_for, *op));
  keep_payload(op);
  op->holder = nullptr;  // the Request lets go of it now; the event loop frees it (finish_ahead)
  v.ahead_op = op;
  op = nullptr;
  v.continues_ahead = true;
  launch_next_ = v.index;
  ++continued_ahead_;
  const int own_errno = errno;
  executor_->pass(v.index);  // returns on a helper thread (Executor::launch), or on this one
  errno_here() = own_errno;
  v.host_thread.store(pthread_self(), std::memory_order_release);  // where the watchdog finds it
  return true;
}

// The program that went on past its send has reached its next call into the runtime: it stops
// here until the event loop has completed the wait (finish_ahead) and names it, in its turn.
void Engine::park_ahead(Vp& v) {
  // Only its own code stops: code elsewhere that reaches its Proc (a misuse enter reports) must not
  // switch out of a context that is not the VP's.
  if (Executor::current_index() != v.index) return;
  const int own_errno = errno;
  executor_->pass(v.index);  // back to the helper thread; returns in the VP's turn
  v.host_thread.store(pthread_self(), std::memory_order_release);
  if (opts_.on_vp_resume && !aborting_) opts_.on_vp_resume(v.rank, now_, v.turn_place);  // on its own fiber, as block's
  errno_here() = own_errno;
}

// The event loop has reached the completion of the send a program went on past (its wake-up, an
// event like any other): the VP's wait is completed here as its own code would have completed it
// on its return from the wait -- block's end, then wait's -- once the program has stopped at its
// next call, which it then makes (park_ahead calls on_vp_resume there, on the VP's fiber).
// Past a waitall, each wake-up does what the VP's code would do at it: complete what is ready and
// wait again (waits_again; the program's pause is not called, since all it printed was before the
// waitall), until all is complete. failed: the run fails meanwhile.
Engine::Ahead Engine::finish_ahead(Vp& v) {
  progress_.running.store(v.rank, std::memory_order_relaxed);  // a stuck program is its (watchdog)
  const bool waitall = !v.ahead_op;
  if (!waitall) executor_->settle(v.index), v.continues_ahead = false;
  goes_on(v);
  instruments_.woke(v.rank, v.blocked_since, v.clock, v.pending, v.waiting_ops, began(v));
  if (opts_.perturb) {
    try {
      entered(v);
    } catch (const Aborted&) {
      if (waitall) executor_->settle(v.index), v.continues_ahead = false;
      return Ahead::failed;  // its program stops at the call where it stands (park_ahead)
    }
  }
  if (waitall) return waitall_ahead(v);
  Op* one[] = {v.ahead_op};
  unawait_ops(v, one);
  if (v.ahead_op->kind == Op::Kind::recv) complete_recv(v, v.ahead_op, past_receive(v).since);
  else complete_send(v, v.ahead_op);
  return Ahead::done;
}

// Programs that go on past their receives. A program blocked in a wait for one receive whose
// match is known before the message arrives (fix_match: nothing else can take the receive, and the
// message's bytes are in its buffer or on their way there) gets back what its wait will return --
// the source, tag and size -- save the arrival time, which an MPI program never reads. So, as past
// its sends, its program runs on from the wait on another host thread, up to its next call, which
// it makes when the event loop reaches the message's arrival and completes the receive
// (finish_ahead). The VP is launched from the event loop (launch_ahead) once the copies into and
// out of its memory are made: its program reads the buffer at once. The same conditions as
// continue_ahead, and the wait is in a call of the program's own: a wait for one receive
// (Engine::wait), or a waitall whose receives' matches are all known and whose sends complete
// whatever else happens, as continue_ahead's (look_before_waiting).
bool Engine::may_go_on_past_receive(const Vp& v) const {
  return ahead_of_sends_ && opts_.programs_read_no_arrival && v.in_waiting_call && !v.instant_member &&
         !v.continues_ahead && !v.is_task() && !v.left && tasks_of_[static_cast<std::size_t>(v.rank)].empty() &&
         !am_->serves(v.rank) && opts_.races == RaceCheck::off && program_time_.value() >= worthwhile_;
}

void Engine::go_on_past_receive(Vp& v) {
  PastReceive& pr = past_receive(v);
  v.in_receive_wait = false;
  v.ahead_op = pr.recv;
  if (pr.recv) {
    pr.status = received_status(*pr.recv, *pr.recv->fixed_msg);
  } else {  // a waitall's: its statuses now (the caller's, as the VP waits), its operations kept
    WaitAll& w = pr.waitall;
    for (std::size_t i = 0; i < w.ops.size(); ++i) {
      Op* op = w.ops[i];
      if (!op) continue;
      op->holder = nullptr;  // the Requests let go of them; the event loop frees them (finish_ahead)
      if (op->kind != Op::Kind::recv) keep_payload(op);  // the program may reuse its buffers
      else if (!w.st.empty()) w.st[i] = received_status(*op, *op->fixed_msg);
    }
    pr.ops.assign(w.ops.begin(), w.ops.end());
    w.ops = pr.ops;
    w.st = {};
  }
  v.continues_ahead = true;
  going_on_.push_back(v.index);
  ++continued_ahead_;
}

// Hands the programs that go on past their waits to the helper threads, as the event loop goes on.
void Engine::launch_ahead() {
  if (launch_next_ != kMain) {  // past its send (continue_ahead)
    copies_made_for(launch_next_);
    executor_->launch(launch_next_, opts_.host_cores);
    launch_next_ = kMain;
  }
  for (const int i : going_on_) {
    copies_made_for(i);
    executor_->launch(i, opts_.host_cores);
  }
  going_on_.clear();
}

// The VP goes on when the event loop reaches its clock, in its own place among that instant's
// events: a task's, not its rank's, so that contexts of one rank that wake at one time go in their
// fixed order rather than in the order they asked (which a split run cannot keep).
void Engine::sync(Vp& v) {
  if (v.clock <= now_) return;
  queue_.push(v.clock, v.order, Ev::resume, &v, v.token + 1);
  block(v, Vp::Block::sync, Call{});
}

void Engine::enter(Vp& v) {
  await_turn(v);
  if (am_->in_handler()) throw UsageError(am_->blocking_error());
  // The thread id first: it never changes once the VP runs, so checking it from a foreign thread
  // is race-free; only then the baton.
  if (!executor_->on_thread_of(v.index) || executor_->current() != v.index)
    throw UsageError(fmt::format("the Proc of rank {} was used from a thread that does not run its program", v.rank));
  entered(v);
}

// enter's part that does not ask who calls: also made by the event loop for a VP whose wait it
// completes (finish_ahead).
void Engine::entered(Vp& v) {
  if (aborting_) throw Aborted{};
  step();
  progress_.now_ps.store(std::max(now_, v.clock), std::memory_order_relaxed);
  progress_.messages.store(instruments_.stats().messages, std::memory_order_relaxed);
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
  for (auto& v : vps_)
    if (v) queue_.push(0, vp_order(v->rank), Ev::resume, v.get(), 0);
  {
    const Watchdog watchdog(opts_, progress_,
                            {[this](int rank) { return vps_[static_cast<std::size_t>(rank)]->host_thread.load(std::memory_order_acquire); },
                             [this] { return write_evidence(true); }});
    start_vps();
  }
  // One process on several host cores: an instant's completions that ran ahead of a failed turn.
  if (!partition_ && aborting_ && stamps_records_ && failed_at_ != kNever && failed_order_ >= vp_order(0))
    records_cut_at_ = Stamp{failed_at_, failed_order_, Stamp::kWholeTurn};
  instruments_.races_at_end(vps_, opts_.on_races, records_cut_at_);
  if (partition_ && !failed_before_rests_) pool_rest_failures();

  const Leftovers found = aborting_ ? Leftovers() : leftovers();
  if (!aborting_) failure_ = first_process_says(leftovers_report(found));
  // Every entry of a replayed schedule must have been used, by the end of a run that went well; in
  // a split run each process used its own ranks' entries, and any process's leftovers fail the run.
  bool clean = !aborting_ && failure_.empty();
  if (partition_ && !forced_.empty()) clean = gather_schedule_use(clean);
  if (clean) forced_.check_all_used();
  // Every VP's clock, where it finished or where the failure left it, ends the hash. When the run
  // failed at an instant whose waits completed ahead of the sequential order, the VPs after the
  // last turn are where that order left them: not yet woken (their completions' terms taken back).
  std::vector<Time> clocks;
  for (auto& v : vps_) clocks.push_back(v ? v->clock : 0);
  if (aborting_ && now_ == instant_at_)
    for (const int i : instant_members_) {
      Vp& v = context(i);
      if (!v.ahead_in_instant || v.rank <= last_turn_rank_ || v.instant_member) continue;
      clocks[static_cast<std::size_t>(i)] = v.clock_before_instant;
      instruments_.hash().take_back(v.hashed_in_instant);
      if (opts_.on_vp_discard) opts_.on_vp_discard(v.rank);  // its program ran, but not in that order
    }
  if (partition_) gather_clocks(clocks);
  // The waits and holds still open end at the failure: where a split run's processes went on past
  // it, their network's observer took back what came after (cut_at).
  instruments_.run_ended(cut_at_failure_ ? cut_place_.t : now_, !partition_ || partition_->index() == 0
                                                                    ? std::span<const Time>(clocks)
                                                                    : std::span<const Time>());
  if (partition_) combine_counts();
  if (partition_ && instruments_.recording()) gather_evidence();
  if (partition_ && instruments_.detects_races()) gather_races();
  if (!failure_.empty()) {
    // A split run's first process speaks for the job: it lists the races of every process's ranks.
    const std::uint64_t h =
        instruments_.add_to_failure(failure_, hash_of_shares(), !partition_ || partition_->index() == 0);
    const auto placed = [this]<class E>(E e) {  // E: RunError or RunUsageError, kept as it is
      e.failed_at = failed_at_;
      e.failed_place = failed_order_;
      e.hash_of_shares = hash_of_shares();
      return e;
    };
    if (failure_is_usage_) throw placed(RunUsageError(failure_ + write_evidence(true), h));
    throw placed(RunError(failure_ + write_evidence(true), h));
  }

  if (std::string held = first_process_says(held_requests(found)); !held.empty()) throw RunUsageError(held);
  RunResult res;
  for (const Time c : clocks) {
    res.finish_time.push_back(c);
    res.makespan = std::max(res.makespan, c);
  }
  instruments_.fill(res);
  if (opts_.races == RaceCheck::error && !res.races.empty()) {
    write_evidence(false);
    throw RunError(fmt::format("the run has message races (RaceCheck::error):\n{}trace_hash {:016x}\n",
                               describe_races(res.races, opts_.describe_race), res.trace_hash),
                   res.trace_hash);
  }
  write_evidence(false);
  res.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.instants_at_once = instants_at_once_;
  res.windows = windows_;
  res.continued_ahead = continued_ahead_;
  res.delivered_early = delivered_early_;
  return res;
}

// A pooled object is made anew in place (destroyed, then default-initialized where it lies) rather
// than assigned a fresh temporary: `*m = Msg{}` built a second Msg, move-assigned each member and
// destroyed the temporary, about twice the stores, once for every message and operation.
Msg* Engine::new_msg() {
  Msg* m = msgs_.get();
  // The path and vector-clock buffers are kept: their capacity is reused by the next message.
  std::vector<std::uint32_t> path = std::move(m->path);
  std::vector<std::uint32_t> vc = std::move(m->vc);
  std::destroy_at(m);
  ::new (static_cast<void*>(m)) Msg;  // every member has a default initializer
  m->path = std::move(path);
  m->vc = std::move(vc);
  m->vc.clear();
  return m;
}

void Engine::free_msg(Msg* m) {
  if (fixes_matches_) {
    copier_.wait(m->copy_no);  // it may still be copying out of m's payload
    if (m->on_the_way) off_the_way(*m);
  }
  m->payload = std::vector<std::byte>();  // payloads can be large: give the memory back now
  // So can routes on large machines (up to 2,046 links on mesh:1024x1024): a root that posts a
  // message to every node has that many pooled messages, each keeping the route it was given.
  if (m->path.capacity() > 64) m->path = std::vector<std::uint32_t>();
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
  // A message whose match is known has its bytes in the receive buffer (or on their way there):
  // it needs no copy of its own. A failed run delivers nothing more, and its unwinding may already
  // have freed the buffer.
  if (m->fixed_recv) copier_.wait(m->copy_no);
  else if (!aborting_) m->payload.assign(m->lent.begin(), m->lent.end());
  m->lent = {};
  m->lender = nullptr;
  send->lent = nullptr;
}

// The match: the message's bytes go into the receive buffer now, and the message lets go of them
// (its copy, if it had one, is freed; the sender's buffer is no longer read). A message longer than
// a receive that does not truncate is left alone: completing the receive reports it. `posting`:
// matched as its receive is posted, in the receiver's turn (posted_beside).
void Engine::deliver(Msg& m, Op& recv, bool posting) {
  if (fixes_matches_ && (m.fixed_recv || recv.fixed_msg)) {
    if (m.fixed_recv != &recv || recv.fixed_msg != &m)
      abort_run(fmt::format("internal error: message #{} from {} to {} matched a receive other than the one known "
                            "to be its match (please report this with the command line)",
                            m.id, m.src, m.dst));
    copier_.wait(m.copy_no);  // its bytes are in the receive buffer once the copy is made
  } else if (m.size > recv.buf.size() && !recv.truncating) {
    return;
  } else if (const std::span<const std::byte> bytes = m.bytes(); !bytes.empty()) {
    if (posting && posted_beside(m, recv)) {
      copying_between(m, copier_.copy(recv.buf.data(), bytes.data(), bytes.size()));
    } else {
      std::memmove(recv.buf.data(), bytes.data(), std::min(bytes.size(), recv.buf.size()));
    }
  }
  if (m.lender) m.lender->lent = nullptr, m.lender = nullptr, m.lent = {};
  m.payload = std::vector<std::byte>();
}

// A message that arrived before its receive was posted (an unexpected one) is matched, and its
// bytes copied, as the receive is posted, in the receiver's turn. That copy goes to the Copier too
// when the message still reads its sender's buffer (the sender's send has not completed: the
// all-to-all's exchanges, where each rank waits for its send and its receive together): the
// receive buffer is the program's only once a call that completes the receive returns to it
// (wait, waitall, waitany, test: each waits for the copies touching its VP's memory there), and
// the sender's buffer is its program's again only after the sender's next turn (copies_made_for).
// A receive completed with its send still to wait for (waitall) then finds its copy made while
// its VP waited. Not where race detection reads the bytes received as the receive completes, not
// for a message to its own sender (whose wait for the send, in its turn, would let it reuse the
// buffer), and with the exclusions of fix.
bool Engine::posted_beside(const Msg& m, const Op& recv) const {
  return fixes_matches_ && fixable(m) && m.lender && m.src != m.dst && m.size <= recv.buf.size() &&
         opts_.races == RaceCheck::off && !reached_beside_programs(m);
}

// Code beside the programs that may touch the memory of m's ends: active-message handlers, tasks.
bool Engine::reached_beside_programs(const Msg& m) const {
  return am_->serves(m.dst) || am_->serves(m.src) || !tasks_of_[static_cast<std::size_t>(m.dst)].empty() ||
         !tasks_of_[static_cast<std::size_t>(m.src)].empty();
}

// ---------------------------------------------------------------- matches known before the arrival

// A message is matched on its arrival, by the first receive of its destination's posted queue
// that takes it (docs/model.md 2.5); its bytes go into that receive's buffer then (deliver). Often
// the match is certain long before: the receive is posted and waited for (so it can be neither
// cancelled nor let go before it completes), it names its source, and no message of that source
// that it takes is on its way ahead of this one. Nothing else can take it first: a pair's
// messages never overtake one another (model.md 2.2, 2.10), a later message from another source
// does not match it, and receives posted later queue behind it. Then the bytes are copied at that
// point (fix_match) instead of at the arrival, by the Copier, beside the event loop on another host
// core, or at once on one: the event loop makes no copy at the arrival, and a message whose send
// completes before it arrives (the sender may then reuse its buffer) needs no copy of its own
// (keep_payload), which was a third of the copies of the Figure-9 all-to-all at 16 KB. The
// receive's buffer is the program's only once the wait returns, so nobody can tell when the bytes
// went in; the arrival, the send's completion and the release of the message wait for the copy,
// and so does each VP whose memory a copy touches before its code runs again (copies_made_for).
// Every event, time, match and trace_hash is what it was: only where the host makes the copy moves.
// (A program that writes into a buffer while a send of its own still reads it, an error as in MPI,
// may have either bytes delivered when its code runs beside the copy; a correct one cannot tell.)

void Engine::on_the_way(Msg& m) {
  Way& to = ways_[static_cast<std::size_t>(m.dst)];
  m.way_prev = to.tail;
  m.way_next = nullptr;
  (to.tail ? to.tail->way_next : to.head) = &m;
  to.tail = &m;
  ++to.count;
  to.fixable += fixable(m);
  m.on_the_way = true;
}

void Engine::off_the_way(Msg& m) {
  Way& to = ways_[static_cast<std::size_t>(m.dst)];
  (m.way_prev ? m.way_prev->way_next : to.head) = m.way_next;
  (m.way_next ? m.way_next->way_prev : to.tail) = m.way_prev;
  --to.count;
  to.fixable -= fixable(m);
  m.on_the_way = false;
}

// A receive that its VP waits for in a call of the program's own (wait, waitall): the VP is
// blocked until it completes, so nothing but its message can take it away.
static bool waited_for(const Vp& by, const Op& r) {
  return r.awaited && by.waits_for_all && !by.is_task() && !by.instant_member && !by.continues_ahead;
}

// Message m has just been handed to the network. With a receive its destination waits for taking
// it, the match is certain unless a message of the same pair that the receive also takes is on
// its way ahead of m. The walk along the rank's messages on their way is cut short: a rank with
// many of them gets its matches fixed when it next waits (fix_inbound). A message of any size is
// fixed for a receive whose program may go on past its wait (go_on_past_receive).
void Engine::fix_at_send(Msg& m) {
  constexpr std::uint32_t kLongestWalk = 64;
  Vp& to = *vps_[static_cast<std::size_t>(m.dst)];
  const bool goes_on = to.in_receive_wait && may_go_on_past_receive(to);
  if (!fixable(m, goes_on)) return;
  const Way& way = ways_[static_cast<std::size_t>(m.dst)];
  if (to.state != Vp::State::blocked || to.block != Vp::Block::ops || way.count > kLongestWalk) return;
  Op* r = to.mailbox.taker(m);
  if (!r || r->vp != &to || !waited_for(to, *r)) return;
  for (const Msg* x = way.head; x != &m; x = x->way_next)
    if (x->src == m.src && Mailbox::matches(*r, *x)) return;
  fix_match(m, *r, goes_on);
  if (goes_on && r->fixed_msg == &m && --past_receive(to).unfixed == 0) go_on_past_receive(to);
}

// v is about to wait for receives of its own: each message on its way to v, in the order they
// were sent, is the certain match of the receive that would take it now, unless an earlier message
// would take that receive too (each receive is claimed by the first message that reaches it here,
// fixed or not). With `any_size`, for a program that may go on past its wait, a message of any size.
void Engine::fix_inbound(Vp& v, bool any_size) {
  const Way& way = ways_[static_cast<std::size_t>(v.rank)];
  if ((way.fixable == 0 && !any_size) || v.is_task()) return;
  const std::uint32_t look = ++fix_looks_;
  for (Msg* x = way.head; x; x = x->way_next) {
    Op* r = v.mailbox.taker(*x);
    if (!r || r->fix_look == look) continue;
    r->fix_look = look;
    if (fixable(*x, any_size) && !x->fixed_recv && !r->fixed_msg && r->vp == &v && waited_for(v, *r))
      fix_match(*x, *r, any_size);
  }
}

void Engine::fix_match(Msg& m, Op& r, bool any_size) {
  if (fixable(m, any_size) && r.src != any_source && !r.matched && !r.awaiting_data) fix(m, r);
}

// A rendezvous's data (docs/model.md 2.16) has its receive from the moment the request to send is
// matched (clear_to_send): the clear to send's way back and the data's own way through the network
// are the copy's time. Until the data has left, the sender's send is not complete, so its buffer
// stays as it is; a receive waiting for the data can be neither cancelled nor matched again.
void Engine::fix_rendezvous(Msg& data, Op& r) {
  if (data.size >= kFixFrom) fix(data, r);
}

// m is certain to be r's: its bytes go into r's buffer now, beside the event loop.
void Engine::fix(Msg& m, Op& r) {
  if (m.size > r.buf.size() || reached_beside_programs(m)) return;
  const std::span<const std::byte> bytes = m.bytes();
  if (bytes.empty() && m.size > 0) return;  // phantom
  m.fixed_recv = &r;
  r.fixed_msg = &m;
  m.copy_no = bytes.empty() ? 0 : copier_.copy(r.buf.data(), bytes.data(), bytes.size());
  copying_between(m, m.copy_no);
  // Counted where every host fixes it: not a short one fixed for a program that goes on past it.
  delivered_early_ += m.size >= kFixFrom;
}

// Only after a wait failed (a message longer than another receive's buffer) can the program let
// go of a receive whose match was fixed: the message goes its way as any other, and is copied
// again where it matches (from the receive's buffer, if its send has completed meanwhile and left
// it no bytes of its own). The receive's buffer keeps what was copied into it.
void Engine::unfix(Op& r) {
  Msg& m = *r.fixed_msg;
  copier_.wait(m.copy_no);
  if (!m.lender && m.payload.empty() && !opts_.phantom_payloads)
    m.payload.assign(r.buf.begin(), r.buf.begin() + static_cast<std::ptrdiff_t>(m.size));
  m.fixed_recv = nullptr;
  m.copy_no = 0;
  r.fixed_msg = nullptr;
}

Op* Engine::new_op() {
  Op* op = ops_.get();
  std::destroy_at(op);  // made anew in place, as new_msg does
  ::new (static_cast<void*>(op)) Op;
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

Group Engine::make_group(Vp& v, std::uint64_t parent_ctx, std::vector<int> members) {
  return groups_.make(v.groups_made, parent_ctx, std::move(members));
}

Group Engine::make_group_with_key(Vp& v, std::uint64_t parent_ctx, std::vector<int> members, std::uint64_t key) {
  return groups_.make_with_key(v.groups_made, parent_ctx, std::move(members), key);
}

Group Engine::make_group_like(Vp& v, std::uint64_t parent_ctx, const Group& like) {
  return groups_.make_like(v.groups_made, parent_ctx, resolve(v, like));
}

Group Engine::split(Vp& v, const Group& parent, int color, int key) {
  const GroupData& g = resolve(v, parent);
  const int n = static_cast<int>(g.members.size());
  const int me = GroupTable::member_index(g, v.rank);
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
  return groups_.split(v.groups_made, g, me, color, known);
}

// ---------------------------------------------------------------- point-to-point

Op* Engine::isend(Vp& v, const Group& g, int dst, int tag, std::span<const std::byte> data, bool synchronous) {
  enter(v);
  const GroupData& gd = resolve(v, g);
  const int world_dst = GroupTable::to_world(gd, dst, "destination");
  if (tag < 0) throw UsageError(fmt::format("send tag must be >= 0 (got {})", tag));
  Op* op = post_send(v, world_dst, tag, gd.ctx, data, synchronous);
  return op;
}

// A synchronous send's message is acknowledged by its receiver at the match, as MPI libraries do
// (docs/model.md 2.5): a 0-byte message back, whose set-up the receiving CPU pays like a clear to
// send's.
void Engine::acknowledge(Vp& v, const Msg& m, Time at, std::uint64_t order) {
  const Time handed = at + machine_.send_cost(v.rank, 0);
  note_clock(v);
  v.clock = std::max(v.clock, at) + (handed - at);
  Msg* ack = make_msg(v.rank, m.src, 0, 0, 0);  // never matched: it is handled on arrival
  ack->proto = Msg::Proto::sync_ack;
  ack->sync_op = m.sync_op;
  ack->acked = m.id;
  hand_over(ack, at, handed, order);
}

// The acknowledgement is back at the sender at t: its CPU takes it (the receive cost of a 0-byte
// message, charged to its clock like a handler), and the send completes then, once its last
// packet has left too.
void Engine::on_acknowledged(Msg& ack, Time t) {
  Op* op = ack.sync_op;
  free_msg(&ack);
  if (!op) [[unlikely]]
    throw_corrupt_swap("an acknowledgement of no send");
  Vp& v = *op->vp;
  const Time taken = t + machine_.recv_cost(v.rank, 0);
  note_clock(v);
  v.clock = std::max(v.clock, t) + (taken - t);
  synchronized(op, taken);
}

// A synchronous send completes at the later of its last packet leaving and its acknowledgement
// (a held one: and its receive's completion).
void Engine::synchronized(Op* op, Time t) {
  op->matched_at = t;
  if (op->left == kNever) return;
  op->done = std::max(op->left, t);
  if (op->dropped) return free_op(op);
  Vp& v = *op->vp;
  if (op->awaited && v.state == Vp::State::blocked) queue_.push(op->done, v.order, Ev::resume, &v, v.token);
}

// Without buffering in the network interface (NetworkParams::send_holds_until_received) a send is
// synchronous with the receive's completion: it waits as a synchronous send waits for the match.
void Engine::hold_send(Op* op, Msg* m) {
  op->synchronous = true;
  ++op->unreceived;
  m->held_op = op;
}

// A receive's or a handler's end frees the receive-buffer space its message held (docs/model.md
// 2.7); in a split run every other process's copy of the network frees it too (receipt_here).
void Engine::release_buffer(const Msg& m, Time t) {
  if (network_->release_buffer(m, t) && partition_) [[unlikely]]
    receipt_here(m, t, Receipt::Kind::buffer_freed);
}

void Engine::on_received(Op* op, Time t) {
  op->received = std::max(op->received, t);
  if (--op->unreceived > 0) return;  // a multicast waits for its last branch
  synchronized(op, op->received);
}

Msg* Engine::make_msg(int src, int dst, int tag, std::uint64_t ctx, std::size_t size) {
  Msg* m = new_msg();
  // A split run numbers its messages when the processes meet at the window's end (partition.cpp).
  m->id = partition_ ? 0 : next_msg_id_++;
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

void Engine::hand_over(Msg* m, Time start, Time handed, std::uint64_t order) {
  // A split run numbers the window's messages when the processes meet (partition.cpp).
  if (partition_) [[unlikely]]
    return handed_here_.push_back(HandedHere{m, Stamp{now_, order, place_now_.step}, start, handed,
                                             instruments_.hold_sent(*m), false, 0, order_at_instant(order)});
  instruments_.handed_over(*m, start, handed);
  to_network(m, start, handed, now_);
}

void Engine::to_network(Msg* m, Time start, Time handed, Time sent_at) {
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
  if (partition_) [[unlikely]]
    return network_->post_sent_at(m, handed, sent_at);
  network_->post(m, handed);
}

// A message whose CPU costs alone pass the time limit stops the run before any of its
// costs is computed unchecked (checked_time.hpp, part 2). In a handler (an active-message reply)
// the handler's failure report carries it.
void Engine::check_message_time(int src, int dst, std::size_t bytes) {
  if (bytes < fits_below_) return;
  const std::string why = check_message_cost(machine_, src, dst, bytes, opts_.time_limit);
  if (why.empty()) {
    // A message's CPU costs never shrink as it grows (non-negative costs, saturating sums), so with
    // the same costs on every node a size that fits says that every smaller one does: most checks
    // then end here, without the cost sums and the string of check_message_cost. Sizes beyond
    // 2^48 bytes are left out, where a packet count's rounding could wrap.
    if (machine_.node_costs.empty() && bytes < (std::size_t{1} << 48)) fits_below_ = std::max(fits_below_, bytes + 1);
    return;
  }
  if (am_->in_handler()) throw UsageError(time_limit_report(opts_.time_limit, why));
  abort_run(time_limit_report(opts_.time_limit, why));
  throw Aborted{};
}

Op* Engine::post_send(Vp& v, int dst, int tag, std::uint64_t ctx, std::span<const std::byte> data, bool synchronous) {
  // A VP that an instant let go on sends only after its program ran, in its turn of the rank order.
  if (v.instant_member) [[unlikely]]
    abort_run(fmt::format("internal error: rank {} sent at t={} ps while its instant's programs were still to run "
                          "(please report this with the command line)",
                          v.rank, now_));
  check_message_time(v.rank, dst, data.size());
  const SendProtocol protocol = send_protocol(v, dst, ctx, data.size());
  Msg* m = make_msg(v.rank, dst, tag, ctx, data.size());
  Op* op = new_op();
  op->engine = this;
  op->kind = Op::Kind::send;
  op->owner = v.rank;
  op->vp = &v;
  // An active message's send completes at once (its caller's buffer is gone): it keeps a copy. The
  // runtime's own messages (a split's colors and keys) carry their bytes with phantom payloads too.
  if ((ctx & kAmCtx) || (is_internal(ctx) && opts_.phantom_payloads))
    m->payload.assign(data.begin(), data.end());
  else if (!opts_.phantom_payloads && !data.empty()) m->lent = data, m->lender = op, op->lent = m;
  op->msg_id = m->id;
  op->dst = dst;
  op->size = m->size;
  m->send_op = op;
  const bool held = machine_.net.send_holds_until_received && !(ctx & kAmCtx);
  if (held) hold_send(op, m);
  const Time start = v.clock;
  if (!(ctx & kAmCtx)) {
    Traffic& sent = traffic_of(v.rank);
    ++sent.messages_sent;
    sent.bytes_sent += m->size;
  }
  instruments_.send_posted(v.rank, *m);
  const bool rendezvous = protocol == SendProtocol::rendezvous || protocol == SendProtocol::no_space;
  if (!rendezvous) {
    // A synchronous send completes when its acknowledgement is back too (a rendezvous is matched
    // before its data leaves, so only an eager one needs one); a held one completes later still.
    if (synchronous && !held) op->synchronous = true, m->synchronous = true, m->sync_op = op;
    m->buffered = protocol == SendProtocol::buffered;  // its receive frees the space
    v.clock += machine_.send_cost(v.rank, m->size);
    if (protocol == SendProtocol::at_window_end) [[unlikely]]
      return await_protocol(v, op, m, start);
    hand_over(m, start, v.clock, am_->in_handler() ? network_event_place_ : v.order);
    if (fixes_matches_ && !(ctx & kAmCtx)) {
      on_the_way(*m);
      if (fixable(*m) || receives_go_on_) fix_at_send(*m);  // the common exit inline
    }
    if (protocol == SendProtocol::buffered) sync(v);  // the send asked for space (send_protocol)
    return op;
  }
  // Rendezvous (docs/model.md 2.16): only the request to send leaves now, a 0-byte message with the
  // envelope; the data waits, with its payload, for the receiver's clear to send.
  Msg* rts = request_to_send(op, m);
  v.clock += machine_.send_cost(v.rank, 0);
  hand_over(rts, start, v.clock, v.order);
  if (fixes_matches_) on_the_way(*rts);             // a receive it matches takes no message of the pair after it
  if (protocol == SendProtocol::no_space) sync(v);  // the send asked for space (send_protocol)
  return op;
}

Msg* Engine::request_to_send(Op* op, Msg* m) {
  op->rendezvous = true;
  m->proto = Msg::Proto::rdv_data;
  Msg* rts = make_msg(m->src, m->dst, m->tag, m->ctx, 0);
  rts->proto = Msg::Proto::rts;
  rts->rdv = m;
  rts->vc = m->vc;  // the request's match is the send's match (race detection)
  return rts;
}

// Flow control (docs/model.md 2.16): eager when the message is at most eager_limit bytes and, with a
// bounded buffer, fits the receiver's free buffer at the sender's clock (reserved then). To read the
// buffer at that virtual time, the sender first lets the event loop catch up with its clock, and
// after such a send it does so again: its next call is made at the send's end in the sequential
// order. That is what lets a split run decide the send at the window's end (await_protocol): the
// send's CPU time is at least the lookahead, so its VP makes no call in that window either way.
// Active messages (handled on arrival) and 0-byte messages need no buffer: always eager, they
// reserve no space and free none.
Engine::SendProtocol Engine::send_protocol(Vp& v, int dst, std::uint64_t ctx, std::size_t size) {
  const NetworkParams& net = machine_.net;
  if (!net.flow_control() || (ctx & kAmCtx) || size == 0) return SendProtocol::eager;
  if (size > static_cast<std::uint64_t>(net.eager_limit)) return SendProtocol::rendezvous;
  if (net.recv_buffer < 0) return SendProtocol::eager;
  if (partition_ && am_->in_handler()) [[unlikely]]
    refuse_call("a send that asks for receive-buffer space, from an active-message handler,");
  sync(v);
  // In a split run the other processes' sends of this window take space at dst too.
  if (partition_) [[unlikely]]
    return SendProtocol::at_window_end;
  return network_->reserve_buffer(dst, size) ? SendProtocol::buffered : SendProtocol::no_space;
}

// The receive `op` of v has matched the request to send `rts` at virtual time `at`: v's CPU takes
// the request (the receive cost of a 0-byte message) and sends the clear to send (the send cost of
// one), charged to its clock like an active-message handler (docs/model.md 7). The data will
// complete op directly: it needs no buffer space, and its matching cost is the request's.
void Engine::clear_to_send(Vp& v, Op* op, Msg* rts, Time at, std::uint64_t order) {
  Msg* data = rts->rdv;
  data->rdv_recv = op;
  data->examined = rts->examined;
  op->awaiting_data = true;
  if (fixes_matches_) fix_rendezvous(*data, *op);
  op->msg_id = data->id;
  const Time handed = at + machine_.recv_cost(v.rank, 0) + machine_.send_cost(v.rank, 0);
  note_clock(v);
  v.clock = std::max(v.clock, at) + (handed - at);
  Msg* cts = make_msg(v.rank, rts->src, 0, 0, 0);  // never matched: it is handled on arrival
  cts->proto = Msg::Proto::cts;
  cts->rdv = data;
  instruments_.cleared_to_send(*rts, at);
  free_msg(rts);
  hand_over(cts, at, handed, order);
}

// The clear to send is back at the sender at t: its CPU takes it and sends the data (receive cost
// of a 0-byte message, send cost of the data), charged to its clock like a handler. The send
// request completes when the data's last packet has left (on_send_done).
void Engine::on_clear_to_send(Msg& cts, Time t) {
  Msg* data = cts.rdv;
  Vp& v = data->send_op ? *data->send_op->vp : *vps_[static_cast<std::size_t>(cts.dst)];  // the sender's VP or task
  const Time handed = t + machine_.recv_cost(v.rank, 0) + machine_.send_cost(v.rank, data->size);
  note_clock(v);
  v.clock = std::max(v.clock, t) + (handed - t);
  free_msg(&cts);
  hand_over(data, t, handed, network_event_place_);  // in the clear to send's arrival
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
  instruments_.delivered(m, t);
  tell_matched(*op);
}

// A receive has its message: the VP awaiting it hears which (Vp::matched_awaited, for waitall)
// and, if blocked, wakes.
void Engine::tell_matched(Op& op) {
  if (!op.awaited) return;
  Vp& v = *op.vp;
  v.matched_awaited.push_back(&op);
  if (v.state == Vp::State::blocked) wake_at_instant(v);
}

Op* Engine::irecv(Vp& v, const Group& g, int src, int tag, std::span<std::byte> buf, bool truncating) {
  enter(v);
  const GroupData& gd = resolve(v, g);
  const int world_src = src == any_source ? any_source : GroupTable::to_world(gd, src, "source");
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
  op->call = v.last_recv_call = ++v.home->recv_calls;  // one numbering per rank: its tasks' receives count too
  if (src == any_source && !forced_.empty()) {
    op->src = forced_.source(v.rank, op->call, src, op->group.get());
    op->forced = op->src != any_source;
  }
  // The earliest-arrived matching message that is already here; anything arriving later is later.
  if (Msg* m = v.home->mailbox.post(op)) {
    instruments_.matched(v.rank, *op, *m, v.label);  // the match is decided here, also for a request to send
    if (partition_) [[unlikely]]
      instruments_.took_waiting(*m);  // one process takes none ahead of the sequential order
    if (m->proto == Msg::Proto::rts) {
      clear_to_send(v, op, m, v.clock, v.order);
    } else {
      op->matched = m;
      deliver(*m, *op, true);
      if (m->synchronous) acknowledge(v, *m, v.clock, v.order);
    }
  }
  return op;
}

void Engine::on_send_done(Msg& m, Time t) {
  if (partition_) [[unlikely]]
    acts_at(now_);  // in every process: the sender's may go on
  Op* op = m.send_op;
  if (!op) return;  // a request or clear to send: nobody waits for it to leave
  m.send_op = nullptr;
  if (op->synchronous) {
    op->left = t;
    if (op->matched_at == kNever) return;  // synchronized() completes it
    t = std::max(t, op->matched_at);
  }
  op->done = t;
  if (op->dropped) {
    free_op(op);
    return;
  }
  Vp& v = *op->vp;
  if (op->awaited && v.state == Vp::State::blocked) queue_.push(t, v.order, Ev::resume, &v, v.token);
}

void Engine::on_arrival(Msg& m, Time t) {
  if (partition_) [[unlikely]]
    acts_at(now_);  // in every process: the receiver's may act on it
  if (is_am_request(m.ctx)) {
    place_ends_ = partition_ != nullptr;  // its handler may fail in its node's process (enter_place)
    if (!here(m.dst)) [[unlikely]]
      return free_msg(&m);  // its destination's process runs the handler
    instruments_.handler_starts(m);
    return am_->on_request(m, t);
  }
  if (!here(m.dst)) [[unlikely]]
    return free_msg(&m);  // its destination's process receives it
  if (partition_ || stamps_records_) [[unlikely]]
    m.arrival_order = place_now_.order;  // a failure at this instant may come before it (arrived_at)
  if (m.proto == Msg::Proto::cts) return on_clear_to_send(m, t);
  if (m.proto == Msg::Proto::sync_ack) return on_acknowledged(m, t);
  if (m.proto == Msg::Proto::rdv_data) return on_rendezvous_data(m, t);
  Vp& v = *vps_[static_cast<std::size_t>(m.dst)];
  if (fixes_matches_ && m.on_the_way) off_the_way(m);
  // Matching cost (docs/model.md 2.5) counts in virtual time (Mailbox::arrive).
  if (Op* op = v.mailbox.arrive(m, t)) {
    instruments_.matched(v.rank, *op, m, v.label);
    // The receive's poster (the rank's VP or one of its tasks) takes it.
    Vp& by = *op->vp;
    if (m.proto == Msg::Proto::rts) {
      if (op->fixed_msg) deliver(m, *op);  // reports the broken promise: a request to send is never fixed
      return clear_to_send(by, op, &m, std::max(t, op->posted), network_event_place_);  // in its arrival
    }
    op->matched = &m;
    deliver(m, *op);
    // A receive the VP posted ahead of the event loop matches at its posting time, not before.
    if (m.synchronous) acknowledge(by, m, std::max(t, op->posted), network_event_place_);  // in its arrival
    instruments_.delivered(m, t);
    tell_matched(*op);
    return;
  }
  if (m.fixed_recv) [[unlikely]]
    abort_run(fmt::format("internal error: message #{} from {} to {} found no receive, though one was known to "
                          "be its match (please report this with the command line)",
                          m.id, m.src, m.dst));
  auto probing = [&](const Vp& w) {
    return w.state == Vp::State::blocked && w.block == Vp::Block::probe && m.ctx == w.probe_ctx &&
           (w.probe_src == any_source || w.probe_src == m.src) && (w.probe_tag == any_tag || w.probe_tag == m.tag);
  };
  if (probing(v)) return wake_at_instant(v);
  for (Vp* t : tasks_of_[static_cast<std::size_t>(v.rank)])
    if (probing(*t)) return wake_at_instant(*t);
}

// Demultiplexing per packet (docs/model.md 2.18): a packet of m that does not continue the message
// its node took last is matched again, with the search of an arrival at t (model.md 2.5), paid with
// m's receive. Messages handled on arrival (active messages, clear to send) and rendezvous data (it
// goes to the receive its request matched) are not searched for.
void Engine::on_packet_resumed(Msg& m, Time t) {
  if (is_am_request(m.ctx) || m.proto != Msg::Proto::eager || !here(m.dst)) return;
  const std::uint64_t e = vps_[static_cast<std::size_t>(m.dst)]->mailbox.examined_by(m, t);
  constexpr std::uint64_t most = std::numeric_limits<std::uint32_t>::max();  // times 1 ms still fits Time
  m.examined = static_cast<std::uint32_t>(std::min<std::uint64_t>(m.examined + e, most));
  m.resumed = static_cast<std::uint32_t>(std::min<std::uint64_t>(m.resumed + 1ULL, most));
}

Status Engine::complete_recv(Vp& v, Op*& op, Time waiting_since) {
  ++v.actions;
  Msg* m = op->matched;
  Status st = received_status(*op, *m);
  st.arrival = m->arrival;
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
  Traffic& received = traffic_of(v.rank);
  ++received.messages_received;
  received.bytes_received += m->size;
  release_buffer(*m, v.clock);
  if (m->held_op) {
    queue_.push(v.clock, m->id, Ev::received, m->held_op);  // the sender hears of it then, not sooner
    m->held_op = nullptr;
  } else if (m->held_elsewhere) [[unlikely]] {
    receipt_here(*m, v.clock, Receipt::Kind::held_send);
  }
  instruments_.received(v.rank, *op, *m, start, v.clock);
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

// ---------------------------------------------------------------- time and polling

// A VP that only polls while nothing can change is a livelock (livelock.hpp). After sync(v) the
// event loop has committed everything up to v's clock; an empty queue then means only v can still
// act. If v goes on polling so, kQuietPollsOfALivelock times without acting in between, the run
// stops here, naming the rank, instead of spinning until the time limit.
void Engine::futile_poll(Vp& v, const Call& what) {
  if (!queue_.empty()) return v.polls.forget();
  if (!v.polls.futile(v.actions)) return;
  abort_run(livelock_report(v.rank, v.clock, what, v.label, blocked_vps()));
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
  instruments_.computed(v.rank, v.clock, dt);
  v.clock += dt;
}

}  // namespace touchstone::detail
