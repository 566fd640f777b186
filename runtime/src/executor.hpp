// Runs the VPs' code: one execution context per VP -- a fiber on the calling thread or a host
// thread (RunOptions::execution) -- and the baton that lets exactly one of them, or the scheduler,
// run at any moment. It knows nothing of virtual time, messages or the engine: whoever gives up
// the baton asks its Scheduler which context runs next. (SimGrid's context factories play this
// role: one interface over ucontext, Boost and thread contexts.) The sanitizer bookkeeping that
// fiber switches need lives here too.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "touchstone/run.hpp"

namespace touchstone::detail {

/// Decides who runs next. Called only by the baton holder.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Runs the event loop until a context can go on; returns its index, or Executor::kMain when
  /// the run is over (every context has ended).
  virtual int next() = 0;
};

class Executor {
 public:
  /// The thread that called start() and pass(kMain): the scheduler's side of the baton.
  static constexpr int kMain = -1;
  /// A context's life: body(i) runs on context i's first turn; the context ends when it returns.
  using Body = std::function<void(int)>;

  virtual ~Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Creates one context per entry of `users` (current_user() returns users[i] while context i
  /// runs). Returns how many could be created: host threads may run out, and the caller must then
  /// still let the created ones run to their end; fibers throw instead.
  virtual std::size_t start(std::vector<void*> users, Body body) = 0;
  /// Creates one more context (for a task, Proc::spawn) whose current_user() is `user`; returns its
  /// index, the next after every context created so far. Only the baton holder calls it; the
  /// context first runs when the scheduler names it. Throws std::runtime_error if it cannot.
  virtual int add(void* user) = 0;
  /// Gives up the baton from `self` (a context that blocked, or kMain to start the run) and
  /// returns when `self` holds it again: for kMain, when the scheduler says the run is over.
  virtual void pass(int self) = 0;
  /// After the run: waits for every created context to end and releases them.
  virtual void finish() = 0;
  /// Gives each of `contexts` (created by start(), suspended in pass() or not yet started) one
  /// turn at once, on up to `threads` host threads (the calling one among them), each until it
  /// gives up the baton with pass(), which then returns to the host thread that resumed it. The
  /// contexts must touch only their own state meanwhile (running_ahead() tells them that they run
  /// so). Their next turn is the scheduler's, on the calling thread, as usual. Called before the
  /// run (every context's start) and by the scheduler inside next() (the VPs of one instant).
  /// Returns false (and runs nothing) when the executor cannot move a context between host
  /// threads (one host thread per context).
  virtual bool run_ahead(std::span<const int> contexts, int threads) = 0;
  /// After the scheduler's last turn: resumes each of `contexts` (suspended in pass() and never
  /// named by the scheduler again) until it ends, on up to `threads` host threads at once, in the
  /// given order on one. Returns false (and runs nothing) when the executor cannot move a context
  /// between host threads; the caller's scheduler then names them, one after another.
  virtual bool run_rests(std::span<const int> contexts, int threads) = 0;
  /// Hands `context` (suspended in pass()) to a helper host thread, one of `threads` - 1 kept for
  /// the run, which resumes it until it passes again, while the caller goes on with the
  /// scheduler's work. The context must touch only its own state meanwhile. The scheduler calls
  /// settle(context) before it names the context again: it returns once the context has passed,
  /// having run it on the calling thread if no helper took it first. Returns false (and does
  /// nothing) when the executor cannot move a context between host threads.
  virtual bool launch(int context, int threads) = 0;
  virtual void settle(int context) = 0;
  /// A hint that `context` (suspended in pass()) will soon be resumed: an executor may start
  /// loading what its resumption reads.
  virtual void prefetch(int /*context*/) {}
  /// True on a host thread inside run_ahead, while it runs a context's code.
  static bool running_ahead();

  /// Who holds the baton: a context index or kMain.
  int current() const { return current_; }
  /// True when the calling host thread is the one that runs context i. Safe from any thread: a
  /// context's thread never changes once it has started.
  bool on_thread_of(int i) const { return std::this_thread::get_id() == threads_[static_cast<std::size_t>(i)]; }
  /// The `users` entry of the context running on the calling host thread; nullptr outside them.
  static void* current_user();
  /// The index of that context, kMain outside them. One read of a thread-local: safe in a signal
  /// handler, which names the VP a fault happened in (stacks.hpp, report_vp_faults).
  static int current_index();
  /// For the fault handler, on the thread whose context's code faulted: when that code ran at once
  /// with other contexts' (run_ahead, run_rests), waits until every context before it in the
  /// order one host thread would have run them has finished its turn, so that the fault reported
  /// is the one a single host core meets first. Returns false when one of those faulted too (its
  /// thread reports; this one must not), true when this fault is the one to report (at once
  /// outside a parallel turn, or after a few seconds should an earlier turn never finish).
  /// Async-signal-safe.
  static bool first_fault_in_order() noexcept;

 protected:
  explicit Executor(Scheduler& s) : scheduler_(s) {}
  static void set_current_user(void* user, int index);

  Scheduler& scheduler_;
  int current_ = kMain;
  std::vector<std::thread::id> threads_;  // per context: the host thread that runs it
};

/// Fibers on the calling thread, or one host thread per context with `host_cores` > 0 pinning
/// them to that many of the cores the process may use (no pinning when that is all of them). Stacks of `stack_bytes` (at least 64 KiB); the fibers' come from one
/// region with a guard page below each (stacks.hpp).
std::unique_ptr<Executor> make_executor(Execution how, std::size_t stack_bytes, int host_cores, Scheduler& s);

}  // namespace touchstone::detail
